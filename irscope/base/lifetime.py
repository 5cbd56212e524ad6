"""A process that must not outlive its parent: the worker (its front end) and compile children (the worker).

Linux's PR_SET_PDEATHSIG sends a signal the moment the parent dies, whatever killed it (SIGKILL included),
so nothing keeps running at 100% CPU after the terminal is closed. Importable without torch or Triton."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int, signum: int = signal.SIGTERM) -> None:
    """Have `signum` sent to this process when its parent dies; if the parent is already gone, send it now."""
    try:
        _prctl()(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the front end's own clean-up still applies
        return
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os.kill(os.getpid(), signum)


def die_with_parent_process(parent_pid: int, signum: int = signal.SIGUSR2) -> None:
    """As die_with_parent, for a child forked on any thread of its parent, one that may end before the child
    does. Linux sends the death signal when the *thread* that forked the child ends, not its process; the
    child then belongs to another thread of the same process (prctl(2), PR_SET_PDEATHSIG). A compile child
    forked at a launch the file made on a thread of its own was stopped when that thread ended, and the
    worker compiled the kernel again itself. Here the signal (one of its own, so that the parent's SIGTERM
    still stops the child at once) ends the child, as SystemExit so that its clean-ups run, only once its
    parent process is gone."""

    def parent_thread_ended(_signum, _frame) -> None:
        if os.getppid() != parent_pid:
            raise SystemExit(1)

    signal.signal(signum, parent_thread_ended)
    die_with_parent(parent_pid, signum)


def _prctl():
    """libc's prctl. The process's own symbols have it wherever libc is loaded (always, for Python on
    Linux), with no search: a compile child calls this first thing, and ctypes.util.find_library("c")
    costs a fresh process up to 10 ms (it asks ldconfig)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
