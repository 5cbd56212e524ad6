"""The terminal driver of `irscope FILE`: Textual's Linux driver, except that leaving the app does not
wait for the key-reading thread.

Textual's input thread polls the terminal in 0.1 s selects and, once told to stop, selects 0.1 s more;
`disable_input` joins it, so quitting waited 0.1-0.2 s for nothing (measured: 173 ms of a 340 ms `q`).
When the app is exiting for good, the thread is only told to stop: pending input is flushed as before,
the terminal is restored as before, and the process ends (`os._exit` in the CLI) without it.
Suspending the app (a subprocess that wants the terminal) still joins, as it must.
"""

from __future__ import annotations

import signal
import termios

from textual.drivers.linux_driver import LinuxDriver


class PromptExitDriver(LinuxDriver):
    """LinuxDriver whose shutdown does not join the key thread."""

    def disable_input(self) -> None:
        if not getattr(self._app, "_exit", False):
            super().disable_input()
            return
        try:
            if not self.exit_event.is_set():
                signal.signal(signal.SIGWINCH, signal.SIG_DFL)
                self._disable_mouse_support()
                self.exit_event.set()  # left set: the thread ends after its current select
                try:
                    termios.tcflush(self.fileno, termios.TCIFLUSH)
                except termios.error:
                    pass
        except Exception:  # as Textual's own: leaving must not fail on a terminal that went away
            pass


def driver_for(platform_driver: type) -> type:
    """The driver `irscope FILE` runs with: ours where Textual would pick its Linux driver."""
    return PromptExitDriver if platform_driver is LinuxDriver else platform_driver
