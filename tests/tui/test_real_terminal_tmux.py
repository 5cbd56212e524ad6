"""The real `irscope FILE` in a real terminal (tmux): it opens, shows the kernel, takes keys, quits cleanly.
Skipped when tmux is not installed."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest
from conftest import ROOT

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


class Tmux:
    """A private tmux server (its own socket, no user config) running one command."""

    def __init__(self, command: str, width: int = 120, height: int = 36) -> None:
        self.socket = f"irscope-test-{os.getpid()}"
        self.run(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            str(width),
            "-y",
            str(height),
            command,
        )

    def run(self, *args: str) -> str:
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
        done = subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=30, env=env
        )
        return done.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "t", *keys)

    def wait_for(self, text: str, timeout: float = 240.0) -> str:
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{self.screen()}")

    def close(self) -> None:
        self.run("kill-server")


def test_irscope_opens_add_in_tmux_takes_keys_and_quits():
    env = " ".join(
        f"{k}={shlex.quote(v)}"
        for k, v in os.environ.items()
        if k.startswith(("TRITON_", "IRSCOPE_"))
    )
    command = (
        f"cd {shlex.quote(ROOT)} && env TERM=xterm-256color {env} {shlex.quote(sys.executable)} -m irscope "
        f"kernels/add.py --target sm_90; echo IRSCOPE-EXITED-$?; sleep 60"
    )
    tmux = Tmux(command)
    try:
        screen = tmux.wait_for("regs")  # the header, once the kernel is compiled
        assert (
            "add_kernel" in screen and "Source" in screen and "TTGIR" in screen and "PTX" in screen
        )
        assert "tl.program_id" in screen
        tmux.keys("Tab")
        tmux.keys("s")  # the TTGIR pane cycles to the next stage: LLVM IR
        tmux.wait_for("LLVM IR")
        tmux.keys("?")
        tmux.wait_for("Reading the panes")
        tmux.keys("?")  # closes help (an Escape followed at once by q would read as alt+q)
        time.sleep(0.5)
        tmux.keys("q")
        screen = tmux.wait_for("IRSCOPE-EXITED-", timeout=60)
        assert "IRSCOPE-EXITED-0" in screen
        assert "Traceback" not in screen
    finally:
        tmux.close()
