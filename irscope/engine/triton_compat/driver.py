"""Targets from Triton's, the local GPU, and Triton's driver stood in for on machines with no GPU."""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

import torch
from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver as _driver_registry

from irscope.analysis.launch_stats import chip_of
from irscope.base.chip import Chip
from irscope.base.errors import IrscopeError
from irscope.base.names import DEFAULT_TARGET, target_name
from irscope.base.target import Target  # defined apart so that front ends can hold one
from irscope.engine.triton_compat.measure import gpu_properties
from irscope.engine.triton_compat.originals import TORCH_HAS_GPU


def gpu_target_of(target: Target) -> GPUTarget:
    """Triton's GPUTarget for an irscope Target."""
    if target.is_nvidia:
        return GPUTarget("cuda", int(target.name.removeprefix("sm_")), 32)
    return GPUTarget("hip", target.name, 64)


def target_from_gpu_target(gpu_target: GPUTarget) -> Target:
    if gpu_target.backend == "cuda":
        return Target(f"sm_{gpu_target.arch}")
    return Target(str(gpu_target.arch))


def local_gpu_target() -> Target | None:
    """The target of the GPU in this machine, carrying that GPU (`Target.chip`: its name, SMs, L2 and DRAM as
    its driver reports them), or None when there is none (or it is hidden)."""
    try:
        if not TORCH_HAS_GPU():
            return None
        target = target_from_gpu_target(_driver_registry.default.get_current_target())
    except Exception:  # no driver, no device, a broken install: all mean "no local GPU"
        return None
    try:
        return Target(target.name, chip=Chip.of_device(gpu_properties(), chip_of(target)))
    except Exception:  # properties the driver would not give: the target's representative chip then
        return target


# --------------------------------------------------------------------------------------------
# A driver for machines with no GPU


class CpuDriver:
    """Stands in for Triton's GPU driver where there is none.

    Tutorial-style files ask the driver for the torch device (`get_active_torch_device`); Triton's
    own JIT asks it for the current target. Both get a CPU answer, so the file runs unchanged on CPU
    tensors and the compile targets whatever irscope was told to.
    """

    def __init__(self, target: Target):
        self.target = target

    def get_active_torch_device(self):
        return torch.device("cpu")

    def get_current_target(self) -> GPUTarget:
        return gpu_target_of(self.target)

    def get_current_device(self):
        # JITFunction caches its binder per device: one "device" per target keeps them apart.
        return f"irscope:{self.target.name}"

    def get_current_stream(self, device=None):
        return 0

    def set_current_device(self, device):
        pass

    def get_device_interface(self):
        return torch.cpu

    def is_active(self) -> bool:
        return True

    def get_benchmarker(self):
        raise RuntimeError("irscope: no GPU here, so nothing can be benchmarked")

    class utils:
        """A CompiledKernel "loaded" on the virtual GPU (triton_compat/virtual_device.py) unloads itself when it
        is collected, which may be after the file's run, when this driver is the active one."""

        @staticmethod
        def unload_module(module) -> None:
            pass


_driver_lock = threading.RLock()

# Triton's interpreter keeps its state in module globals (the builder's grid index, the patched
# triton.language), so only one program runs at a time in this process, and no compile runs meanwhile.
interpreter_lock = threading.RLock()


def free_locks_after_fork() -> None:
    """In a process forked in the middle of a capture, which never returns to the frames that took these
    locks: unlock them. A launch the file made on a thread of its own forks its compile child while the
    capture holds interpreter_lock on the file's main thread, a thread the child does not have: the child
    waited for it until irscope took it to be stuck, and the worker compiled the kernel itself."""
    for lock in (interpreter_lock, _driver_lock):
        lock._at_fork_reinit()


@contextlib.contextmanager
def active_driver(driver) -> Iterator[None]:
    with _driver_lock:
        previous = _driver_registry._active
        _driver_registry.set_active(driver)
        try:
            yield
        finally:
            _driver_registry._active = previous


def install_cpu_driver(target: Target) -> None:
    """Make `triton.runtime.driver.active` answer on a machine with no GPU."""
    _driver_registry.set_active(CpuDriver(target))


def resolve_target(name: str | None) -> Target:
    """`--target`, or the local GPU, or sm_90. A target naming the local GPU's is that GPU's (it carries the
    GPU's own figures, `Target.chip`)."""
    local = local_gpu_target()
    if name is None:
        return local or Target(DEFAULT_TARGET)
    try:
        wanted = Target(target_name(name))
    except ValueError as err:
        raise IrscopeError(str(err)) from None
    return local if local == wanted else wanted
