"""The virtual GPU: with no GPU here, the user's file sees one device of the chosen target.

`torch.cuda.is_available()` is true, `get_device_properties` describes a representative GPU of the target
(from the same table as the occupancy analysis, analysis/occupancy.py), `device="cuda"` and `.cuda()` give
CPU tensors that say they are on `cuda:0` (virtual_tensors.py), the ATen operators torch has only for CUDA
have CPU stand-ins with the CUDA operator's output shapes (virtual_aten.py), streams and events do nothing, and
Triton's driver answers for the target (triton_compat/virtual_device.py). Kernels run in Triton's
interpreter; benchmarks run their function once and return NaN, so no number is ever a measurement.

Only while the file runs, and only when there is no GPU: `virtual_gpu(target)` puts everything back on exit.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any, Callable, ContextManager, Iterator

import torch
from torch.utils._python_dispatch import _pop_mode

from irscope.analysis.occupancy import AMD_LIMITS, NVIDIA_LIMITS
from irscope.engine.patching import Patches
from irscope.engine.toolchain import cubin_resources, hsaco_resources
from irscope.engine.triton_compat import Target
from irscope.engine.triton_compat.ptxas import cuda_release
from irscope.engine.triton_compat.virtual_device import virtual_triton
from irscope.engine.virtual_gpu.aten import cuda_only_standins
from irscope.engine.virtual_gpu.cuda import (
    VirtualDeviceProperties,
    accelerator_namespace,
    cuda_namespace,
)
from irscope.engine.virtual_gpu.dispatch import (
    benchmark_flush,
    route_cuda_registrations,
    routing_stopped,
)
from irscope.engine.virtual_gpu.smi import vendor_tool
from irscope.engine.virtual_gpu.tensors import RUNNING, VirtualDeviceMode, engine_in_mode
from irscope.engine.virtual_gpu.tuning_caches import tuning_caches_aside

_STATIC_SHARED_PER_BLOCK = 48 * 1024  # NVIDIA: a block's shared memory without the opt-in attribute


def device_properties(target: Target) -> VirtualDeviceProperties:
    """`torch.cuda.get_device_properties()` of the virtual device of `target`."""
    name = target.name
    if name in NVIDIA_LIMITS:
        lim = NVIDIA_LIMITS[name]
        chip = lim.chip
        cc = int(name.removeprefix("sm_"))
        return VirtualDeviceProperties(
            name=chip.name,
            major=cc // 10,
            minor=cc % 10,
            total_memory=chip.memory_bytes,
            multi_processor_count=chip.units,
            warp_size=lim.warp_size,
            max_threads_per_multi_processor=lim.max_warps_per_sm * lim.warp_size,
            max_threads_per_block=lim.max_threads_per_block,
            regs_per_multiprocessor=lim.registers_per_sm,
            shared_memory_per_block=_STATIC_SHARED_PER_BLOCK,
            shared_memory_per_block_optin=lim.max_shared_per_block,
            shared_memory_per_multiprocessor=lim.shared_per_sm,
            L2_cache_size=chip.l2_bytes,
            clock_rate=chip.clock_khz,
            memory_clock_rate=chip.memory_clock_khz,
            memory_bus_width=chip.memory_bus_bits,
        )
    if name in AMD_LIMITS:
        lim = AMD_LIMITS[name]
        chip = lim.chip
        return VirtualDeviceProperties(
            name=chip.name,
            major=lim.isa_version[0],
            minor=lim.isa_version[1],
            total_memory=chip.memory_bytes,
            multi_processor_count=chip.units,
            warp_size=lim.wave_size,
            max_threads_per_multi_processor=lim.max_waves_per_simd
            * lim.simds_per_cu
            * lim.wave_size,
            max_threads_per_block=1024,
            regs_per_multiprocessor=_amd_registers_per_cu(lim),
            shared_memory_per_block=lim.lds_per_cu,
            shared_memory_per_block_optin=lim.lds_per_cu,
            shared_memory_per_multiprocessor=lim.lds_per_cu,
            L2_cache_size=chip.l2_bytes,
            clock_rate=chip.clock_khz,
            memory_clock_rate=chip.memory_clock_khz,
            memory_bus_width=chip.memory_bus_bits,
            gcnArchName=f"{name}:sramecc+:xnack-",
        )
    raise ValueError(f"irscope has no device table for target {name}")


def _amd_registers_per_cu(lim) -> int:
    # HIP's regsPerBlock / regsPerMultiprocessor: VGPRs per SIMD lane x SIMDs x wave size (ROCm's rocdevice.cpp)
    return lim.vgprs_per_simd_lane * lim.simds_per_cu * lim.wave_size


def triton_device_properties(target: Target) -> dict[str, Any]:
    """What `triton.runtime.driver.active.utils.get_device_properties(dev)` returns on a GPU of `target`:
    the keys of Triton's own driver (3.6 through 3.9; the HIP driver adds arch, max_threads_per_sm and
    cooperativeLaunch)."""
    p = device_properties(target)
    regs = (
        NVIDIA_LIMITS[target.name].max_registers_per_block
        if target.is_nvidia
        else p.regs_per_multiprocessor
    )
    out = {
        "max_shared_mem": p.shared_memory_per_block_optin,
        "max_num_regs": regs,
        "multiprocessor_count": p.multi_processor_count,
        "warpSize": p.warp_size,
        "sm_clock_rate": p.clock_rate,
        "mem_clock_rate": p.memory_clock_rate,
        "mem_bus_width": p.memory_bus_width,
    }
    if not target.is_nvidia:
        out.update(
            arch=p.gcnArchName,
            max_threads_per_sm=p.max_threads_per_multi_processor,
            cooperativeLaunch=1,
        )
    return out


def kernel_loader(target: Target):
    """What the virtual driver's `load_binary` reports for a compiled kernel: registers and spills read from
    the binary (cuobjdump on a cubin; the metadata note of an AMD code object), and the most threads a block
    may have with that many registers (the register file shared out per warp, as in the occupancy model)."""

    def load(kernel: bytes) -> tuple[int, int, int]:
        if target.is_nvidia:
            res = cubin_resources(kernel, 0, int(target.name.removeprefix("sm_")))
            lim = NVIDIA_LIMITS[target.name]
            regs = res.registers or 0
            per_warp = max(
                _round_up(regs * lim.warp_size, lim.register_alloc_unit), lim.register_alloc_unit
            )
            warps = (lim.registers_per_sm // lim.sub_partitions) // per_warp * lim.sub_partitions
            threads = min(lim.max_threads_per_block, warps * lim.warp_size)
        else:
            res = hsaco_resources(kernel, 0)
            lim = AMD_LIMITS[target.name]
            regs = res.registers or 0
            alloc = max(_round_up(regs, lim.vgpr_alloc_granule), lim.vgpr_alloc_granule)
            waves = min(lim.max_waves_per_simd, lim.vgprs_per_simd_lane // alloc) * lim.simds_per_cu
            threads = min(1024, waves * lim.wave_size)
        return regs, res.spills or 0, threads

    return load


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def describe_virtual_device(target: Target) -> str:
    """One line for a report's header: which device the file saw, and that it is not real."""
    props = device_properties(target)
    return (
        f"virtual {props.name} ({target.name}): no GPU here; tensors in CPU memory, kernels run in "
        f"Triton's interpreter, benchmarks run once and time nothing"
    )


