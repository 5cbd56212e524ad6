"""The capture budget: a file that keeps running after it has shown all it will show is stopped.

Benchmark loops, sweeps and self-tests launch the same specializations again and again; in Triton's
interpreter each launch is slow, and a `__main__` that never ends would never open. Once the file has run
`quiet_s` seconds without launching anything new (a kernel or a specialization not seen before), or
`limit_s` seconds in all, the file's thread is stopped with `CaptureStopped` and irscope goes on with what
was captured, and says so. `IRSCOPE_CAPTURE_QUIET` / `IRSCOPE_CAPTURE_LIMIT` (seconds) change the defaults.

The quiet time and the limit leave out the time the file's thread was ready to run but waited for a CPU
(the kernel's run-queue delay, /proc/self/task/N/schedstat): on a loaded machine a launch takes longer on
the wall clock, and counted on the wall clock alone the quiet time ran out inside launches that end well
within it on an idle machine, which lost every specialization after them (the H100 corpus run with 12 files
at once), and the limit stopped a tutorial inside its torch reference before its one launch (25 s alone,
over 60 s beside a test run on two cores). Time the file spends sleeping or waiting on something else
counts, as its work does.

The quiet time leaves out, too, the running of a launch that was new when it was captured: on a real GPU
its cold compile (Triton's launcher built by the C compiler included), in Triton's interpreter the
interpreting of its programs (`executing`). Both are irscope's or the GPU's work, not the file's: counted
from the capture, a first launch that took longer than `quiet_s` lost every launch after it (one file showed
its small first kernel and lost its main one). An interpreted launch cannot run for minutes instead: it
runs its programs for at most a few seconds (triton_compat/program_budget.py). Repeats of a specialization
already seen count as the file's time, so a benchmark loop still ends a quiet time after its last new launch.

The quiet time ends a run that repeats itself: a file that launches only specializations already seen
(a benchmark loop, a training loop, a `__main__` that never ends) is stopped `quiet_s` after its last new
launch. A file that launches nothing at all meanwhile is doing work of its own before its next kernel (torch's
reference computation or its first backward, a library generating a kernel's code), not repeating itself, and
is stopped only after three times the quiet time without any launch: on an H100 with 3 s for both, three
files were stopped inside such work before kernels they launch next (a backward kernel, FlagGems' generated
`add`).

A stop names the line of the opened file the run was on, so that what was not reached can be said.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from irscope.base.paths import PACKAGE_DIR
from irscope.engine.capture.spec_key import specialization_key

QUIET_S = 3.0
LIMIT_S = 60.0
# `-m MODULE` (a test session): one run for every kernel its tests launch, so the whole run gets the budget.
# Tests run torch's own reference code and repeat specializations between new ones (a test's parametrization
# that changes only a value), which a file's quiet time would end; a session of a few test files launches
# for minutes in Triton's interpreter.
COMMAND_QUIET_S = 60.0
COMMAND_LIMIT_S = 600.0


def _package_dir(name: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec(name)  # finds the package without importing it
    locations = list(spec.submodule_search_locations or []) if spec else []
    return os.path.join(locations[0], "") if locations else "\0"


# Where a stop must not land: irscope's own code (its capture and clean-up; the virtual GPU's wrappers of the
# file's torch calls excepted: a stop passes through them like any library), and Triton's interpreter while
# it patches triton.language for a launch or puts it back (an exception there leaves the language patched,
# and every later compile in the process fails: "'ir.value' object has no attribute 'dtype'").
_IRSCOPE_DIR = os.path.join(PACKAGE_DIR, "")
_TRITON_DIR = _package_dir("triton")
_STDLIB = os.path.join(sysconfig.get_paths()["stdlib"], "")


def _is_stdlib(filename: str) -> bool:
    return filename.startswith(_STDLIB) and "-packages" not in filename


_PASS_THROUGH = tuple(
    os.path.join(_IRSCOPE_DIR, "engine", "virtual_gpu", name)
    for name in ("tensors.py", "cuda.py", "dispatch.py")
)
_PATCHING = {
    "_patch_lang",
    "_patch_lang_core",
    "_patch_lang_tensor",
    "_patch_attr",
    "_patch_builtin",
    "_patch_reduce_scan",
    "set_attr",
    "restore",
    "_set_attr",
    "_restore_args_dev",
}


def command_budget(budget: "CaptureBudget") -> None:
    """The defaults of a `-m MODULE` run (COMMAND_QUIET_S, COMMAND_LIMIT_S) where the user set no others."""
    if "IRSCOPE_CAPTURE_QUIET" not in os.environ:
        budget.quiet_s = max(budget.quiet_s, COMMAND_QUIET_S)
    if "IRSCOPE_CAPTURE_LIMIT" not in os.environ:
        budget.limit_s = max(budget.limit_s, COMMAND_LIMIT_S)


class CaptureStopped(BaseException):
    """Raised in the file's thread to end its run (a BaseException: `except Exception` cannot keep it)."""


