"""Compile ahead: compile each launch while the user's file is still running.

Without a GPU, irscope learns a kernel's arguments by running the user's file in Triton's interpreter, and
only then compiles. The moment a launch is captured its specialization is known, so the compile (and, for
NVIDIA, the disassembly by nvdisasm, ~0.4 s of fixed start-up) can start at once and overlap the rest of the
file's run. A thread would not overlap: Triton's code generator and the interpreter both hold the GIL. A
forked child does, and it inherits the kernel objects, so nothing is pickled or imported again.

The child only fills caches (Triton's own, and irscope's SASS cache beside it) and exits without running any
of the parent's clean-up. The parent then compiles exactly as before and gets a cache hit, so what it shows
is what Triton's compiler wrote, whether or not a child helped. The parent touches nothing of the kernel
before its own compile (not even Triton's hash of it, which would freeze the kernel's globals as they were
at the launch): a file that changes a global after its launch gets a child's compile under the old key and
the parent's under the new one, as without this module. Anything that goes wrong in a child (a compile
error, a crash, a kill, no progress) only means the parent does the work itself.

Two things kept the first child from starting at once, and no longer do. On a first run Triton's install
hash is still being worked out (triton_compat/install_key.py): the child compiles without it and files the
result under the real key once it is in (triton_compat/key_deferred.py). And a launch that finds no core
free while the file runs (one is the file's) is queued: at the end of the run, when the file's core is free
(start_waiting), and whenever the parent waits for a child or compiles one itself, the queued launches take
the cores left free, rather than wait for the parent to compile them one after the other.

`IRSCOPE_COMPILE_AHEAD=0` turns it off.
"""

from __future__ import annotations

import atexit
import gc
import hashlib
import os
import select
import signal
import threading
import time
import warnings

from irscope.base.cpu_progress import Progress
from irscope.base.lifetime import die_with_parent_process
from irscope.engine.compile.ahead_process import Child, drain, finish, stop
from irscope.engine.toolchain import disassemble
from irscope.engine.triton_compat import (
    JITFunction,
    Specialized,
    Target,
    compile_specialized,
    key_deferred,
    prepare_compiler,
    restore_unpatched_triton,
    specialize,
    triton_cache_dir,
    triton_install_key,
    triton_key_known,
)

# What a child writes to its pipe as it gets there.
COMPILED = "c"  # the compilation is in Triton's cache
DISASSEMBLED = (
    "s"  # the SASS is in irscope's cache (NVIDIA); on AMD, or when not asked for: nothing more
)

# A child whose processes (itself, ptxas, nvdisasm) use no CPU for this long is taken to be stuck (stopped,
# or waiting on a lock it inherited): it is killed and the parent does the work itself.
STALL_LIMIT_S = 5.0
# Where progress cannot be read (no /proc), a child is given this long.
WAIT_LIMIT_S = 120.0


def compilation_key(jit: JITFunction, target: Target, spec: Specialized) -> tuple:
    """One compilation: the same kernel object, target and specialization (compile.py memoizes on it too)."""
    return (id(jit), target.name, spec.cache_key())


_children: dict[tuple, Child] = {}
_considered: dict[
    tuple, JITFunction
] = {}  # every key start() has looked at (the kernel held, as in Child)
_waiting: dict[
    tuple, tuple
] = {}  # launches that found no free core while the file ran: start_waiting's
_registry_lock = threading.RLock()  # re-entrant: _start_queued holds it around _fork


def enabled() -> bool:
    return hasattr(os, "fork") and os.environ.get("IRSCOPE_COMPILE_AHEAD", "1") != "0"


def _slots(file_running: bool = True) -> int:
    """While the file runs it keeps one core busy; the children get the others (at least one)."""
    return max(1, (os.cpu_count() or 2) - (1 if file_running else 0))


def start(
    jit: JITFunction,
    args: tuple,
    kwargs: dict,
    target: Target,
    source_text: str,
    *,
    disassemble_too: bool = True,
) -> None:
    """Begin compiling this launch in a child, if a core is free, nobody has begun it already, and irscope
    has not compiled it before from this very file (`source_text`, the file's text).

    Called from inside the user's run, at the launch: never raises (a launch irscope cannot specialize
    here is dealt with, and reported, when the parent compiles it)."""
    if not enabled():
        return
    try:
        _start(jit, args, kwargs, target, source_text, disassemble_too)
    except Exception:  # noqa: BLE001 - no descriptor, no memory, an odd argument: the parent compiles
        pass