def _exploring_unread(
    exploring: Callable[[], ContextManager] | None, mode: VirtualDeviceMode
) -> Callable[[], ContextManager]:
    """A sweep's exploring block (benchmark_sweep.run_sweep: its launches are recorded, none is run), with
    the file's random fills made zeros in it (VirtualDeviceMode.values_unread)."""

    @contextlib.contextmanager
    def both() -> Iterator[None]:
        with (
            exploring() if exploring is not None else contextlib.nullcontext(),
            mode.values_unread(),
        ):
            yield

    return both


# One virtual GPU at a time in this process: torch.cuda is a module, shared by every thread.
_lock = threading.RLock()


@contextlib.contextmanager
def virtual_gpu(
    target: Target,
    asked: set[str] | None = None,
    notes: list[str] | None = None,
    exploring: Callable[[], ContextManager] | None = None,
    untimed: Callable[[], ContextManager] | None = None,
) -> Iterator[VirtualDeviceProperties]:
    """While the block runs, this process has one GPU of `target` (see the module's docstring).

    Each question about what the device is (its capability, properties, name, architectures; through
    torch.cuda or Triton's driver) is added to `asked`: a file that asked and then launched nothing may
    be written for another GPU (retarget.py). What a benchmark's sweep did not run is added to `notes`; the
    sweeps run inside `exploring()` (the capture budget's quiet_paused), torch work on GPU-sized tensors inside
    `untimed()` (its quiet_not_counted).

    The device mode applies to the calling thread (torch function modes are per thread). On exit, every
    patched attribute is restored, the mode and any mode or default device the file pushed above it are
    popped, and torch's default device is what it was."""
    props = device_properties(target)
    with _lock:
        forget_device_properties()  # Inductor's answer for an earlier virtual GPU of this process
        patches = Patches()
        patch = patches.patch

        default_device = _default_device_context()
        depth = torch._C._len_torch_function_stack()
        try:
            cuda = cuda_namespace(props, target.name, asked)
            for name, value in cuda.items():
                patch(torch.cuda, name, value)
            accelerator = getattr(torch, "accelerator", None)
            if accelerator is not None:
                for name, value in accelerator_namespace(cuda).items():
                    if hasattr(accelerator, name):
                        patch(accelerator, name, value)
            if not target.is_nvidia:
                # code that picks a backend asks torch.version.hip
                patch(torch.version, "hip", "6.4.0")
            elif torch.version.cuda is None:
                # and torch.version.cuda, None on a CPU build: a library's `is_cuda()` (torch.cuda.is_available()
                # and torch.version.cuda is not None) said no, and jvp-flash-attention took its non-TMA
                # forward and num_stages 2 where an H100 takes _attn_fwd_tma and 5. The CUDA release of
                # the ptxas Triton compiles with: what the GPU's Triton would run with
                # (where Triton has no ptxas to ask, any release: the libraries ask whether there is one)
                patch(torch.version, "cuda", cuda_release(props.major * 10 + props.minor) or "12.8")
            mode = VirtualDeviceMode(untimed)
            with (
                virtual_triton(
                    target,
                    triton_device_properties(target),
                    (props.major, props.minor),
                    kernel_loader(target),
                    asked,
                    notes,
                    _exploring_unread(exploring, mode),
                    benchmark_flush=benchmark_flush,
                ),
                vendor_tool(props.name, target.is_nvidia),
                tuning_caches_aside(),
                cuda_only_standins(),
            ):
                mode.__enter__()
                RUNNING.append(mode)
                # the backward pass sees the GPU too
                for owner in (
                    torch.autograd,
                    torch.autograd.graph,
                ):
                    original = getattr(owner, "_engine_run_backward", None)
                    if original is not None:
                        patch(owner, "_engine_run_backward", engine_in_mode(mode, original))
                dispatch_depth = torch._C._len_torch_dispatch_stack()
                patch(
                    torch.library.Library,
                    "impl",
                    route_cuda_registrations(torch.library.Library.impl),
                )
                try:
                    yield props
                finally:
                    RUNNING.remove(mode)
                    for said in (mode.unfilled_note(), mode.uncomputed_note()):
                        if said and notes is not None:
                            notes.append(said)
                    while torch._C._len_torch_dispatch_stack() > dispatch_depth:
                        _pop_mode()
                    routing_stopped()
                    while torch._C._len_torch_function_stack() > depth:
                        torch._C._pop_torch_function_stack()
                    _restore_default_device_context(default_device)
        finally:
            patches.restore()
            forget_device_properties()


