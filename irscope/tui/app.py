"""The irscope app: a kernel's source and its compiled stages side by side, linked line by line.

The app itself is small: it holds what the command line asked for, its default screen is the main view
(`MainScreen`, tui/main/screen.py) over the linked panes (tui/main/linked_panes.py); the screen owns
their keys and the requests to the worker process (irscope/worker: opening the file runs its `__main__`,
compiling, the analyses that need the launch). This process never imports torch or Triton. What is left
here belongs to every screen: quitting, help, plain-text notifications, the command palette and the
terminal's size.
"""

from __future__ import annotations

import gc
from typing import Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from irscope.base.textsafe import safe_text
from irscope.tui.main import MainScreen
from irscope.tui.palette import main_commands
from irscope.tui.screens import HelpScreen


class IrscopeApp(App):
    """`irscope FILE`."""

    CSS_PATH = "app.tcss"
    TITLE = "irscope"

    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="help"),
    ]

    def __init__(
        self,
        path: str,
        *,
        target: str | None = None,
        kernel: str | None = None,
        config: int | None = None,
        run_main: bool = True,
        defines: list[str] | None = None,
        arg_types: list[str] | None = None,
        file_args: list[str] | None = None,
        command: list[str] | None = None,
    ) -> None:
        super().__init__()
        self.path = path
        # what the worker's `open` is asked; -D NAME=VALUE and the argument types are parsed in the worker
        self.open_args = {
            "target": target,
            "run_main": run_main,
            "defines": list(defines or []),
            "arg_types": list(arg_types or []),
            "kernel": kernel,
            "config": config,
            "file_args": list(file_args or []),
            # `irscope -m MODULE ARGS...`: run that in place of a file (`path` is then how it is shown)
            "command": list(command) if command else None,
        }
        self._main: MainScreen | None = None

    def get_default_screen(self) -> Screen:
        self._main = MainScreen(self.path, self.open_args)
        return self._main

    @property
    def main(self) -> MainScreen:
        """The main view (the bottom of the screen stack)."""
        assert self._main is not None
        return self._main

    def notify(self, message: str, *, markup: bool = False, **kwargs) -> None:
        """Every message is plain text (a file's `x[i]` or `[M=64]` is shown as typed, never read as
        markup, whoever asks for it), with control characters written out."""
        super().notify(safe_text(str(message)), markup=False, **kwargs)

    def on_resize(self, event) -> None:
        if self._main is not None:  # told even while a dialog is in front of it
            self._main.terminal_resized(event.size)

    def on_unmount(self) -> None:
        gc.unfreeze()  # let the interpreter's shutdown free everything, as it expects
        self.close_session()

    def close_session(self) -> None:
        if self._main is not None:
            self._main.close_session()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        # the main view's commands act on it: not from behind another screen
        if screen is self._main:
            yield from main_commands(screen)
