"""Launching a captured launch again on a real GPU, and timing it as Triton's own benchmarking does.

Measured mode (irscope/engine/measure) needs the kernel to run again with the launch's arguments: it calls
`JITFunction.run` with the launch's positional and keyword arguments (constexprs and launch options
included, the autotuner's chosen config among them), so the JIT picks the very binary the launch ran.
The arguments are copies, so a kernel that writes in place leaves the file's tensors alone.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
import triton
import triton.testing


def gpu_properties() -> dict[str, Any]:
    """The GPU's properties as Triton's driver reads them (clock rates in kHz, bus width in bits), with
    torch's device name, memory and L2 size."""
    props = dict(
        triton.runtime.driver.active.utils.get_device_properties(torch.cuda.current_device())
    )
    props["name"] = torch.cuda.get_device_name()
    # what Triton's driver does not report, from torch's
    device = torch.cuda.get_device_properties(torch.cuda.current_device())
    props["total_memory"] = getattr(device, "total_memory", 0)
    props["l2_cache_size"] = getattr(device, "L2_cache_size", 0)
    return props


def _copy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        # a host stand-in for a GPU tensor the capture let go of (capture/held_memory.py) goes back
        released_from = getattr(value, "released_from", None)
        return value.to(released_from) if released_from else value.clone()
    return value


def relaunch(jit, args: tuple, kwargs: dict, grid: tuple[int, ...]) -> Callable[[], Any]:
    """A function that launches `jit` once with copies of the launch's arguments (copied once, here)."""
    copied_args = tuple(_copy(a) for a in args)
    copied_kwargs = {k: _copy(v) for k, v in kwargs.items()}
    grid = tuple(grid)

    def launch() -> Any:
        return jit.run(*copied_args, grid=grid, warmup=False, **copied_kwargs)

    return launch


def bench(launch: Callable[[], Any]) -> tuple[float, float, float]:
    """Median, 20th and 80th percentile in milliseconds, by `triton.testing.do_bench` with its own
    warm-up and repetitions (it flushes the L2 cache before each run)."""
    q50, q20, q80 = triton.testing.do_bench(launch, quantiles=[0.5, 0.2, 0.8])
    return float(q50), float(q20), float(q80)


def release_cached_memory() -> None:
    """Hand the GPU memory torch caches but no tensor uses back to the driver, before Nsight Compute's
    child runs the file again beside this process: ncu needs free memory of its own to save and restore
    the kernel's buffers between replays ("Insufficient free memory for profiling" otherwise, as
    tutorial 05 got on the H100)."""
    import gc

    gc.collect()
    torch.cuda.empty_cache()