def _start(
    jit: JITFunction,
    args: tuple,
    kwargs: dict,
    target: Target,
    source_text: str,
    disassemble_too: bool,
) -> None:
    spec = specialize(jit, args, kwargs, target)
    key = compilation_key(jit, target, spec)
    if key in _considered:  # a file that launches the same thing in a loop pays this once
        return
    _considered[key] = jit
    prepare_compiler(target)
    last_step = DISASSEMBLED if disassemble_too and target.is_nvidia else COMPILED
    # The note is keyed by Triton's install hash: while that is still being worked out (a first run), there
    # is no note to find, and waiting here for the hash would only start the child later.
    if triton_key_known() and os.path.exists(_marker(source_text, jit, target, spec, last_step)):
        return  # a reopen: the caches have it; a fork would only cost the parent page faults later
    if not _fork(key, jit, spec, target, disassemble_too, last_step, _slots()):
        _waiting[key] = (jit, spec, target, disassemble_too, last_step)


def start_waiting() -> None:
    """The file has run: its core is free. Start children for the launches that found none free while it
    ran, as far as cores are free now. The rest stay queued: each time the parent waits for a child or is
    about to compile one itself (wait), the next ones get the cores left free, so that the parent does not
    compile one after the other on one core while the others sit idle (tutorial 06: 9 s so)."""
    _start_queued(_slots(file_running=False))


def _start_queued(slots: int) -> None:
    """Start children for queued launches, in the order they were captured, while fewer than `slots` are busy."""
    with _registry_lock:
        for key, (jit, spec, target, disassemble_too, last_step) in list(_waiting.items()):
            try:
                if not _fork(key, jit, spec, target, disassemble_too, last_step, slots):
                    return
            except Exception:  # noqa: BLE001 - as in start(): the parent compiles
                _waiting.clear()
                return
            del _waiting[key]


def forget_waiting() -> None:
    """Before a file runs: nothing left waiting from a run that did not get to start_waiting."""
    _waiting.clear()


def _fork(
    key: tuple,
    jit: JITFunction,
    spec: Specialized,
    target: Target,
    disassemble_too: bool,
    last_step: str,
    slots: int,
) -> bool:
    """Fork a child for `key` if fewer than `slots` children are busy; whether one was forked."""
    with _registry_lock:
        _reap_finished()
        busy = sum(
            1
            for child in _children.values()
            if not child.finished and child.last_step not in child.reached
        )
        if busy >= slots:
            return False
        read_end, write_end = os.pipe()
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns about fork() in a process with threads (torch's, Textual's), since the
                # child may need a lock another thread held at the fork; _child takes none such.
                warnings.simplefilter("ignore", DeprecationWarning)
                parent = os.getpid()
                pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            raise
        if pid == 0:  # the child: never returns
            os.close(read_end)
            _child(write_end, jit, spec, target, disassemble_too, parent)
        os.close(write_end)
        try:
            # as the child does itself: whichever runs first, killpg finds the group
            os.setpgid(pid, pid)
        except OSError:
            pass
        _children[key] = Child(pid, read_end, jit, last_step)
    return True


def _child(
    pipe: int,
    jit: JITFunction,
    spec: Specialized,
    target: Target,
    disassemble_too: bool,
    parent: int,
) -> None:
    """Compile, disassemble, report each step, exit. Runs in the forked copy of the process.

    It leaves the terminal alone: stdin/stdout/stderr go to /dev/null, it has a process group of its own
    (Ctrl-C reaches the parent, which stops its children), and it drops the handlers and the wakeup pipe
    of the parent's event loop. It uses no lock another thread could have held at the fork: the
    interpreter lock is the forking thread's own (re-entrant), and compile.py's locks are not taken here."""
    code = 1
    gc.disable()  # a collection would touch every object, copying the parent's whole heap page by page
    try:
        # first, before a signal finds the worker's handlers; SIGTERM ends this child's temporary folders
        # and its ptxas/nvdisasm too
        signal.signal(signal.SIGTERM, _exit_cleanly)
        for number in ("SIGINT", "SIGHUP", "SIGWINCH", "SIGCONT", "SIGTSTP", "SIGTTIN", "SIGTTOU"):
            if hasattr(signal, number):
                signal.signal(getattr(signal, number), signal.SIG_DFL)
        os.setpgid(0, 0)
        # a worker killed outright takes its compile children with it; the end of the file's thread that
        # made the launch does not
        die_with_parent_process(parent)
        try:
            signal.set_wakeup_fd(-1)
        except ValueError:
            pass
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        restore_unpatched_triton()  # the capture's patches of JITFunction are in force at the fork
        with key_deferred():  # a first run: compile while Triton's install is still being hashed
            compiled = compile_specialized(jit, spec, target)
        os.write(pipe, COMPILED.encode())
        if disassemble_too and target.is_nvidia:
            disassemble(compiled.asm["cubin"])
        os.write(pipe, DISASSEMBLED.encode())
        code = 0
    except BaseException:  # noqa: BLE001 - whatever happens, the parent does the work itself
        pass
    finally:
        os._exit(code)


