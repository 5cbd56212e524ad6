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
from typing import Any, Callable, ContextManager, Iterator

import torch
from triton.runtime.driver import driver as _driver_registry

from irscope.engine.patching import Patches
from irscope.engine.triton_compat import CpuDriver, Target
from irscope.engine.triton_compat.benchmark_sweep import (
    NOT_MEASURED,
    benchmarks_run_once,
    do_bench_once,
    inside_a_benchmark,
)
from irscope.engine.triton_compat.compiled import by_hand_call

# What "loading" a compiled kernel tells its CompiledKernel: (n_regs, n_spills, n_max_threads), from its binary.
KernelLoader = Callable[[bytes], tuple[int, int, int]]


class _VirtualUtils:
    """`driver.active.utils` of the virtual device."""

    def __init__(
        self,
        properties: dict[str, Any],
        capability: tuple[int, int],
        loader: KernelLoader,
        asked: set[str] | None = None,
    ):
        self._properties = properties
        self._capability = capability
        self._loader = loader
        # the questions the file asked (virtual_gpu.py)
        self._asked = asked if asked is not None else set()

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

    def __call__(
        self,
        grid_x,
        grid_y,
        grid_z,
        stream,
        function,
        packed_metadata,
        launch_metadata,
        enter_hook,
        exit_hook,
        *args,
    ):
        call = by_hand_call(self.src, self.metadata, args)
        if call is None:
            raise RuntimeError(
                "irscope: this compiled kernel has no @triton.jit source, so the virtual GPU "
                "cannot run it; launch the @triton.jit function instead"
            )
        jit, bound, options = call
        jit.run(grid=(grid_x, grid_y, grid_z), warmup=False, **bound, **options)


class VirtualDriver(CpuDriver):
    """The active driver while a file runs on the virtual GPU: the torch device it names is `cuda:0`
    (which the virtual GPU's tensors report), the device interface is `torch.cuda` (patched by the
    virtual GPU), compiled kernels "load" and launch (VirtualLauncher), and benchmarks run once."""

    launcher_cls = VirtualLauncher

    def __init__(
        self,
        target: Target,
        properties: dict[str, Any],
        capability: tuple[int, int],
        loader: KernelLoader,
        asked: set[str] | None = None,
        benchmark_flush: Callable[[], None] | None = None,
    ):
        super().__init__(target)
        self.utils = _VirtualUtils(properties, capability, loader, asked)
        self.get_device_capability = self.utils.get_device_capability
        self._benchmark_flush = benchmark_flush

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

    def flush_as_a_benchmark_does(self) -> None:
        """What `triton.testing.do_bench` does on a GPU between runs of what it times (the autotuner's
        benchmarks included): zero its 256 MB buffer with `Tensor.zero_`, to flush L2. Nothing is timed here,
        so nothing needs flushing; but a library that implements `zero_` for CUDA launches its own kernel
        there on a GPU, which the virtual GPU's `benchmark_flush` launches too (virtual_gpu/dispatch.py)."""
        if self._benchmark_flush is not None:
            self._benchmark_flush()


class VirtualBlas:
    """Triton's bindings of the vendor BLAS (`nvidia.cublas.CublasLt`, `amd.hipblas.HipblasLt`), which
    tutorials build at import as their baseline: the same products, computed by torch in float32 on the
    CPU (a baseline launches no Triton kernel, so nothing of it is shown). Block-scaled products need the
    real library.

    A product a benchmark times is not computed: the benchmark discards what it writes, and on the CPU an
    8192 x 8192 x 16384 baseline takes half a minute (Gluon tutorial 07's sweep over K ran into the capture's
    quiet time inside it). Its output is left as it was; the count goes into one note (`skipped`)."""

    skipped = [0]  # the products left out in benchmarks while this virtual GPU is on

    def __init__(self, workspace=None):
        self.workspace = workspace

    def matmul(self, a, b, c) -> None:
        """C = A @ B^T, with A (M, K), B (N, K), C (M, N), as Triton's binding."""
        if not self._timed_by_a_benchmark():
            c.copy_((a.float() @ b.float().T).to(c.dtype))

    def gemm(self, a, b, c, d, alpha: float, beta: float) -> None:
        """D = alpha * A @ B^T + beta * C."""
        if not self._timed_by_a_benchmark():
            d.copy_((alpha * (a.float() @ b.float().T) + beta * c.float()).to(d.dtype))

    def _timed_by_a_benchmark(self) -> bool:
        """Whether this product is one a benchmark times (then counted as skipped)."""
        if inside_a_benchmark():
            self.skipped[0] += 1
            return True
        return False

    def __getattr__(self, name: str):
        raise RuntimeError(
            f"irscope: the virtual GPU has no vendor BLAS for {name}; only matmul and gemm "
            f"are computed (on the CPU)"
        )


def _vendor_blas_modules() -> list[tuple[Any, str]]:
    """(module, class name) of each vendor-BLAS binding this Triton build has."""
    found = []
    try:
        from triton._C import libtriton
    except ImportError:  # pragma: no cover - Triton always has its extension
        return found
    for backend, module, name in (
        ("nvidia", "cublas", "CublasLt"),
        ("amd", "hipblas", "HipblasLt"),
    ):
        owner = getattr(getattr(libtriton, backend, None), module, None)
        if owner is not None and hasattr(owner, name):
            found.append((owner, name))
    return found


@contextlib.contextmanager
def virtual_triton(
    target: Target,
    properties: dict[str, Any],
    capability: tuple[int, int],
    loader: KernelLoader,
    asked: set[str] | None = None,
    notes: list[str] | None = None,
    exploring: Callable[[], ContextManager] | None = None,
    benchmark_flush: Callable[[], None] | None = None,
) -> Iterator[None]:
    """Make Triton see a device of `target` while the block runs: `properties` is what
    `get_device_properties` answers, `loader` reads a compiled kernel's numbers from its binary; each
    question about the device the file asks the driver is added to `asked`, and what a benchmark's sweep
    left out (run_sweep) to `notes`; the sweep's later points run inside `exploring()`. `benchmark_flush` does
    on the device what a GPU's benchmark does between runs (VirtualDriver.flush_as_a_benchmark_does)."""
    saved_active = _driver_registry._active
    patches = Patches()
    patch = patches.patch
    try:
        _driver_registry.set_active(
            VirtualDriver(target, properties, capability, loader, asked, benchmark_flush)
        )
        for owner, name in _vendor_blas_modules():
            patch(owner, name, VirtualBlas)
        VirtualBlas.skipped[0] = 0
        with benchmarks_run_once(notes, exploring):
            yield
        if VirtualBlas.skipped[0] and notes is not None:
            notes.append(
                f"{VirtualBlas.skipped[0]} vendor-BLAS product(s) (cuBLAS / hipBLASLt) timed by a benchmark "
                "were not computed on the virtual GPU: the benchmark discards what they write, and their "
                "outputs were left as they were"
            )
    finally:
        patches.restore()
        _driver_registry._active = saved_active


__all__ = ["NOT_MEASURED", "VirtualDriver", "do_bench_once", "virtual_triton"]
