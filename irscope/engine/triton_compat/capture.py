"""Capturing launches while a user's file runs: JITFunction and the autotuner patched, launches run in the
interpreter (no GPU) or for real."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Any, Callable, ContextManager, Iterator

import numpy as np
from triton.compiler.compiler import CompiledKernel
from triton.runtime import driver as triton_driver
from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

from irscope.base.model import StrayAccess
from irscope.engine.triton_compat.autotune import (
    as_launched,
    config_number,
    configs_tried,
    known_configs,
    left_out_of_key,
    tuning_key,
)
from irscope.engine.triton_compat.bounds import bounds_guard
from irscope.engine.triton_compat.capture_state import capture_state
from irscope.engine.triton_compat.compiled import (
    CompiledWhenUsed,
    by_hand_call,
    compile_for_active_target,
)
from irscope.engine.triton_compat.driver import free_locks_after_fork, interpreter_lock
from irscope.engine.triton_compat.gluon import GLUON_NOT_INTERPRETED, is_gluon
from irscope.engine.triton_compat.interpreter import interpreter_failure, kernel_parameters
from irscope.engine.triton_compat.jit import bind_arguments, config_kwargs, jit_decorator_kept
from irscope.engine.triton_compat.lang_patch import (
    call_interpreted,
    grid_executor_patches_once,
    interpreter_for,
    restore_interpreter_module,
)
from irscope.engine.triton_compat.originals import (
    AUTOTUNER_BENCH,
    AUTOTUNER_RUN,
    AUTOTUNER_WARMUP,
    JIT_CALL,
    JIT_RUN,
)
from irscope.engine.triton_compat.own_tuners import (
    own_runs_wrapped,
    unwrap_own_runs,
)
from irscope.engine.triton_compat.program_budget import (
    ProgramsCut,
    interpret_seconds,
    programs_within,
)
from irscope.engine.triton_compat.repeats import forget_launches, launch_identity, same_as_last


@dataclass
class RawLaunch:
    jit: JITFunction
    args: tuple
    kwargs: dict
    grid: Any
    autotune_index: int | None
    autotune_count: int | None
    autotune_configs: list[Any] | None = (
        None  # the autotuner's known configs (autotune.known_configs), when one launched it
    )
    interp_error: str | None = (
        None  # why Triton's interpreter could not run this launch (it is kept anyway)
    )
    autotune_first: bool = (
        False  # the first config the autotuner would try for this launch (what runs here)
    )
    warmup: bool = False  # `f.warmup(...)` or `f[grid](..., warmup=True)`: compiled, not run
    programs: tuple[int, int] | None = (
        None  # (run, in the grid) when the interpreter cut the launch short
    )
    # an earlier launch of its specialization was cut short: this one gets less time (program_budget.py)
    after_cut: bool = False
    in_sweep: bool = False  # made while a benchmark's sweep explores, where a repeat is not kept
    explored: bool = (
        False  # made at a sweep's later points (run_sweep's exploration), not at its first ones
    )
    autotune_tried: tuple[
        int, ...
    ] = ()  # the configs the autotuner would try for this launch, in its order
    # (name, value at the key's first launch, value here) of each constexpr the autotune key leaves out that
    # differs from the first launch with this key: a GPU reuses the config timed for that one
    reused_choice: tuple[tuple[str, str | None, str], ...] = ()
    # a Gluon launch on the virtual GPU: recorded and compiled, never run (gluon.py); its outputs unwritten
    not_run: bool = False
    # the first access of its interpreted run that reached outside its tensors, lanes switched off (bounds.py)
    out_of_bounds: StrayAccess | None = None
    # on a GPU: its tensors were let go of, host stand-ins reading zeros in their place (capture/held_memory.py)
    inputs_released: bool = False
    # on a GPU: the grids of the later launches of its specialization, which are not kept (their tensors would
    # stay in GPU memory), with how many ran with each: the launch statistics count them
    repeat_grids: dict[tuple[int, ...], int] = field(default_factory=dict)

    def resolved_grid(self) -> tuple[int, ...] | None:
        """The grid as three numbers (a callable grid evaluated on the launch's arguments, as the JIT does);
        None where irscope cannot evaluate it."""
        grid = self.grid
        try:
            if callable(grid):
                grid = grid(bind_arguments(self.jit, self.args, self.kwargs))
            grid = tuple(int(g) for g in grid)
        except Exception:  # a grid irscope cannot evaluate is shown as unknown, not an error
            return None
        return grid + (1,) * (3 - len(grid))


def _arguments_of(jit: JITFunction, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The launch's arguments by parameter name (positional names where the binding fails)."""
    try:
        return kernel_parameters(jit, args, kwargs)
    except TypeError:
        return {**{f"argument {i}": a for i, a in enumerate(args)}, **kwargs}


_counts = {
    "launches": 0,
    "new": 0,
}  # records made in this process, and those of a new specialization (run_sweep)


def launches_recorded(new_only: bool = False) -> int:
    """How many launches have been recorded so far (only those of a specialization not seen before)."""
    return _counts["new" if new_only else "launches"]


@contextlib.contextmanager
def launches_not_run() -> Iterator[None]:
    """While the block runs, a launch is recorded and not run (a warmup still compiles: its kernel is used):
    the later points of a benchmark's sweep on the virtual GPU, whose results nobody reads (nothing is
    timed), and where a repeat of a specialization already seen is not kept at all."""
    saved = capture_state.run_launches
    capture_state.run_launches = False
    try:
        yield
    finally:
        capture_state.run_launches = saved


@contextlib.contextmanager
def launches_explored() -> Iterator[None]:
    """While the block runs, each launch recorded is marked `explored`: irscope's exploration of a benchmark's
    later x values (benchmark_sweep.run_sweep), which the file's own run would not have reached on the virtual
    GPU. Such a launch's specialization is named, not compiled, when the file opens (session.py, workspace.py)."""
    saved = capture_state.explored
    capture_state.explored = True
    try:
        yield
    finally:
        capture_state.explored = saved


def exploring_now() -> bool:
    """Whether a launch made now is one of a sweep's explored points (launches_explored)."""
    return capture_state.explored


@contextlib.contextmanager
def capture_patches(
    record: Callable[[RawLaunch], bool | None],
    use_interpreter: bool,
    executing: Callable[[], ContextManager] | None = None,
    repeated: Callable[[], None] | None = None,
) -> Iterator[None]:
    """Record every kernel launch while the user's file runs (see _capture_patches). Each launch the file
    made runs (compiled and run on a GPU, or run in the interpreter) inside `executing()`; `repeated()` hears
    of each launch skipped as the same as its kernel's last one.

    One patcher of JITFunction and triton.language at a time: a recording in another thread (the
    stepper) patches and restores the same attributes."""
    with (
        interpreter_lock,
        _capture_patches(
            record, use_interpreter, executing or contextlib.nullcontext, repeated or (lambda: None)
        ),
    ):
        yield


@contextlib.contextmanager
def _capture_patches(
    record: Callable[[RawLaunch], bool | None],
    use_interpreter: bool,
    executing: Callable[[], ContextManager],
    repeated: Callable[[], None],
) -> Iterator[None]:
    """Record every kernel launch while the user's file runs.

    With `use_interpreter`, launches (and calls of @triton.jit helpers inside them) run in Triton's
    interpreter on CPU tensors; otherwise they run for real on the GPU. An autotuned launch is
    recorded once per config the autotuner would try (after its pruning: autotune.py) and executed with
    the first of them, so no benchmarking is needed.
    """
    original_run = JITFunction.run
    original_call = JITFunction.__call__
    original_autotune_run = Autotuner.run

    def run(self, *args, grid, warmup, **kwargs):
        index, count = capture_state.autotune or (None, None)
        own = capture_state.tuning
        # an autotuner's own run launching the config it chose (own_tuners.py): (its number, the launch recorded
        # when it was benchmarked or None)
        chosen = (
            own.chosen(kwargs) if index is None and own is not None and self is own.jit else None
        )
        if chosen is not None:
            index, count = chosen[0], len(known_configs(own.tuner))
        recording = capture_state.record and (chosen is None or chosen[1] is None)
        if use_interpreter and not warmup:
            # The same launch as this kernel's last one (same tensors, sizes, values and grid): a benchmark
            # loop timing it (tutorial 09 launches each kernel 20,000 times). A GPU runs it in microseconds; the
            # interpreter would take seconds each, and the file would never reach its next kernels. It is
            # neither recorded (it adds nothing to show) nor run again; its outputs are those of the launch
            # before it, which is what a pure kernel writes again (a kernel that accumulates in place differs).
            if same_as_last(
                (id(self), index, recording, capture_state.execute),
                launch_identity(args, kwargs, grid),
            ):
                repeated()
                if not capture_state.execute:
                    return None
                return _not_yet_compiled(self, args, kwargs)
        raw = None
        if recording:
            raw = RawLaunch(
                self,
                tuple(map(as_launched, args)),
                {k: as_launched(v) for k, v in kwargs.items()},
                grid,
                index,
                count,
                capture_state.configs,
                autotune_first=capture_state.first and index is not None,
                warmup=bool(warmup),
                in_sweep=not capture_state.run_launches,
                explored=capture_state.explored,
                autotune_tried=capture_state.tried if index is not None else (),
                reused_choice=capture_state.reused_choice if index is not None else (),
            )
            if chosen is not None:  # the one config this launch compiles: shown
                own.adopt(raw)
            if capture_state.recorded is not None:
                capture_state.recorded.append(raw)
            _counts["launches"] += 1
            if record(raw) is not False:
                _counts["new"] += 1
        if not capture_state.execute:
            return None
        # a warmup's compiled kernel is used: never skipped
        if not (capture_state.run_launches or warmup):
            return _not_yet_compiled(self, args, kwargs)
        with executing():
            # a chosen config's run, not recorded again: said on the launch recorded when it was benchmarked
            return execute(self, args, kwargs, grid, warmup, raw or (chosen[1] if chosen else None))

    def execute(self, args, kwargs, grid, warmup, raw):
        if not use_interpreter:
            return original_run(self, *args, grid=grid, warmup=warmup, **kwargs)
        if warmup:
            return compile_for_active_target(self, args, kwargs)
        # The record this run is of: an autotuned launch runs the first config it recorded, unrecorded.
        this = raw or (capture_state.recorded[0] if capture_state.recorded else None)
        if is_gluon(self):
            # Triton's interpreter cannot run Gluon: the launch is kept (compiled when looked at) and its
            # outputs left unwritten; the run says so once (capture/run.py)
            if this is not None:
                this.not_run, this.interp_error = True, GLUON_NOT_INTERPRETED
            return _not_yet_compiled(self, args, kwargs)
        try:
            with (
                grid_executor_patches_once(),
                programs_within(
                    interpret_seconds(after_cut=this is not None and this.after_cut)
                ) as programs,
                bounds_guard(_arguments_of(self, args, kwargs)) as bounds,
                # a GPU computes NaN and infinity without a word: NumPy's warnings would reach the terminal
                np.errstate(all="ignore"),
            ):
                try:
                    interpreter_for(self).run(*args, grid=grid, warmup=warmup, **kwargs)
                # the rest of a long grid skipped (program_budget.py); said with the launch
                except ProgramsCut:
                    if this is not None:
                        this.programs = (programs.run, programs.total)
                finally:
                    if this is not None:
                        this.out_of_bounds = bounds.result()
            # A real launch returns the compiled kernel, and files print its `.asm["ptx"]`; compiling it
            # on every launch would slow the run down, so it is compiled when first looked at.
            return _not_yet_compiled(self, args, kwargs)
        except Exception as exc:  # noqa: BLE001 - the interpreter's gap or the kernel's bug: the launch is kept
            # The launch was recorded before it ran, so it is compiled and shown all the same; the file's
            # run goes on (its outputs are left unwritten), and the failure is said where it matters.
            if this is None:
                raise
            this.interp_error = interpreter_failure(exc, self)
            # what a GPU launch returns all the same (libraries keep it and launch it again directly)
            return _not_yet_compiled(self, args, kwargs)

    call = call_interpreted
    # (autotuner, tuning key) -> (the autotuner, the config it runs for that key, the configs it tried for it,
    # the constexprs the key leaves out as the first launch passed them)
    settled: dict[tuple, tuple[Autotuner, Any, list, dict]] = {}

    def autotune_run(self, *args, **kwargs):
        grid = kwargs.pop("grid")
        warmup = kwargs.pop("warmup", False)
        outer = (
            capture_state.autotune,
            capture_state.execute,
            capture_state.record,
            capture_state.configs,
            capture_state.recorded,
            capture_state.first,
            capture_state.tried,
        )
        key = (
            (id(self), tuning_key(self, args, kwargs))
            if len(self.configs) > 1
            else (id(self), None)
        )
        left_out, reused = left_out_of_key(self, args, kwargs), ()
        # a key benchmarked before: the GPU runs the config it chose
        if key[1] is not None and key in settled:
            _, chosen, first_tried, first_left_out = settled[key]
            reused = tuple(
                (name, first_left_out.get(name), value)
                for name, value in left_out.items()
                if first_left_out.get(name) != value
            )
            # a constexpr the key leaves out differs: a new compile of the config timing chose for the first
            # launch, which irscope cannot know (nothing is timed): every config it tried is named, none
            # compiled until asked for (workspace.Named), and the run's notes say so (capture/run.py)
            tried = list(first_tried) if reused else [chosen]
        else:  # what a GPU would try: new configs the pruning made included, numbered after the declared ones
            tried = configs_tried(self, args, {**kwargs, "grid": grid, "warmup": warmup})
            if key[1] is not None and tried:
                # the autotuner kept alive, so that its id stays its own
                settled[key] = (self, tried[0], tried, left_out)
            if len(self.configs) > 1:
                flush_as_a_benchmark_does()  # a GPU benchmarks them
        numbers = tuple(config_number(self, config) for config in tried)
        outer_reused = capture_state.reused_choice
        try:
            # First record every config the autotuner would try, without running it, so that a failure
            # while running one cannot lose the others; then run the first of them, unrecorded.
            capture_state.configs, capture_state.recorded, capture_state.tried = (
                known_configs(self),
                [],
                numbers,
            )
            capture_state.reused_choice = reused
            for number, config in zip(numbers, tried):
                capture_state.autotune, capture_state.execute, capture_state.record = (
                    (number, len(capture_state.configs)),
                    False,
                    outer[2],
                )
                capture_state.first = number == numbers[0]
                # as the autotuner does before benchmarking it
                if config.pre_hook is not None and outer[2]:
                    config.pre_hook(
                        {**dict(zip(self.arg_names, args)), **kwargs, **config_kwargs(config)}
                    )
                self.fn.run(*args, grid=grid, warmup=warmup, **kwargs, **config_kwargs(config))
            if not outer[1] or not tried or not capture_state.run_launches:
                return None
            config = tried[0]
            self.best_config = config  # what the autotuner leaves behind for callers that read it
            merged = {**kwargs, **config_kwargs(config)}
            capture_state.autotune, capture_state.execute, capture_state.record = (
                (numbers[0], len(capture_state.configs)),
                True,
                False,
            )
            if config.pre_hook is not None:
                config.pre_hook({**dict(zip(self.arg_names, args)), **merged})
            return self.fn.run(*args, grid=grid, warmup=warmup, **merged)
        finally:
            (
                capture_state.autotune,
                capture_state.execute,
                capture_state.record,
                capture_state.configs,
                capture_state.recorded,
                capture_state.first,
                capture_state.tried,
            ) = outer
            capture_state.reused_choice = outer_reused

    original_warmup = Autotuner.warmup

    def autotune_warmup(self, *args, **kwargs):
        # Autotuner.warmup compiles every config its pruning leaves (always pruned, no key, nothing run): each
        # warmup recorded as that config, as autotune_run records a launch's
        outer = (
            capture_state.autotune,
            capture_state.configs,
            capture_state.first,
            capture_state.tried,
        )
        saved = getattr(self, "nargs", None)
        self.nargs = dict(zip(self.arg_names, args))
        try:
            tried = list(self.prune_configs(kwargs))
        finally:
            self.nargs = saved
        numbers = tuple(config_number(self, config) for config in tried)
        try:
            capture_state.configs, capture_state.tried = known_configs(self), numbers
            out = []
            for number, config in zip(numbers, tried):
                capture_state.autotune, capture_state.first = (
                    (number, len(capture_state.configs)),
                    number == numbers[0],
                )
                out.append(self.fn.warmup(*args, **kwargs, **config_kwargs(config)))
            return out
        finally:
            (
                capture_state.autotune,
                capture_state.configs,
                capture_state.first,
                capture_state.tried,
            ) = outer

    original_bench = Autotuner._bench

    def bench(self, *args, config, **meta):
        # An autotuner with a run of its own benchmarks a config (autotune.py): recorded as that config
        outer = (
            capture_state.autotune,
            capture_state.execute,
            capture_state.configs,
            capture_state.recorded,
            capture_state.first,
            capture_state.tried,
        )
        if use_interpreter:
            flush_as_a_benchmark_does()  # before this config's state: the flush is no launch of it
        index = config_number(self, config)
        # inside the autotuner's own run: one of the configs it benchmarks (own_tuners.py), the first shown
        tuning = (
            capture_state.tuning if getattr(capture_state.tuning, "tuner", None) is self else None
        )
        first = tuning is not None and not tuning.numbers
        if tuning is not None and index not in tuning.numbers:
            tuning.numbers.append(index)
        try:
            (
                capture_state.configs,
                capture_state.recorded,
                capture_state.first,
                capture_state.tried,
            ) = known_configs(self), (tuning.raws if tuning else None), first, (index,)
            capture_state.autotune = (index, len(capture_state.configs))
            if not use_interpreter:
                return original_bench(self, *args, config=config, **meta)  # a real GPU times it
            capture_state.execute = False
            current = dict(meta, **config.all_kwargs())
            if config.pre_hook is not None:
                config.pre_hook({**(self.nargs or {}), **current})
            self.fn.run(*args, **current)
            return [math.nan] * 3  # _bench's quantiles (0.5, 0.2, 0.8): nothing was timed
        finally:
            (
                capture_state.autotune,
                capture_state.execute,
                capture_state.configs,
                capture_state.recorded,
                capture_state.first,
                capture_state.tried,
            ) = outer

    original_getitem = CompiledKernel.__getitem__

    def getitem(self, grid):
        # On a GPU, a compiled kernel launched by hand (`kernel = f.warmup(...)`, then `kernel[grid](*args)`:
        # tutorial 02) bypasses JITFunction.run; it is recorded as the launch of its JIT function it amounts
        # to. (The JIT itself launches through CompiledKernel.run, never here.) On the virtual GPU the
        # driver's launcher does the same (virtual_device.VirtualLauncher).
        runner = original_getitem(self, grid)

        def recorded(*args, **kwargs):
            call = by_hand_call(self.src, self.metadata, args) if capture_state.record else None
            if call is not None:
                jit, bound, options = call
                record(
                    RawLaunch(
                        jit,
                        (),
                        {**{k: as_launched(v) for k, v in bound.items()}, **options},
                        tuple(grid),
                        None,
                        None,
                        explored=capture_state.explored,
                    )
                )
            with executing():
                return runner(*args, **kwargs)

        return recorded

    forget_launches()
    JITFunction.run = run
    if use_interpreter:
        JITFunction.__call__ = call
    else:
        CompiledKernel.__getitem__ = getitem
    Autotuner.run = autotune_run
    Autotuner._bench = bench
    Autotuner.warmup = autotune_warmup
    interpret_knob = jit_decorator_kept()
    try:
        with own_runs_wrapped():
            yield
    finally:
        JITFunction.run = original_run
        JITFunction.__call__ = original_call
        CompiledKernel.__getitem__ = original_getitem
        Autotuner.run = original_autotune_run
        Autotuner._bench = original_bench
        Autotuner.warmup = original_warmup
        interpret_knob()


def flush_as_a_benchmark_does() -> None:
    """What `triton.testing.do_bench` does between runs of what it times (the autotuner's benchmarks too):
    zero a 256 MB buffer through the driver, to flush L2. Nothing is timed during a capture, but a library
    that implements `zero_` for CUDA (FlagGems) launches a kernel of its own there, which a GPU compiles: on
    a GPU the buffer is zeroed for real, and the virtual GPU's driver launches what a GPU's zeroing launches
    (virtual_device.VirtualDriver.flush_as_a_benchmark_does)."""
    try:
        active = triton_driver.active
    except RuntimeError:  # no GPU and no virtual one ("0 active drivers"): nothing to flush
        return
    flush = getattr(active, "flush_as_a_benchmark_does", None)
    if flush is not None:
        flush()
        return
    empty_cache = getattr(active, "get_empty_cache_for_benchmark", None)
    if empty_cache is not None and hasattr(active, "clear_cache"):
        active.clear_cache(empty_cache())


def _not_yet_compiled(jit: JITFunction, args: tuple, kwargs: dict) -> CompiledWhenUsed:
    """What a launch on the virtual GPU returns: the compiled kernel a real launch returns, compiled when first
    looked at (files print its `.asm["ptx"]`; libraries keep it and launch it again)."""
    return CompiledWhenUsed(lambda: compile_for_active_target(jit, args, kwargs), jit, args, kwargs)


def restore_unpatched_triton() -> None:
    """Put back what a capture patched, for a process forked in the middle of one (engine/compile/ahead.py), whose
    capture will never get to undo its patches, nor to release its locks."""
    free_locks_after_fork()
    JITFunction.run = JIT_RUN
    JITFunction.__call__ = JIT_CALL
    Autotuner.run = AUTOTUNER_RUN
    Autotuner._bench = AUTOTUNER_BENCH
    Autotuner.warmup = AUTOTUNER_WARMUP
    unwrap_own_runs()
    restore_interpreter_module()