def _exit_cleanly(_signum, _frame) -> None:
    raise SystemExit(1)


def _marker(
    source_text: str, jit: JITFunction, target: Target, spec: Specialized, step: str
) -> str:
    """Where irscope notes that it has done `step` for this compilation of this file's text at this path (a
    copy elsewhere compiles under its own path, see triton_compat/caches.py), beside the cache that holds the
    result. A stale note (a helper imported from another file changed, the cache was cleared in part) only
    means no child: the parent then compiles as always."""
    digest = hashlib.sha256(
        "\0".join(
            (
                triton_install_key(),
                source_text,
                jit.fn.__code__.co_filename,
                jit.__name__,
                target.name,
                spec.cache_key(),
            )
        ).encode("utf-8")
    ).hexdigest()
    return os.path.join(triton_cache_dir(), "irscope", "done", f"{digest}.{step}")


def note_done(
    source_text: str, jit: JITFunction, target: Target, spec: Specialized, step: str
) -> None:
    """The parent has compiled (COMPILED) or disassembled (DISASSEMBLED) this: the next run needs no child."""
    if not enabled():
        return
    path = _marker(source_text, jit, target, spec, step)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w"):
            pass
    except OSError:  # a read-only cache: only a missed shortcut
        pass


def wait(key: tuple, step: str) -> None:
    """Block until the child working on `key` has reached `step` or is gone; return at once if none is.
    A child that makes no progress is stopped (the caller then does the work itself)."""
    child = _children.get(key)
    if child is None:
        with _registry_lock:
            queued = _waiting.pop(key, None)
        if queued is not None:  # the parent compiles it: the other cores take the next ones
            _start_queued(_slots(file_running=True))
        return
    with child.lock:
        started = time.monotonic()
        progress: Progress | None = None  # read /proc only once the child keeps the parent waiting
        while step not in child.reached and not child.finished:
            if _waiting:  # the parent is idle while it waits: every core can take a queued launch
                _start_queued(_slots(file_running=False))
            try:
                ready, _, _ = select.select([child.fd], [], [], 0.2 if _waiting else 1.0)
                data = os.read(child.fd, 16) if ready else None
            except (OSError, ValueError):  # closed under us: the process is exiting (stop_all)
                return
            if data is None:
                progress = progress or Progress(child.pid)
                if progress.stalled(STALL_LIMIT_S) or (
                    not progress.known and time.monotonic() - started > WAIT_LIMIT_S
                ):
                    stop(child)
                    return
                continue
            if not data:
                finish(child)
            child.reached.update(data.decode("ascii", "replace"))
        if child.last_step in child.reached:
            finish(child)  # it is exiting: collect it now rather than leave a zombie


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
                drain(child)
                child.finished = True
                os.close(child.fd)
        finally:
            child.lock.release()


@atexit.register
def stop_all() -> None:
    """A run that ends before its children (Ctrl-C, an error) leaves none behind, nor their files."""
    for child in list(_children.values()):
        stop(child)


def ask_all_to_stop() -> None:
    """SIGTERM every child's group and wait for none: for a worker on its way out, whose children end
    anyway when it does (die_with_parent_process) and clean up after themselves on SIGTERM (_exit_cleanly).
    A child inside a compile only sees the signal when it is back in Python, which can take a second:
    waiting for it here made `q` in the TUI wait as long."""
    for child in list(_children.values()):
        if not child.finished:
            try:
                os.killpg(child.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass


def progress(key: tuple) -> str | None:
    """None if no child was started for `key`; else the steps it has been heard to reach ("cs": both)."""
    child = _children.get(key)
    return (
        None
        if child is None
        else "".join(sorted(child.reached, key=(COMPILED + DISASSEMBLED).find))
    )


def running() -> list[int]:
    """The process ids of the children not known to have exited."""
    return [child.pid for child in _children.values() if not child.finished]
