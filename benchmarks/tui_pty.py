"""The real `python -m irscope FILE` in a pseudo-terminal, timed from outside as a user sees it:
process start -> first paint, and `q` -> process exit (the shell prompt back), both after the kernel
is shown and while the user's file is still running in the worker.

Used by benchmarks/tui_latency.py; run alone it prints the three times for one file.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\x1b[=>]")


class PtyApp:
    """One `python -m irscope FILE` on a pty of `size` (columns, rows); its output is drained and kept
    (the app would block on a full pty otherwise)."""

    def __init__(self, path: str, size=(120, 40), env: dict | None = None) -> None:
        self.leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        python_path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
        environ = {
            **os.environ,
            "TERM": "xterm-256color",
            "COLUMNS": str(size[0]),
            "LINES": str(size[1]),
            "PYTHONPATH": python_path,
            **(env or {}),
        }
        self.started = time.perf_counter()
        # the file runs from a scratch folder, never from inside this repository
        self.child = subprocess.Popen(
            [sys.executable, "-m", "irscope", os.path.abspath(path)],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            cwd=tempfile.gettempdir(),
            env=environ,
            close_fds=True,
        )
        os.close(follower)
        self.seen = b""

    def _drain(self, wait: float) -> bool:
        """Read what the app wrote within `wait` seconds; False once the pty is closed."""
        ready, _, _ = select.select([self.leader], [], [], wait)
        if ready:
            try:
                self.seen += os.read(self.leader, 65536)
            except OSError:
                return False
        return True

    def wait_for_text(self, text: bytes, timeout: float, after: int = 0) -> float:
        """Seconds since start until `text` shows on screen (in the output after byte `after`)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if text in ANSI.sub(b"", self.seen[after:]):
                return time.perf_counter() - self.started
            if not self._drain(0.02):
                break
        raise RuntimeError(
            f"{text!r} not shown within {timeout} s; got {ANSI.sub(b'', self.seen)[-300:]!r}"
        )

    def wait_for(self, condition, timeout: float) -> None:
        deadline = time.perf_counter() + timeout
        while not condition():
            if time.perf_counter() > deadline:
                raise RuntimeError(f"gave up after {timeout} s waiting for {condition}")
            self._drain(0.02)

    def quit_seconds(self, timeout: float = 30.0) -> float:
        """Press `q`; seconds until the process has exited."""
        begin = time.perf_counter()
        os.write(self.leader, b"q")
        deadline = begin + timeout
        while self.child.poll() is None and time.perf_counter() < deadline:
            if not self._drain(0.002):
                self.child.wait(timeout=max(0.0, deadline - time.perf_counter()))
        if self.child.poll() is None:
            raise RuntimeError(f"still running {timeout} s after q")
        return time.perf_counter() - begin

    def close(self) -> None:
        if self.child.poll() is None:
            self.child.kill()
        self.child.wait()
        os.close(self.leader)


def first_paint_seconds(path: str, size=(120, 40), timeout: float = 30.0) -> float:
    """Process start -> the screen shows the file's name."""
    app = PtyApp(path, size)
    try:
        painted = app.wait_for_text(os.path.basename(path).encode(), timeout)
        app.quit_seconds()
        return painted
    finally:
        app.close()


def quit_after_load_seconds(path: str, size=(200, 50), timeout: float = 240.0) -> float:
    """`q` once the kernel is shown in every pane (an IR pane's title names its source line)."""
    app = PtyApp(path, size)
    try:
        app.wait_for_text("← source".encode(), timeout)
        # let it settle: q is measured, not the end of the first paint of the stages
        app._drain(0.3)
        return app.quit_seconds()
    finally:
        app.close()


def still_running_copy(path: str, directory: str) -> tuple[str, str]:
    """A copy of a kernel file whose `__main__` goes on after its launches: it creates a marker file,
    then sleeps for a minute (as a training loop would run on). Returns (copy, marker)."""
    marker = os.path.join(directory, "launched")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tail = f"\n    import time as _time\n    open({marker!r}, 'w').close()\n    _time.sleep(60)\n"
    if '\nif __name__ == "__main__":' not in text:
        raise RuntimeError(f"{path} has no __main__ block to extend")
    copy = os.path.join(directory, os.path.basename(path))
    with open(copy, "w", encoding="utf-8") as f:
        f.write(text.rstrip("\n") + "\n" + tail)
    return copy, marker


def quit_while_running_seconds(path: str, size=(200, 50), timeout: float = 240.0) -> float:
    """`q` while the user's file is still running in the worker (its launches done, its `__main__` not)."""
    with tempfile.TemporaryDirectory(prefix="irscope-bench-") as directory:
        copy, marker = still_running_copy(path, directory)
        app = PtyApp(copy, size)
        try:
            app.wait_for(lambda: os.path.exists(marker), timeout)
            app._drain(0.2)
            return app.quit_seconds()
        finally:
            app.close()


if __name__ == "__main__":
    kernel = sys.argv[1] if len(sys.argv) > 1 else os.path.join("kernels", "attention.py")
    print(f"first paint {first_paint_seconds(kernel):.2f} s")
    print(f"q after load {quit_after_load_seconds(kernel):.2f} s")
    print(f"q while the file runs {quit_while_running_seconds(kernel):.2f} s")
