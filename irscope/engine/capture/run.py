"""Run the user's file and record every kernel launch its own `__main__` code makes.

With no GPU, Triton's driver is replaced by a CPU stand-in so that tutorial-style files
(`DEVICE = triton.runtime.driver.active.get_active_torch_device()`) run unchanged on CPU tensors,
and every launch runs in Triton's interpreter. With a GPU, launches run for real.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import io
import os
import sys
import traceback
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from irscope.base.paths import PACKAGE_DIR
from irscope.engine.capture.budget import CaptureBudget, CaptureStopped, command_budget
from irscope.engine.capture.children import children_counted, children_note
from irscope.engine.capture.discover import UserFile
from irscope.engine.capture.held_memory import HeldMemory
from irscope.engine.inductor.scripts import (
    COMPILE_QUIET_S,
    calls_torch_compile,
    import_before_device,
    inductor_scope,
)
from irscope.engine.triton_compat import (
    RawLaunch,
    Target,
    capture_patches,
    install_cpu_driver,
    interpret_seconds,
)
from irscope.engine.triton_compat.benchmark_sweep import benchmarks_run_once
from irscope.engine.triton_compat.program_budget import comparisons_after_cuts
from irscope.engine.triton_compat.repeats import repeats_skipped
from irscope.engine.virtual_gpu.device import virtual_gpu
from irscope.engine.virtual_gpu.tensors import products_left_uncomputed


@dataclass
class RunResult:
    namespace: dict
    launches: list[RawLaunch] = field(default_factory=list)
    error: BaseException | None = None
    user_traceback: str = ""
    output: str = ""
    stopped: str | None = (
        None  # why the capture budget ended the run (budget.py); None if it ended itself
    )
    stopped_line: int | None = None  # the opened file's line it was on then
    stopped_cause: str = ""  # why, in a few words ("the 60 s limit")
    notes: list[str] = field(default_factory=list)  # what was skipped: breakpoint(), input(), ...
    exit_status: int | str | None = (
        None  # `-m MODULE`: the status the command exited with, when not 0
    )
    children: list[str] = field(
        default_factory=list
    )  # Python processes the run started (children.py)
    asked: set[str] = field(default_factory=set)  # what the file asked the virtual GPU about itself


def run_user_file(
    user_file: UserFile,
    *,
    run_main: bool,
    use_interpreter: bool,
    target: Target,
    on_launch: Callable[[RawLaunch], None] | None = None,
    budget: CaptureBudget | None = None,
    argv: list[str] | tuple[str, ...] = (),
) -> RunResult:
    """Execute the file as `__main__` (or as a plain module when `run_main` is false), with `argv` as its
    `sys.argv[1:]` (what `irscope FILE -- ARGS` gives it).

    `on_launch` hears of each launch as it is captured, before it runs. `budget` (one is made if none is
    given) stops a run that goes on without launching anything new."""
    if use_interpreter:
        install_cpu_driver(target)
    module_name = "__main__" if run_main else "irscope_user_module"
    module = types.ModuleType(module_name)
    module.__file__ = user_file.path
    namespace = module.__dict__
    namespace["__builtins__"] = __builtins__
    if (
        user_file.module is not None
    ):  # `python -m pkg.mod`: relative imports resolve from its package
        namespace["__package__"] = user_file.package
        namespace["__spec__"] = importlib.machinery.ModuleSpec(
            user_file.module, None, origin=user_file.path
        )
        namespace["__spec__"].has_location = True
    result = RunResult(namespace)
    held = HeldMemory()
    budget = budget or CaptureBudget(user_file.path)
    budget.limit_counts_new_launches = use_interpreter
    if user_file.command is not None:
        command_budget(budget)
    if calls_torch_compile(user_file.text) and "IRSCOPE_CAPTURE_QUIET" not in os.environ:
        # Inductor compiles each graph (forward, backward) before its first launch: seconds of no launch
        budget.quiet_s = max(budget.quiet_s, COMPILE_QUIET_S)

    first_of: dict[Any, RawLaunch] = {}  # each specialization's first launch kept
    # kernels whose classes given alike were said (classes_keyed_alike)
    told_alike: set[int] = set()

    def record(launch: RawLaunch) -> bool:
        """Keep a launch; True if it is of a specialization not launched before in this run."""
        with budget.recording():
            new, key = budget.launched_as(
                launch.jit, launch.args, launch.kwargs, launch.autotune_index
            )
            first = first_of.get(key)  # this specialization's first launch kept, if any
            if first is not None and first.programs is not None:
                # it gets less of the interpreter's time (program_budget.py)
                launch.after_cut = True
            if not new and first is not None and id(launch.jit) not in told_alike:
                said = classes_keyed_alike(first, launch)
                if said:
                    told_alike.add(id(launch.jit))
                    result.notes.append(said)
            if not new and (not use_interpreter or launch.in_sweep):
                # On a GPU benchmark loops and sweeps run for real: a repeat of a specialization already
                # captured adds nothing to show, and keeping it would keep its tensors in GPU memory (tutorial
                # 02's sweep held 36 GB that way, and Nsight Compute's child then ran out of memory). So on the
                # virtual GPU while a benchmark's sweep explores (triton_compat/benchmark_sweep.py). On a GPU its
                # grid is counted on the first launch kept: the launch statistics have a row per grid.
                if not use_interpreter and first is not None and not launch.warmup:
                    grid = launch.resolved_grid()
                    if grid is not None:
                        first.repeat_grids[grid] = first.repeat_grids.get(grid, 0) + 1
                return False
            first_of.setdefault(key, launch)
            result.launches.append(launch)
            if not use_interpreter:
                held.captured(launch)
            if on_launch is not None:
                on_launch(launch)
            return new

    # In a worker process (irscope/worker) the file's prints join its other output on fd 1, which the
    # front end keeps; in-process they are kept apart from irscope's own.
    output = (
        sys.__stdout__ if os.environ.get("IRSCOPE_WORKER_TMP") and sys.__stdout__ else io.StringIO()
    )
    saved_main = sys.modules.get("__main__")
    saved_argv = sys.argv[:]
    saved_path = sys.path[:]
    sys.modules[module_name] = module
    sys.argv = [user_file.path, *(user_file.command[1:] if user_file.command else argv)]
    sys.path.insert(0, user_file.root or os.path.dirname(user_file.path))
    import_before_device(user_file.text)
    budget.watch()
    try:
        device = (
            virtual_gpu(
                target, result.asked, result.notes, budget.quiet_paused, budget.quiet_not_counted
            )
            if use_interpreter
            else benchmarks_run_once(result.notes, budget.quiet_paused)
        )
        inductor = inductor_scope(user_file, record, use_interpreter, result.notes)
        checks = (
            comparisons_after_cuts(
                lambda: (
                    products_left_uncomputed()
                    or any(raw.programs is not None or raw.not_run for raw in result.launches)
                ),
                result.notes,
            )
            if use_interpreter
            else benchmarks_run_once(result.notes, budget.quiet_paused)
        )
        with (
            device,
            capture_patches(record, use_interpreter, budget.executing, budget.repeated),
            inductor,
            checks,
            no_terminal(result.notes, user_file.path),
            children_counted(result.children),
            contextlib.redirect_stdout(output),
            contextlib.redirect_stderr(output),
        ):
            exec(user_file.code, namespace)
    except CaptureStopped:
        result.stopped = budget.reason or "stopped"
        result.stopped_line, result.stopped_cause = budget.stopped_line, budget.cause
    except SystemExit as exc:
        if exc.code not in (None, 0) and user_file.command is not None:
            result.exit_status = exc.code  # a command's status (pytest: 1 when a test failed)
        elif exc.code not in (None, 0):
            result.error = exc
            result.user_traceback = f"SystemExit: {exc.code}"
    # the user's code may raise anything; KeyboardInterrupt passes through
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        result.error = exc
        result.user_traceback = user_traceback_tail(exc, user_file.path)
    finally:
        budget.done()
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        if module_name != "__main__":
            sys.modules.pop(module_name, None)
        sys.argv = saved_argv
        sys.path[:] = saved_path
    if (
        result.stopped is None and budget.stop_sent
    ):  # the run caught the stop and went on to its end
        result.stopped = budget.reason or "stopped"
        result.stopped_line, result.stopped_cause = budget.stopped_line, budget.cause
    result.output = output.getvalue() if isinstance(output, io.StringIO) else _worker_output_tail()
    said = children_note(result.children, user_file.shown)
    if said:
        result.notes.append(said)
    said = held.released.note()
    if said:
        result.notes.append(said)
    result.notes.extend(cut_launch_notes(result.launches))
    result.notes.extend(reused_choice_notes(result.launches))
    result.notes.extend(not_run_notes(result.launches))
    if use_interpreter and repeats_skipped():
        result.notes.append(
            f"{repeats_skipped()} launch(es) the same as the launch of their kernel just before "
            f"(same tensors, sizes and grid: a benchmark loop) were not run again in the interpreter"
        )
    return result


def cut_launch_notes(launches: list[RawLaunch]) -> list[str]:
    """One line per kernel whose interpreted launches were cut short (triton_compat/program_budget.py)."""
    cut: dict[str, list[RawLaunch]] = {}
    for raw in launches:
        if raw.programs is not None:
            cut.setdefault(raw.jit.__name__, []).append(raw)
    notes = []
    for name, raws in cut.items():
        run, total = raws[0].programs
        shorter = (
            f"; later launches of a specialization already cut short, "
            f"{interpret_seconds(after_cut=True):g} s each"
            if any(raw.after_cut for raw in raws)
            and interpret_seconds(after_cut=True) < interpret_seconds()
            else ""
        )
        notes.append(
            f"{name}: {len(raws)} launch(es) cut short in the interpreter (the first ran {run} of its "
            f"{total} programs in {interpret_seconds():g} s{shorter}), so what they wrote is incomplete; "
            f"the compile does not depend on it (IRSCOPE_INTERPRET_S gives them longer)"
        )
    return notes


def reused_choice_notes(launches: list[RawLaunch]) -> list[str]:
    """One line per autotuned kernel launched again with a tuning key seen before and another value of a
    constexpr the key leaves out (triton_compat/capture.py): a GPU compiles, for those launches, the config
    its timing chose for the key's first launch, which no run without a GPU can know."""
    reused: dict[str, list[RawLaunch]] = {}
    for raw in launches:
        if raw.reused_choice and raw.autotune_first:
            reused.setdefault(raw.jit.__name__, []).append(raw)
    notes = []
    for name, raws in reused.items():
        differing = sorted({n: (a, b) for raw in raws for n, a, b in raw.reused_choice}.items())
        names = ", ".join(n for n, _ in differing)
        values = "; ".join(
            f"{n}: {a} at the key's first launch, then {b}" for n, (a, b) in differing
        )
        first = raws[0]
        notes.append(
            f"{name}: its autotune key leaves out {names} ({values}), so on a GPU {len(raws)} launch(es) "
            f"compile the config that timing chose for the first launch with their key, which irscope cannot "
            f"know (nothing is timed here): the {len(first.autotune_tried)} configs that one may be are "
            f"named, none compiled (--config N compiles one)"
        )
    return notes


