"""Triton's side of the virtual GPU: the active driver, `triton.testing`'s benchmarks.

With no GPU, a file written for one still asks Triton about its device: tutorials size their grids from
`driver.active.utils.get_device_properties(dev)["multiprocessor_count"]`, and end in a benchmark sweep
(`@triton.testing.perf_report` … `.run()`) that calls `triton.testing.do_bench`. Here the driver answers
from the target's table (the caller passes the dict), and every benchmark runs its function once and
returns NaN: the kernels still launch (so irscope captures them), no number is ever a measurement, and
arithmetic on the result (`gbps(ms)`) stays NaN. A sweep runs one point: its first x value, each line
(provider) once; one point is enough to capture each kernel a line launches, and the later points only
repeat them at larger sizes, which in the interpreter would take minutes.

`virtual_triton(...)` installs all of it and puts everything back on exit.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import time
from typing import Any, Callable, ContextManager, Iterator

import torch
import triton.testing as _testing
from triton.runtime.driver import driver as _driver_registry

from . import Target, _CpuDriver
from .capture import launches_recorded, launches_not_run
from .compiled import by_hand_call
from ..patching import Patches

NOT_MEASURED = math.nan  # what every virtual benchmark returns


# What "loading" a compiled kernel tells its CompiledKernel: (n_regs, n_spills, n_max_threads), from its binary.
KernelLoader = Callable[[bytes], tuple[int, int, int]]


class _VirtualUtils:
    """`driver.active.utils` of the virtual device."""

    def __init__(self, properties: dict[str, Any], capability: tuple[int, int], loader: KernelLoader,
                 asked: set[str] | None = None):
        self._properties = properties
        self._capability = capability
        self._loader = loader
        self._asked = asked if asked is not None else set()  # the questions the file asked (virtual_gpu.py)

    def get_device_properties(self, device=0) -> dict[str, Any]:
        self._asked.add("driver.active.utils.get_device_properties")
        return dict(self._properties)

    def get_device_capability(self, device=0) -> tuple[int, int]:
        self._asked.add("driver.active.get_device_capability")
        return self._capability

    def load_binary(self, name, kernel: bytes, shared, device):
        """(module, function, n_regs, n_spills, n_max_threads), as a GPU driver's: the handles are 0 (nothing
        is loaded), the numbers are read from the binary, as the real driver does."""
        return (0, 0, *self._loader(kernel))

    def unload_module(self, module) -> None:
        pass


class VirtualLauncher:
    """`driver.active.launcher_cls` of the virtual device. A compiled kernel launched by hand becomes a
    launch of its JIT function (compiled.by_hand_call), so irscope captures it and the interpreter runs it."""

    def __init__(self, src, metadata):
        self.src, self.metadata = src, metadata

    def __call__(self, grid_x, grid_y, grid_z, stream, function, packed_metadata, launch_metadata, enter_hook,
                 exit_hook, *args):
        call = by_hand_call(self.src, self.metadata, args)
        if call is None:
            raise RuntimeError("irscope: this compiled kernel has no @triton.jit source, so the virtual GPU "
                               "cannot run it; launch the @triton.jit function instead")
        jit, bound, options = call
        jit.run(grid=(grid_x, grid_y, grid_z), warmup=False, **bound, **options)


class VirtualDriver(_CpuDriver):
    """The active driver while a file runs on the virtual GPU: the torch device it names is `cuda:0`
    (which the virtual GPU's tensors report), the device interface is `torch.cuda` (patched by the
    virtual GPU), compiled kernels "load" and launch (VirtualLauncher), and benchmarks run once."""

    launcher_cls = VirtualLauncher

    def __init__(self, target: Target, properties: dict[str, Any], capability: tuple[int, int],
                 loader: KernelLoader, asked: set[str] | None = None):
        super().__init__(target)
        self.utils = _VirtualUtils(properties, capability, loader, asked)
        self.get_device_capability = self.utils.get_device_capability

    def get_active_torch_device(self):
        return torch.device("cuda", 0)

    def get_device_interface(self):
        return torch.cuda

    def get_benchmarker(self):
        return do_bench_once

    def get_empty_cache_for_benchmark(self):
        # A real driver returns a 256 MB buffer it zeroes between runs to flush L2; nothing is timed here.
        return torch.empty(0, dtype=torch.int32)

    def clear_cache(self, cache) -> None:
        pass


def _not_measured(quantiles=None, return_mode: str = "mean"):
    """NaN in the shape Triton's do_bench returns: a list for `quantiles` (one value unwrapped) or
    `return_mode="all"` (one run), else one number."""
    if quantiles is not None:
        values = [NOT_MEASURED] * len(quantiles)
        return values[0] if len(values) == 1 else values
    if return_mode == "all":
        return [NOT_MEASURED]
    return NOT_MEASURED


def do_bench_once(fn: Callable, warmup=None, rep=None, grad_to_none=None, quantiles=None, return_mode="mean",
                  **_ignored):
    """`triton.testing.do_bench` on the virtual GPU: run `fn` once, return NaN (nothing is timed)."""
    fn()
    return _not_measured(quantiles, return_mode)


def do_bench_cudagraph_once(fn: Callable, rep=None, grad_to_none=None, quantiles=None, return_mode="mean",
                            **_ignored):
    """`triton.testing.do_bench_cudagraph` (and the Proton variants) on the virtual GPU: as do_bench_once."""
    fn()
    return _not_measured(quantiles, return_mode)


SWEEP_S = 8.0  # the most a report's sweeps explore on the virtual GPU (IRSCOPE_SWEEP_S)
SWEEP_QUIET_S = 1.5  # a sweep ends after this long without a new specialization (the file's quiet time is 3 s)


def _seconds(name: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(name, default)))
    except ValueError:
        return default


def run_sweep(mark, show_plots=False, print_data=False, save_path="", return_df=False, *, notes: list[str],
              exploring: Callable[[], ContextManager] = contextlib.nullcontext, **kwargs):
    """`Mark.run` on the virtual GPU: each benchmark of the report at its x values, to find the
    specializations its sizes make (a GPU compiles one wherever a size changes a power-of-two block size or a
    divisibility: tutorial 02's softmax compiles one per power of two of its row length).

    First every benchmark of the report runs at its first x value, every line once (do_bench runs its
    function once): a report's benchmarks differ in what makes specializations (head size, causal or not,
    forward or backward), so each is seen before any is explored. Then the other x values of each benchmark
    are visited in an order that spreads over the range (sweep_order), with only the lines that launched a
    kernel at the first. Throughout, launches are recorded and not run (capture.launches_not_run): nothing is
    timed, so their results are not needed. Exploring a benchmark ends after SWEEP_QUIET_S without a new
    specialization, at a point that raises, or when the report's SWEEP_S are up (a GPU runs every point in a
    fraction of that; here each point's inputs are made on the CPU); what was not run is added to `notes`.
    The exploring runs inside `exploring()`: the file's run is not stopped for want of new launches while
    irscope looks for them (the capture budget's limit still holds). Nothing is plotted, printed as a table,
    or saved. Returns None."""
    benchmarks = mark.benchmarks if isinstance(mark.benchmarks, (list, tuple)) else [mark.benchmarks]

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
            for index in sweep_order(len(bench.x_vals), _first_values(bench.x_vals))[1:] if lines else []:
                now = time.monotonic()
                if now - last_new > _seconds("IRSCOPE_SWEEP_QUIET", SWEEP_QUIET_S):
                    why = f"nothing new in its last {now - last_new:.1f} s"
                    break
                if now - started > _seconds("IRSCOPE_SWEEP_S", SWEEP_S):
                    why = f"the report's {_seconds('IRSCOPE_SWEEP_S', SWEEP_S):g} s were up"
                    break
                before = launches_recorded(new_only=True)
                try:
                    with launches_not_run():
                        run_at(bench, bench.x_vals[index], lines)
                except Exception as exc:  # noqa: BLE001 - a size the virtual GPU cannot run: exploring ends here
                    why = f"x = {bench.x_vals[index]} raised {type(exc).__name__}"
                    break
                ran += 1
                if launches_recorded(new_only=True) > before:
                    last_new = time.monotonic()
        total = len(bench.x_vals)
        shown = ", ".join(str(v) for v in lines) or "none"
        print(f"irscope: benchmark {name!r} ran at {min(ran, total)} of its {total} points, its kernel lines "
              f"({shown}) at each (virtual GPU: nothing timed)")
        if lines and ran < total:
            notes.append(f"benchmark {name!r} ran its kernel lines ({shown}) at {ran} of its {total} x values "
                         f"({why}); a GPU runs them all, and a size not run may make a specialization not shown "
                         f"(IRSCOPE_SWEEP_S / IRSCOPE_SWEEP_QUIET give the sweep longer)")
    return None


def sweep_order(count: int, values: list | None = None) -> list[int]:
    """0, then the last, then midpoints of ever finer halves: a sweep cut short has still seen its whole range.
    With `values` all positive numbers, the midpoint of a span is the one nearest its middle on a log scale:
    block sizes follow powers of two, which crowd at the small end of a linear sweep."""
    if count <= 0:
        return []
    logs = None
    if values is not None and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in values):
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


def run_first_point(mark, show_plots=False, print_data=False, save_path="", return_df=False, **kwargs):
    """`Mark.run` at each benchmark's first x value, each line once: what validation/gpu_fidelity.py's real
    side runs with FIDELITY_FIRST_POINT (the virtual GPU runs run_sweep).

    Nothing is plotted, printed as a table, or saved: there is no measurement to show. One line per
    benchmark says what ran. Returns None (there is no data frame to return)."""
    benchmarks = mark.benchmarks if isinstance(mark.benchmarks, (list, tuple)) else [mark.benchmarks]
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
        print(f"irscope: benchmark {bench.plot_name or mark.fn.__name__!r} ran once at {point} for "
              f"{bench.line_arg} = {lines} (virtual GPU: nothing timed)")
    return None


class VirtualBlas:
    """Triton's bindings of the vendor BLAS (`nvidia.cublas.CublasLt`, `amd.hipblas.HipblasLt`), which
    tutorials build at import as their baseline: the same products, computed by torch in float32 on the
    CPU (a baseline launches no Triton kernel, so nothing of it is shown). Block-scaled products need the
    real library."""

    def __init__(self, workspace=None):
        self.workspace = workspace

    def matmul(self, a, b, c) -> None:
        """C = A @ B^T, with A (M, K), B (N, K), C (M, N), as Triton's binding."""
        c.copy_((a.float() @ b.float().T).to(c.dtype))

    def gemm(self, a, b, c, d, alpha: float, beta: float) -> None:
        """D = alpha * A @ B^T + beta * C."""
        d.copy_((alpha * (a.float() @ b.float().T) + beta * c.float()).to(d.dtype))

    def __getattr__(self, name: str):
        raise RuntimeError(f"irscope: the virtual GPU has no vendor BLAS for {name}; only matmul and gemm "
                           f"are computed (on the CPU)")


def _vendor_blas_modules() -> list[tuple[Any, str]]:
    """(module, class name) of each vendor-BLAS binding this Triton build has."""
    found = []
    try:
        from triton._C import libtriton
    except ImportError:  # pragma: no cover - Triton always has its extension
        return found
    for backend, module, name in (("nvidia", "cublas", "CublasLt"), ("amd", "hipblas", "HipblasLt")):
        owner = getattr(getattr(libtriton, backend, None), module, None)
        if owner is not None and hasattr(owner, name):
            found.append((owner, name))
    return found


_TESTING_PATCHES = {
    "do_bench": do_bench_once,
    "do_bench_cudagraph": do_bench_cudagraph_once,
    "do_bench_proton": do_bench_once,                      # Triton 3.9 on
    "do_bench_cudagraph_proton": do_bench_cudagraph_once,  # Triton 3.9 on
}


@contextlib.contextmanager
def virtual_triton(target: Target, properties: dict[str, Any], capability: tuple[int, int],
                   loader: KernelLoader, asked: set[str] | None = None, notes: list[str] | None = None,
                   exploring: Callable[[], ContextManager] | None = None) -> Iterator[None]:
    """Make Triton see a device of `target` while the block runs: `properties` is what
    `get_device_properties` answers, `loader` reads a compiled kernel's numbers from its binary; each
    question about the device the file asks the driver is added to `asked`, and what a benchmark's sweep
    left out (run_sweep) to `notes`; the sweep's later points run inside `exploring()`."""
    saved_active = _driver_registry._active
    patches = Patches()
    patch = patches.patch
    try:
        _driver_registry.set_active(VirtualDriver(target, properties, capability, loader, asked))
        for name, fn in _TESTING_PATCHES.items():
            if hasattr(_testing, name):
                patch(_testing, name, fn)
        patch(_testing.Mark, "run", functools.partialmethod(run_sweep, notes=notes if notes is not None else [],
                                                            exploring=exploring or contextlib.nullcontext))
        for owner, name in _vendor_blas_modules():
            patch(owner, name, VirtualBlas)
        yield
    finally:
        patches.restore()
        _driver_registry._active = saved_active

__all__ = ["NOT_MEASURED", "VirtualDriver", "do_bench_once", "run_first_point", "run_sweep", "virtual_triton"]
