"""A compile child (engine/compile/ahead.py) as a process: what the parent knows of it, whether it still makes
progress, and how it is ended and collected."""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from dataclasses import dataclass, field

from irscope.engine.triton_compat import JITFunction


@dataclass
class Child:
    pid: int  # also its process group: ptxas and nvdisasm run in it
    fd: int
    jit: (
        JITFunction  # held so that no other kernel object can take its id() while the key is in use
    )
    last_step: str
    reached: set[str] = field(default_factory=set)
    finished: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


def finish(child: Child) -> None:
    """Close the pipe and collect the exit of a child that has exited or is about to."""
    if child.finished:
        return
    child.finished = True
    os.close(child.fd)
    try:
        os.waitpid(child.pid, 0)
    except ChildProcessError:
        pass


def stop(child: Child, grace: float = 0.5) -> None:
    """End a child and what it runs (ptxas, nvdisasm): SIGTERM lets it remove its temporary files."""
    if child.finished:
        return
    try:
        os.killpg(child.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            pid, _status = os.waitpid(child.pid, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == child.pid:
            break
        time.sleep(0.01)
    try:
        os.killpg(child.pid, signal.SIGKILL)  # whatever is left of its group
    except (ProcessLookupError, PermissionError):
        pass
    finish(child)


def drain(child: Child) -> None:
    while True:
        ready, _, _ = select.select([child.fd], [], [], 0)
        data = os.read(child.fd, 16) if ready else b""
        if not data:
            return
        child.reached.update(data.decode("ascii", "replace"))