def not_run_notes(launches: list[RawLaunch]) -> list[str]:
    """One line for the Gluon launches the virtual GPU recorded and compiled but did not run."""
    names = list(dict.fromkeys(raw.jit.__name__ for raw in launches if raw.not_run))
    if not names:
        return []
    count = sum(raw.not_run for raw in launches)
    return [
        f"{', '.join(names)}: {count} Gluon launch(es) recorded and compiled, not run: Triton's "
        f"interpreter does not run Gluon, so what they write is not computed (the file went on with "
        f"those outputs unwritten)"
    ]


def _worker_output_tail(size: int = 4096) -> str:
    """The end of what the file printed, in a worker process (where it went to the front end's file)."""
    sys.__stdout__.flush()
    try:
        with open(os.path.join(os.environ["IRSCOPE_WORKER_TMP"], "file-output"), "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - size))
            return f.read().decode("utf-8", "replace")
    except (OSError, KeyError):
        return ""


@contextlib.contextmanager
def no_terminal(notes: list[str], path: str) -> Iterator[None]:
    """The file runs with no one at a terminal: `breakpoint()`, `pdb.set_trace()` and `input()` (in the
    file or in a kernel the interpreter runs) would wait forever. Each is skipped, and said once."""
    import builtins
    import pdb

    def where() -> str:
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename != path:
            frame = frame.f_back
        return f" at line {frame.f_lineno}" if frame is not None else ""

    def note(text: str) -> None:
        if text not in notes:
            notes.append(text)

    def skip_breakpoint(*_args, **_kwargs) -> None:
        # pdb's and ipdb's set_trace too
        note(f"breakpoint(){where()} skipped (no debugger under irscope)")

    def no_input(*_args, **_kwargs) -> str:
        note(f"input(){where()} got end of file (irscope runs the file without a terminal)")
        raise EOFError("irscope runs the file without a terminal")

    # ipdb (often not installed at all where irscope runs) stops the same way: a stand-in skips it too.
    ipdb = types.ModuleType("ipdb")
    ipdb.set_trace = ipdb.post_mortem = ipdb.pm = skip_breakpoint
    saved = (sys.breakpointhook, pdb.set_trace, builtins.input, sys.modules.get("ipdb"))
    sys.breakpointhook, pdb.set_trace, builtins.input = skip_breakpoint, skip_breakpoint, no_input
    sys.modules["ipdb"] = ipdb
    try:
        yield
    finally:
        sys.breakpointhook, pdb.set_trace, builtins.input = saved[:3]
        if saved[3] is None:
            sys.modules.pop("ipdb", None)
        else:
            sys.modules["ipdb"] = saved[3]


_IRSCOPE_DIR = PACKAGE_DIR


def user_traceback_tail(exc: BaseException, path: str, limit: int = 6) -> str:
    """The last frames of a traceback, from the user's file onwards: irscope's own frames dropped, and
    the frames of installed libraries (torch, Triton, the standard library) marked as such."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not os.path.abspath(f.filename).startswith(_IRSCOPE_DIR + os.sep)
    ]
    first_user = next((i for i, f in enumerate(frames) if f.filename == path), 0)
    frames = frames[first_user:][-limit:]
    lines = []
    for frame, text in zip(frames, traceback.format_list(frames)):
        if _is_library(frame.filename):
            head, _, rest = text.partition("\n")
            text = f"{head}  [library]\n{rest}"
        lines.append(text)
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def _is_library(filename: str) -> bool:
    parts = os.path.abspath(filename).split(os.sep)
    return (
        "site-packages" in parts or "dist-packages" in parts or filename.startswith(sys.base_prefix)
    )


def classes_keyed_alike(first: RawLaunch, later: RawLaunch) -> str | None:
    """Two classes given as one constexpr whose text is the same (module and qualified name: two made by one
    factory, as Gluon tutorial 07's grouped scheduler), in two launches Triton's JIT keys alike: its cache key
    is that text, so on a GPU the later launch runs the kernel compiled for the first (an H200 ran it so:
    validation/probes/factory_classes_key.py). The note that says so, or None."""
    pairs = list(zip(first.args, later.args))
    pairs += [
        (first.kwargs[name], value) for name, value in later.kwargs.items() if name in first.kwargs
    ]
    for one, other in pairs:
        if isinstance(one, type) and isinstance(other, type) and one is not other:
            if str(one) == str(other):
                name = getattr(later.jit, "__name__", "the kernel")
                return (
                    f"{name}: the classes {other.__name__} and {one.__name__}, given as a constexpr, print "
                    f"alike ({one}), and Triton's JIT keys its kernels by that text: on a GPU the launch with "
                    f"{other.__name__} runs the kernel compiled for {one.__name__}, silently; irscope shows the "
                    f"one compilation Triton makes. Give each class a qualified name of its own "
                    f"(`cls.__qualname__ = ...`: `str` reads it, not `__name__`)"
                )
    return None
