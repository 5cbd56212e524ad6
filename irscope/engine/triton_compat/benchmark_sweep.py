"""`triton.testing`'s benchmarks while irscope captures a file: run to find the specializations, never timed.

A GPU runs every x value of a `perf_report`'s benchmarks, and compiles a kernel wherever a size changes a
power-of-two block size, a divisibility or a constexpr derived from it. Timing them is not what a capture is
for, and takes long: on the virtual GPU each point's inputs are made on the CPU, and on a real GPU a report
times every point of every benchmark (tutorial 06: six minutes). So on either device irscope runs a bounded
exploration instead (run_sweep) and says what it left out, and every do_bench runs its function once and
returns NaN (benchmarks_run_once). validation/gpu_fidelity.py's real side can run each benchmark at its first
point alone (run_first_point).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import time
from typing import Callable, ContextManager, Iterator

import triton.testing as _testing

from irscope.engine.patching import Patches
from irscope.engine.triton_compat.capture import (
    flush_as_a_benchmark_does,
    launches_explored,
    launches_not_run,
    launches_recorded,
)

NOT_MEASURED = math.nan  # what every benchmark returns while a file is captured

SWEEP_S = (
    3.0  # the most a report's sweeps explore (IRSCOPE_SWEEP_S): each specialization found is named
)
SWEEP_QUIET_S = (
    1.5  # a sweep ends after this long without a new specialization (the file's quiet time is 3 s)
)


def _seconds(name: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(name, default)))
    except ValueError:
        return default


def run_sweep(
    mark,
    show_plots=False,
    print_data=False,
    save_path="",
    return_df=False,
    *,
    notes: list[str],
    exploring: Callable[[], ContextManager] = contextlib.nullcontext,
    **kwargs,
):
    """`Mark.run` on the virtual GPU: each benchmark of the report at its x values, to find the
    specializations its sizes make (a GPU compiles one wherever a size changes a power-of-two block size or a
    divisibility: tutorial 02's softmax compiles one per power of two of its row length).

    First every benchmark of the report runs at its first x value, every line once (do_bench runs its
    function once): a report's benchmarks differ in what makes specializations (head size, causal or not,
    forward or backward), so each is seen before any is explored. Then the other x values of each benchmark
    are visited in an order that spreads over the range (sweep_order), with only the lines that launched a
    kernel at the first. Throughout, launches are recorded and not run (capture.launches_not_run): nothing is
    timed, so their results are not needed. The launches of the later points are marked explored
    (capture.launches_explored): their specializations are named when the file opens and compiled only when
    asked for (workspace.Workspace.named), since each compile costs seconds. Exploring a benchmark ends
    after SWEEP_QUIET_S without a new specialization, at a point that raises, or when the report's SWEEP_S
    are up (a GPU runs every point in a fraction of that; here each point's inputs are made on the CPU);
    what was not run is added to `notes`.
    The exploring runs inside `exploring()`: the file's run is not stopped for want of new launches while
    irscope looks for them (the capture budget's limit still holds). Nothing is plotted, printed as a table,
    or saved. Returns None."""
    benchmarks = (
        mark.benchmarks if isinstance(mark.benchmarks, (list, tuple)) else [mark.benchmarks]
    )

    def run_at(bench, point, lines) -> None:
        x_names = list(bench.x_names)
        values = list(point) if isinstance(point, (list, tuple)) else [point] * len(x_names)
        if len(values) != len(x_names):
            raise ValueError(f"Expected {len(x_names)} values, got {point}")
        for line in lines:
            mark.fn(**dict(zip(x_names, values)), **{bench.line_arg: line}, **bench.args, **kwargs)

    kernel_lines: list[list] = []
    with exploring(), launches_not_run():
        for bench in benchmarks:  # each benchmark at its first point, every line
            kernel_lines.append([])
            for line in bench.line_vals[:] if bench.x_vals else []:
                launched = launches_recorded()
                run_at(bench, bench.x_vals[0], [line])
                if launches_recorded() > launched:
                    kernel_lines[-1].append(line)
    started = time.monotonic()
    for bench, lines in zip(benchmarks, kernel_lines):
        name = bench.plot_name or mark.fn.__name__
        ran, why, last_new = 1, "", time.monotonic()
        with exploring():
            for index in (
                sweep_order(len(bench.x_vals), _first_values(bench.x_vals))[1:] if lines else []
            ):
                now = time.monotonic()
                if now - last_new > _seconds("IRSCOPE_SWEEP_QUIET", SWEEP_QUIET_S):
                    why = f"nothing new in its last {now - last_new:.1f} s"
                    break
                if now - started > _seconds("IRSCOPE_SWEEP_S", SWEEP_S):
                    why = f"the report's {_seconds('IRSCOPE_SWEEP_S', SWEEP_S):g} s were up"
                    break
                before = launches_recorded(new_only=True)
                try:
                    with launches_not_run(), launches_explored():
                        run_at(bench, bench.x_vals[index], lines)
                except Exception as exc:  # noqa: BLE001 - a size the virtual GPU cannot run: exploring ends here
                    why = f"x = {bench.x_vals[index]} raised {type(exc).__name__}"
                    break
                ran += 1
                if launches_recorded(new_only=True) > before:
                    last_new = time.monotonic()
        total = len(bench.x_vals)
        shown = ", ".join(str(v) for v in lines) or "none"
        print(
            f"irscope: benchmark {name!r} ran at {min(ran, total)} of its {total} points, its kernel lines "
            f"({shown}) at each (nothing timed)"
        )
        if lines and ran < total:
            notes.append(
                f"benchmark {name!r} ran its kernel lines ({shown}) at {ran} of its {total} x values "
                f"({why}); a GPU runs them all, and a size not run may make a specialization not shown "
                f"(IRSCOPE_SWEEP_S / IRSCOPE_SWEEP_QUIET give the sweep longer)"
            )
    return None


def sweep_order(count: int, values: list | None = None) -> list[int]:
    """0, then the last, then midpoints of ever finer halves: a sweep cut short has still seen its whole range.
    With `values` all positive numbers, the midpoint of a span is the one nearest its middle on a log scale:
    block sizes follow powers of two, which crowd at the small end of a linear sweep."""
    if count <= 0:
        return []
    logs = None
    if values is not None and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in values
    ):
        logs = [math.log(v) for v in values]
    order, seen = [0], {0}
    spans = [(0, count - 1)]
    if count > 1:
        order.append(count - 1)
        seen.add(count - 1)
    while spans:
        finer = []
        for low, high in spans:
            middle = (low + high) // 2
            if logs is not None and high - low > 1:
                target = (logs[low] + logs[high]) / 2
                middle = min(range(low + 1, high), key=lambda i: abs(logs[i] - target))
            if middle not in seen:
                seen.add(middle)
                order.append(middle)
            if middle - low > 1:
                finer.append((low, middle))
            if high - middle > 1:
                finer.append((middle, high))
        spans = finer
    return order


def _first_values(points: list) -> list:
    """A sweep's x values by their first name (a point may give one value for several names)."""
    return [p[0] if isinstance(p, (list, tuple)) and p else p for p in points]


def run_first_point(
    mark, show_plots=False, print_data=False, save_path="", return_df=False, **kwargs
):
    """`Mark.run` at each benchmark's first x value, each line once: what validation/gpu_fidelity.py's real
    side runs with FIDELITY_FIRST_POINT (the virtual GPU runs run_sweep).

    Nothing is plotted, printed as a table, or saved: there is no measurement to show. One line per
    benchmark says what ran. Returns None (there is no data frame to return)."""
    benchmarks = (
        mark.benchmarks if isinstance(mark.benchmarks, (list, tuple)) else [mark.benchmarks]
    )
    for bench in benchmarks:
        x_names = list(bench.x_names)
        if not bench.x_vals:
            continue
        first = bench.x_vals[0]
        values = list(first) if isinstance(first, (list, tuple)) else [first] * len(x_names)
        if len(values) != len(x_names):
            raise ValueError(f"Expected {len(x_names)} values, got {first}")
        x_args = dict(zip(x_names, values))
        for line in bench.line_vals:
            mark.fn(**x_args, **{bench.line_arg: line}, **bench.args, **kwargs)
        point = ", ".join(f"{k}={v}" for k, v in x_args.items())
        lines = ", ".join(str(v) for v in bench.line_vals)
        print(
            f"irscope: benchmark {bench.plot_name or mark.fn.__name__!r} ran once at {point} for "
            f"{bench.line_arg} = {lines} (nothing timed)"
        )
    return None


def _not_measured(quantiles=None, return_mode: str = "mean"):
    """NaN in the shape Triton's do_bench returns: a list for `quantiles` (one value unwrapped) or
    `return_mode="all"` (one run), else one number."""
    if quantiles is not None:
        values = [NOT_MEASURED] * len(quantiles)
        return values[0] if len(values) == 1 else values
    if return_mode == "all":
        return [NOT_MEASURED]
    return NOT_MEASURED


_timed_depth = [0]  # the benchmarks whose timed function runs now (do_bench_once and the like)


def inside_a_benchmark() -> bool:
    """Whether the code running now is a benchmark's timed function, whose results the benchmark discards."""
    return _timed_depth[0] > 0


@contextlib.contextmanager
def _timed() -> Iterator[None]:
    _timed_depth[0] += 1
    try:
        yield
    finally:
        _timed_depth[0] -= 1


def do_bench_once(
    fn: Callable,
    warmup=None,
    rep=None,
    grad_to_none=None,
    quantiles=None,
    return_mode="mean",
    **_ignored,
):
    """`triton.testing.do_bench` while a file is captured: run `fn` once and flush L2 as do_bench does
    (capture.flush_as_a_benchmark_does), return NaN: nothing is timed."""
    with _timed():
        fn()
    flush_as_a_benchmark_does()
    return _not_measured(quantiles, return_mode)


def do_bench_cudagraph_once(
    fn: Callable, rep=None, grad_to_none=None, quantiles=None, return_mode="mean", **_ignored
):
    """`triton.testing.do_bench_cudagraph` (and the Proton variants) while a file is captured: as do_bench_once."""
    with _timed():
        fn()
    return _not_measured(quantiles, return_mode)


_BENCHMARKS_RUN_ONCE = {
    "do_bench": do_bench_once,
    "do_bench_cudagraph": do_bench_cudagraph_once,
    "do_bench_proton": do_bench_once,  # Triton 3.9 on
    "do_bench_cudagraph_proton": do_bench_cudagraph_once,  # Triton 3.9 on
}


@contextlib.contextmanager
def benchmarks_run_once(
    notes: list[str] | None, exploring: Callable[[], ContextManager] | None
) -> Iterator[None]:
    """While the block runs, `triton.testing`'s benchmarks capture instead of measuring, on the virtual GPU and
    on a real one: every do_bench runs its function once and returns NaN, and a `perf_report`'s `Mark.run` runs
    its sweep as run_sweep does (what it leaves out added to `notes`, its exploring inside `exploring()`). On a
    GPU, timing each point of a report used the capture budget's quiet time (tutorial 06 was stopped inside its
    first benchmark, 140 compilations not seen); irscope measures on its own (`--measure`)."""
    patches = Patches()
    for name, fn in _BENCHMARKS_RUN_ONCE.items():
        if hasattr(_testing, name):
            patches.patch(_testing, name, fn)
    patches.patch(
        _testing.Mark,
        "run",
        functools.partialmethod(
            run_sweep,
            notes=notes if notes is not None else [],
            exploring=exploring or contextlib.nullcontext,
        ),
    )
    try:
        yield
    finally:
        patches.restore()