@dataclass
class Progress:
    launches: int
    kernels: int
    line: int | None  # the line of the opened file that is running now
    seconds: float


def _seconds(name: str, default: float) -> float:
    try:
        return max(0.1, float(os.environ.get(name, default)))
    except ValueError:
        return default


class CaptureBudget:
    """Watches one run of a file from a thread of its own and stops the run when the budget is spent."""

    def __init__(
        self,
        path: str,
        quiet_s: float | None = None,
        limit_s: float | None = None,
        on_progress: Callable[[Progress], None] | None = None,
    ):
        self.path = path
        self.quiet_s = (
            quiet_s if quiet_s is not None else _seconds("IRSCOPE_CAPTURE_QUIET", QUIET_S)
        )
        self.limit_s = (
            limit_s if limit_s is not None else _seconds("IRSCOPE_CAPTURE_LIMIT", LIMIT_S)
        )
        self.on_progress = on_progress
        # On a GPU, a new launch's cold compile is irscope's and the GPU's work, not the file's: the limit
        # leaves it out there (one library's kernels compile for 3 to 40 s each, and its run was stopped at
        # the limit inside its first call). In the interpreter it counts: there each launch is bounded on its
        # own, and the limit is what bounds the run.
        self.limit_counts_new_launches = True
        # the time new launches took to compile and run, this run, on the file's clock (_file_clock)
        self._new_launches_s = 0.0
        self.reason: str | None = None  # why the run was stopped; None if it ended by itself
        self._seen: set[tuple] = set()
        self._kernels: set[int] = set()
        self._launches = 0
        self._started = self._last_new = time.monotonic()
        self._started_clock = self._started  # the file's clock (_file_clock) at _started
        self._last_new_clock = self._started  # the file's clock (_file_clock) at _last_new
        self._last_any = self._last_new  # the file's last launch, new or not (monotonic)
        self._repeated = False  # a launch of a specialization already seen since the last new one
        self._schedstat: str | None = (
            None  # the file thread's scheduler statistics (None: none here)
        )
        self._new_pending = False  # a new launch was captured and has not run yet
        self._new_running = False  # a new launch is compiling or running: no quiet time counts
        self._paused = 0  # > 0 inside quiet_paused: no quiet time counts
        self.stopped_line: int | None = (
            None  # the opened file's line the run was on when it was stopped
        )
        self.cause = ""  # why it was stopped, in a few words ("the 60 s limit")
        self._thread_id: int | None = None
        self._done = threading.Event()
        self._inject_lock = threading.Lock()
        self._stop_asked = False
        self._recording = (
            0  # > 0 while irscope records a launch in the file's thread: no stop lands there
        )
        self._injected = False  # a stop has been sent to the file's thread this run

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """While a launch is recorded (its key, the capture, the hooks that start its compile), no stop
        lands, even where that code calls into torch: a stop there lost the launch it was recording."""
        self._recording += 1
        try:
            yield
        finally:
            self._recording -= 1

    def launched(self, jit: Any, args: tuple, kwargs: dict, autotune_index: int | None) -> bool:
        """Count a launch; True if it is of a specialization not launched before in this run."""
        return self.launched_as(jit, args, kwargs, autotune_index)[0]

    def launched_as(
        self, jit: Any, args: tuple, kwargs: dict, autotune_index: int | None
    ) -> tuple[bool, Any]:
        """Count a launch: whether it is of a specialization not launched before in this run, and the key of
        its specialization.

        The key is worked out before anything is counted: the watching thread must never see a launch
        counted while the quiet time still runs from before it (it stopped tutorial 10's one launch, the
        launch lost, when the key took a while)."""
        key = specialization_key(jit, args, kwargs, autotune_index)
        with self._inject_lock:
            new = key not in self._seen
            if new:
                self._seen.add(key)
                self._last_new, self._last_new_clock = time.monotonic(), self._file_clock()
                self._new_pending, self._repeated = True, False
            else:
                self._repeated = True
            self._last_any = time.monotonic()
            self._launches += 1
            self._kernels.add(id(jit))
        return new, key

    def repeated(self) -> None:
        """A launch the same as the kernel's last one, which the capture skips without recording (a benchmark
        loop in the interpreter): the file is repeating itself. Called for each such launch, so it takes no
        lock and reads no clock but the monotonic one (with more, a loop of them spent its time in irscope's
        code, where no stop lands)."""
        self._repeated, self._last_any = True, time.monotonic()

    @contextlib.contextmanager
    def quiet_paused(self) -> Iterator[None]:
        """No quiet time counts while the block runs, and it starts again when the block ends: work irscope
        chose to do (a benchmark report's sweeps, triton_compat/benchmark_sweep.py, bounded on their own)."""
        with self._inject_lock:
            self._paused += 1
        try:
            yield
        finally:
            with self._inject_lock:
                self._paused -= 1
                self._last_new, self._last_new_clock = time.monotonic(), self._file_clock()
                self._last_any = self._last_new

    @contextlib.contextmanager
    def quiet_not_counted(self) -> Iterator[None]:
        """The block's time does not count in the quiet time, which goes on afterwards where it was (unlike
        `quiet_paused`, which starts it again): torch work on the virtual GPU that a GPU does in microseconds
        and this CPU in seconds (virtual_gpu/tensors.py `_gpu_sized`). The limit counts it."""
        started, started_clock = time.monotonic(), self._file_clock()
        try:
            yield
        finally:
            with self._inject_lock:
                self._last_new += time.monotonic() - started
                self._last_new_clock += self._file_clock() - started_clock
                self._last_any += time.monotonic() - started

    @contextlib.contextmanager
    def executing(self) -> Iterator[None]:
        """A captured launch runs (compiled and run on a GPU, or run in the interpreter). If it was new when
        captured, no quiet time counts while it runs, and the quiet time starts again when it returns."""
        with self._inject_lock:
            new, self._new_pending = self._new_pending, False
            self._new_running = self._new_running or new
        started_clock = self._file_clock() if new else 0.0
        try:
            yield
        finally:
            if new:
                with self._inject_lock:
                    self._new_running = False
                    self._last_new, self._last_new_clock = time.monotonic(), self._file_clock()
                    self._last_any = self._last_new
                    self._new_launches_s += self._last_new_clock - started_clock

    @property
    def stop_sent(self) -> bool:
        """A stop was sent to the file's thread in this run (the run may have caught it and gone on:
        pytest records an exception in a test, even a BaseException, and goes on to the next)."""
        return self._injected

    def stop_now(self) -> None:
        """Go on with what is captured (the TUI's key)."""
        self._stop_asked = True

    def watch(self) -> None:
        """Start watching the calling thread (the one about to run the file). Each run is watched afresh:
        a file run again for another target (retarget.py) gets the whole budget again, unless the user
        asked to go on (stop_now)."""
        self._thread_id = threading.get_ident()
        self._schedstat = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        # not Linux, or no scheduler statistics: the wall clock alone
        if self._run_queue_delay() is None:
            self._schedstat = None
        self._started = self._last_new = time.monotonic()
        self._started_clock = self._last_new_clock = self._file_clock()
        self._last_any, self._repeated = self._last_new, False
        self.reason, self._injected, self.stopped_line = None, False, None
        self._new_pending = self._new_running = False
        self._seen, self._kernels, self._launches = set(), set(), 0
        self._new_launches_s = 0.0
        self._done = threading.Event()
        threading.Thread(
            target=self._loop, args=(self._done,), name="irscope-capture-budget", daemon=True
        ).start()

    def done(self) -> None:
        """Stop watching; called by the watched thread. A stop delivered meanwhile is dropped here, so
        that it cannot escape from the caller's clean-up. (A pending stop is not cleared with
        PyThreadState_SetAsyncExc(id, NULL): on CPython 3.11 that leaves the eval breaker set, and every
        later instruction of the thread slows down a hundredfold.)"""
        while True:
            try:
                with self._inject_lock:
                    self._done.set()
                return
            except CaptureStopped:  # it landed before the event was set: once more
                continue

    def _in_stoppable_code(self) -> bool:
        """Whether a stop may land in the watched thread now (see _PATCHING)."""
        frame = sys._current_frames().get(self._thread_id)
        if frame is None or self._recording:
            return False
        owner = frame  # the innermost frame outside the standard library decides whose code runs
        while owner is not None and _is_stdlib(owner.f_code.co_filename):
            owner = owner.f_back
        where = owner.f_code.co_filename if owner is not None else ""
        if where.startswith(_IRSCOPE_DIR) and not where.startswith(_PASS_THROUGH):
            return False
        while frame is not None:
            code = frame.f_code
            if code.co_name in _PATCHING and code.co_filename.startswith(_TRITON_DIR):
                return False
            frame = frame.f_back
        return True

    def progress(self) -> Progress:
        return Progress(
            self._launches,
            len(self._kernels),
            self._running_line(),
            time.monotonic() - self._started,
        )

    def _loop(self, done: threading.Event) -> None:
        while not done.wait(0.25):
            now = time.monotonic()
            if self.on_progress is not None:
                try:
                    self.on_progress(self.progress())
                except Exception:  # noqa: BLE001 - the viewer went away (the app quit): keep stopping the run
                    self.on_progress = None
            # until a stop is sent, a launch meanwhile may take the reason back
            if not self._injected:
                self.stopped_line = self._running_line()
                self.reason = self._spent(now)
            if self.reason is not None:
                with self._inject_lock:
                    # Raised at the thread's next Python instruction; again each round if the file caught
                    # it. Never inside Triton or irscope: an exception there leaves Triton's interpreter
                    # with triton.language patched, and every later compile in the process fails.
                    if not done.is_set() and self._in_stoppable_code():
                        ctypes.pythonapi.PyThreadState_SetAsyncExc(
                            ctypes.c_ulong(self._thread_id), ctypes.py_object(CaptureStopped)
                        )
                        self._injected = True

    def _spent(self, now: float) -> str | None:
        """Why the run should stop now (and `cause`, the same in a few words), or None."""
        captured = f"{self._launches} launch(es) of {len(self._kernels)} kernel(s) captured"
        at = f" at line {self.stopped_line}" if self.stopped_line else ""
        if self._stop_asked:
            self.cause = "stopped on request"
            return f"stopped on request{at}; {captured}"
        quiet = self._launches and not (self._new_running or self._paused) and self._quiet(now)
        if quiet:
            self.cause = quiet
            return f"stopped after {now - self._started:.1f} s{at}: {self.cause}; {captured}"
        spent = (
            self._file_clock(now)
            - self._started_clock
            - (0.0 if self.limit_counts_new_launches else self._new_launches_s)
        )
        if spent >= self.limit_s:
            self.cause = f"the {self.limit_s:g} s limit"
            return f"stopped at {self.cause}{at}; {captured}"
        return None

    def _run_queue_delay(self) -> float | None:
        """Seconds the file's thread has waited for a CPU while ready to run; None if unknown."""
        if self._schedstat is None:
            return None
        try:
            with open(self._schedstat) as stats:
                return int(stats.read().split()[1]) / 1e9
        except (OSError, ValueError, IndexError):  # the thread has ended, or no such statistics
            return None

    def _file_clock(self, now: float | None = None) -> float:
        """The wall clock (`now`, or the monotonic clock now) less the file thread's run-queue delay: time
        it ran, slept or waited on something."""
        return (time.monotonic() if now is None else now) - (self._run_queue_delay() or 0.0)

    def _quiet(self, now: float) -> str | None:
        """Why the run is quiet, in a few words: `quiet_s` of the file's own time since its last new launch
        while it launched only what it had launched before, or three times that with no launch at all (the
        module's docstring); None while it is not."""
        since_new = self._file_clock(now) - self._last_new_clock
        since_any = now - self._last_any  # the wall clock: repeats are too many to read the file's
        if since_new >= self.quiet_s and self._repeated and since_any < self.quiet_s:
            return f"nothing new launched in the last {self.quiet_s:g} s"
        if min(since_new, since_any) >= 3 * self.quiet_s:
            return f"nothing launched in the last {3 * self.quiet_s:g} s"
        return None

    def _running_line(self) -> int | None:
        frame = sys._current_frames().get(self._thread_id) if self._thread_id is not None else None
        line = None
        while frame is not None:
            if frame.f_code.co_filename == self.path:
                line = frame.f_lineno  # the innermost frame of the opened file
                break
            frame = frame.f_back
        return line