def _default_device_context() -> tuple:
    """`torch.set_default_device` keeps its mode in a thread-local and the device in a module global; the
    file may set one (to "cuda")."""
    import torch.utils._device as device_module

    holder = getattr(torch, "_GLOBAL_DEVICE_CONTEXT", None)
    return getattr(holder, "device_context", None), getattr(device_module, "CURRENT_DEVICE", None)


def _restore_default_device_context(previous: tuple) -> None:
    import torch.utils._device as device_module

    holder = getattr(torch, "_GLOBAL_DEVICE_CONTEXT", None)
    if holder is not None:
        holder.device_context = previous[0]
    if hasattr(device_module, "CURRENT_DEVICE"):
        device_module.CURRENT_DEVICE = previous[1]


def forget_device_properties() -> None:
    """Inductor asks the device what it is once a process: `DeviceProperties.create` (which a kernel's
    triton_meta carries) and `CacheBase.get_system` (the device's name, in the key of its FX graph cache) are
    cached. A virtual GPU of another target later in the same process got the first one's answers, and its
    kernels the first target's capability (compiled_block.py opened for sm_80, then for sm_90 in one process:
    cc 80 both times; irscope's tests open many files in one process). Forgotten whenever a virtual GPU comes
    or goes. Only where Inductor is loaded already."""
    hints = sys.modules.get("torch._inductor.runtime.hints")
    codecache = sys.modules.get("torch._inductor.codecache")
    create = getattr(getattr(hints, "DeviceProperties", None), "create", None)
    system = getattr(getattr(codecache, "CacheBase", None), "get_system", None)
    for cached in (getattr(create, "__func__", create), system):
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()
