"""`[work(x) for x in items]`, each item computed in a forked copy of this process, several at a time.

`irscope report` on a file of many compilations spends most of its time, once everything is compiled, in
analyses that run one compilation at a time on one core (a program recorded in Triton's interpreter, the
bank model, the SASS's resources): adasplash's 14 compilations took 38 s there on a 2-core machine, one core
idle. A thread would not help (the interpreter holds the GIL); a forked copy inherits the compiled kernels
and the launches, so nothing is pickled on the way in, and only each result comes back (pickled, so it is
the very value the parent would have computed: tuples stay tuples).

Each item gets a copy of its own, forked from the parent as it stands: no item sees what another one's work
left behind. Within a copy, a recorded program runs on the launch's own tensors, and what it overwrote is
put back when it ends (engine/recording.py): a second program recorded on memory the first one wrote could
take another path (a lock, a count).

Anything that goes wrong in a copy (an exception, a crash, a kill, no CPU used for a while: a lock another
thread held at the fork) only means the parent computes that item itself afterwards: the result is the same
list, in order, whether or not a copy helped. The copies' standard output and error go to /dev/null, so
nothing they print reaches irscope's own output.

Nothing is forked in a process that has used a real GPU: CUDA does not work in a forked copy (on an H200 the
copies' analyses, which read the launch's tensors back from the device, came back as CUDA errors).
`IRSCOPE_JOBS=1` turns it off (any other number caps the copies running at once); a caller that asks for
`at_once=1` still gets a copy per item, one at a time, for the memory's sake.
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from irscope.base.cpu_progress import Progress
from irscope.base.lifetime import die_with_parent

Item = TypeVar("Item")

# A copy whose processes use no CPU for this long is taken to be stuck, as a compile child is.
STALL_LIMIT_S = 5.0

_throwaway = False


def throwaway() -> bool:
    """Whether this process is a copy forked_map made: it exits when its item is done, and nothing it
    changes reaches the parent."""
    return _throwaway


def available_jobs() -> int:
    """The processes worth running at once: this process's cores, capped by IRSCOPE_JOBS."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    asked = os.environ.get("IRSCOPE_JOBS", "").strip()
    if asked.isdigit() and int(asked) >= 1:
        return min(cores, int(asked))
    return cores


def copies_for(count: int) -> int:
    """How many copies forked_map runs at once for `count` items (0: it computes them here, in order).
    0 in a process that has used a real GPU: CUDA does not work in a forked copy (on a GPU the analyses
    read the launch's tensors back from the device)."""
    if count < 2 or not _can_fork():
        return 0
    jobs = min(available_jobs(), count)
    return jobs if jobs >= 2 else 0


def _can_fork() -> bool:
    """Whether this process may fork copies: the OS has fork(), this is not a copy itself, and no CUDA."""
    return hasattr(os, "fork") and not _throwaway and not _cuda_in_use()


def _cuda_in_use() -> bool:
    """Whether this process has initialised CUDA: torch.cuda's own flag, which the virtual GPU leaves alone
    (it answers `torch.cuda.is_initialized()` itself, with True)."""
    cuda = getattr(sys.modules.get("torch"), "cuda", None)
    return bool(getattr(cuda, "_initialized", False))


@dataclass
class _Copy:
    pid: int
    number: int  # the item it computes
    progress: Progress
    received: bytearray = field(default_factory=bytearray)


def forked_map(
    work: Callable[[Item], Any], items: Sequence[Item], at_once: int | None = None
) -> list[Any]:
    """`[work(item) for item in items]`, each item in a copy of its own. An exception `work` raises is
    raised by the parent computing that item itself, as from the list comprehension. `at_once`: the copies
    running at a time (default copies_for); 1 still forks, for work whose memory the parent must not keep
    (a round trip's reproducer holds its inputs in the process that opened it)."""
    if at_once is None:
        at_once = copies_for(len(items))
    elif not _can_fork():
        at_once = 0
    if not at_once:
        return [work(item) for item in items]
    results: dict[int, Any] = {}
    waiting = list(range(len(items)))
    running: dict[int, _Copy] = {}  # the reading end of its pipe -> the copy
    try:
        while waiting or running:
            while waiting and len(running) < at_once:
                started = _fork(work, items, waiting[0])
                if started is None:  # no fork to be had: what is left, the parent computes
                    waiting.clear()
                    break
                fd, copy = started
                running[fd] = copy
                waiting.pop(0)
            if running:
                _serve(running, results)
    finally:
        for fd, copy in running.items():
            _end(copy.pid, fd)
    return [results[n] if n in results else work(items[n]) for n in range(len(items))]


def _serve(running: dict[int, _Copy], results: dict[int, Any]) -> None:
    """Read what the copies send; a copy that has closed its pipe, or is stuck, leaves `running`."""
    ready, _, _ = select.select(list(running), [], [], 0.5)
    for fd in ready:
        copy = running[fd]
        data = os.read(fd, 1 << 20)
        if data:
            copy.received += data
            continue
        del running[fd]
        _end(copy.pid, fd, exited=True)  # its pipe closes when it exits
        try:
            results[copy.number] = pickle.loads(copy.received)
        except Exception:  # noqa: BLE001 - it failed or was cut off: the parent computes it
            pass
    if not ready:
        for fd, copy in list(running.items()):
            if copy.progress.stalled(STALL_LIMIT_S):
                del running[fd]
                _end(copy.pid, fd)


def _fork(work, items, number: int) -> tuple[int, _Copy] | None:
    read_end, write_end = os.pipe()
    parent = os.getpid()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns about fork() with threads running; a lock one of them held at the fork
            # leaves the copy stuck, which the parent sees (STALL_LIMIT_S) and then does the work itself
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the copy: never returns
        os.close(read_end)
        _copy(work, items[number], write_end, parent)
    os.close(write_end)
    try:
        os.setpgid(pid, pid)  # as the copy does itself: whichever runs first, the group exists
    except OSError:
        pass
    return read_end, _Copy(pid, number, Progress(pid))


def _copy(work, item, pipe: int, parent: int) -> None:
    """Compute the item, write its pickle, exit."""
    global _throwaway
    _throwaway = True
    code = 1
    gc.freeze()  # a collection would touch every inherited object, copying the parent's heap page by page
    try:
        os.setpgid(0, 0)  # its own group: a stuck copy is ended with whatever it started
        die_with_parent(parent)
        try:
            signal.set_wakeup_fd(-1)
        except ValueError:
            pass
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        _one_thread_for_torch()
        payload = pickle.dumps(work(item), pickle.HIGHEST_PROTOCOL)
        view = memoryview(payload)
        while view:
            view = view[os.write(pipe, view) :]
        code = 0
    finally:
        os._exit(code)  # no atexit, no clean-up of the parent's resources


def _one_thread_for_torch() -> None:
    """torch's CPU operations in a forked copy on one thread, as torch's own DataLoader workers run: its
    thread pool does not survive a fork, and a parallel operation (a large tensor's clone, as recordings
    made in copies then) waited for ever for threads the copy does not have."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _end(pid: int, fd: int, exited: bool = False) -> None:
    """Close the copy's pipe and collect it; one still running (stuck, or the parent interrupted) is
    killed with its group first."""
    try:
        os.close(fd)
    except OSError:
        pass
    try:
        done, _status = os.waitpid(pid, 0 if exited else os.WNOHANG)
    except ChildProcessError:
        return
    if done == 0:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
