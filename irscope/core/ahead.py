"""Compile ahead: compile each launch while the user's file is still running.

Without a GPU, irscope learns a kernel's arguments by running the user's file in Triton's interpreter, and
only then compiles. The moment a launch is captured its specialization is known, so the compile (and, for
NVIDIA, the disassembly by nvdisasm, ~0.4 s of fixed start-up) can start at once and overlap the rest of the
file's run. A thread would not overlap: Triton's code generator and the interpreter both hold the GIL. A
forked child does, and it inherits the kernel objects, so nothing is pickled or imported again.

The child only fills caches (Triton's own, and irscope's SASS cache beside it) and exits without running any
of the parent's clean-up. The parent then compiles exactly as before and gets a cache hit, so what it shows
is what Triton's compiler wrote, whether or not a child helped. Anything that goes wrong in a child (a
compile error, a crash, a kill) only means the parent does the work itself.

`IRSCOPE_COMPILE_AHEAD=0` turns it off.
"""

from __future__ import annotations

import atexit
import gc
import os
import select
import signal
import threading
import time
import warnings
from dataclasses import dataclass, field

from .toolchain import disassemble
from .triton_compat import (JITFunction, Specialized, Target, compile_specialized, in_triton_cache,
                            remember_triton_key, restore_unpatched_triton, specialize)

# What a child writes to its pipe as it gets there.
COMPILED = "c"       # the compilation is in Triton's cache
DISASSEMBLED = "s"   # the SASS is in irscope's cache (NVIDIA)

# A child that has not reached a step by then is killed and the parent does the work itself. Generous:
# it only guards against a child that hangs, which nothing here is known to cause.
WAIT_LIMIT_S = 600.0


def compilation_key(jit: JITFunction, target: Target, spec: Specialized) -> tuple:
    """One compilation: the same kernel object, target and specialization (compile.py memoizes on it too)."""
    return (id(jit), target.name, spec.cache_key())


@dataclass
class _Child:
    pid: int
    fd: int
    jit: JITFunction  # held so that no other kernel object can take its id() while the key is in use
    reached: set[str] = field(default_factory=set)
    finished: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


_children: dict[tuple, _Child] = {}
_considered: dict[tuple, JITFunction] = {}  # every key start() has looked at (the kernel held, as in _Child)
_registry_lock = threading.Lock()


def enabled() -> bool:
    return hasattr(os, "fork") and os.environ.get("IRSCOPE_COMPILE_AHEAD", "1") != "0"


def _slots() -> int:
    """While the file runs it keeps one core busy; the children get the others (at least one)."""
    return max(1, (os.cpu_count() or 2) - 1)


def start(jit: JITFunction, args: tuple, kwargs: dict, target: Target) -> None:
    """Begin compiling this launch in a child, if a core is free and nobody has begun it already.

    Called from inside the user's run, at the launch: never raises (a launch irscope cannot specialize
    here is dealt with, and reported, when the parent compiles it)."""
    if not enabled():
        return
    try:
        spec = specialize(jit, args, kwargs, target)
        key = compilation_key(jit, target, spec)
        if key in _considered:  # a file that launches the same thing in a loop pays this once
            return
        _considered[key] = jit
        if in_triton_cache(jit, spec, target):
            return  # a reopen: the parent's own compile is a cache hit, no help needed
    except Exception:
        return
    with _registry_lock:
        _reap_finished()
        busy = sum(1 for child in _children.values() if not child.finished and DISASSEMBLED not in child.reached)
        if busy >= _slots():
            return
        read_end, write_end = os.pipe()
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns about fork() in a process with threads (torch's, Textual's), since the
                # child may need a lock another thread held at the fork; _child takes none such.
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except OSError:  # no memory or no process slot for a copy: the parent compiles, as without this
            os.close(read_end)
            os.close(write_end)
            return
        if pid == 0:  # the child: never returns
            os.close(read_end)
            _child(write_end, jit, spec, target)
        os.close(write_end)
        _children[key] = _Child(pid, read_end, jit)


def _child(pipe: int, jit: JITFunction, spec: Specialized, target: Target) -> None:
    """Compile, disassemble, report each step, exit. Runs in the forked copy of the process.

    Its stdin/stdout/stderr go to /dev/null: a terminal UI owns the real ones. It uses no lock another
    thread could have held at the fork: the interpreter lock is the forking thread's own (re-entrant), and
    compile.py's locks are not taken here."""
    code = 1
    gc.disable()  # a collection would touch every object, copying the parent's whole heap page by page
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        restore_unpatched_triton()  # the capture's patches of JITFunction are in force at the fork
        remember_triton_key()
        compiled = compile_specialized(jit, spec, target)
        os.write(pipe, COMPILED.encode())
        if target.is_nvidia:
            disassemble(compiled.asm["cubin"])
        os.write(pipe, DISASSEMBLED.encode())
        code = 0
    except BaseException:  # noqa: BLE001 - whatever happens, the parent does the work itself
        pass
    finally:
        os._exit(code)


def wait(key: tuple, step: str) -> None:
    """Block until the child working on `key` has reached `step` or is gone; return at once if none is."""
    child = _children.get(key)
    if child is None:
        return
    with child.lock:
        deadline = time.monotonic() + WAIT_LIMIT_S
        while step not in child.reached and not child.finished:
            left = deadline - time.monotonic()
            try:
                ready, _, _ = select.select([child.fd], [], [], max(0.0, left))
                data = os.read(child.fd, 16) if ready else None
            except (OSError, ValueError):  # closed under us: the process is exiting (_stop_all)
                return
            if data is None:
                _stop(child)
                return
            if not data:
                _finish(child)
            child.reached.update(data.decode("ascii", "replace"))


def _finish(child: _Child) -> None:
    if child.finished:
        return
    child.finished = True
    os.close(child.fd)
    try:
        os.waitpid(child.pid, 0)
    except ChildProcessError:
        pass


def _stop(child: _Child) -> None:
    if not child.finished:
        try:
            os.kill(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _finish(child)


def _reap_finished() -> None:
    """Collect children that have exited, without waiting for any (one being waited on is left alone)."""
    for child in _children.values():
        if child.finished or not child.lock.acquire(blocking=False):
            continue
        try:
            try:
                pid, _status = os.waitpid(child.pid, os.WNOHANG)
            except ChildProcessError:
                pid = child.pid
            if pid == child.pid:
                _drain(child)
                child.finished = True
                os.close(child.fd)
        finally:
            child.lock.release()


def _drain(child: _Child) -> None:
    while True:
        ready, _, _ = select.select([child.fd], [], [], 0)
        data = os.read(child.fd, 16) if ready else b""
        if not data:
            return
        child.reached.update(data.decode("ascii", "replace"))


@atexit.register
def _stop_all() -> None:
    """A run that ends before its children (`dump --stage source`, Ctrl-C) leaves none behind."""
    for child in list(_children.values()):
        _stop(child)


def progress(key: tuple) -> str | None:
    """None if no child was started for `key`; else the steps it has been heard to reach ("cs": both)."""
    child = _children.get(key)
    return None if child is None else "".join(sorted(child.reached, key=(COMPILED + DISASSEMBLED).find))


def running() -> list[int]:
    """The process ids of the children not known to have exited."""
    return [child.pid for child in _children.values() if not child.finished]
