"""Torch operators that a library implements for CUDA, run on the virtual GPU.

Kernel libraries such as flag-gems replace ATen operators for the CUDA device with their own Python
functions, which launch Triton kernels (`torch.library` registrations under the CUDA dispatch key). A CPU
build of torch has no CUDA kernels of its own, so a registration there is the library's. On a GPU, an
operator on CUDA tensors would run it; with the virtual GPU the tensors live in CPU memory and torch
would pick its CPU kernel instead. `LibraryCudaKernels` sends such an operator, when a tensor argument is
on the virtual GPU, to the CUDA registration, as a GPU would: its launches are then captured.

Only with a CPU build of torch: a CUDA build (on a machine whose GPU is hidden or absent) has CUDA kernels
of its own for every operator, which cannot run on CPU memory, and a library's registration cannot be
told from them; there the operators run on the CPU and the library's kernels are not captured.

The mode is pushed only once the file registers a CUDA kernel (`route_cuda_registrations`): any torch
dispatch mode makes torch import TorchDynamo on the next operator, over a second that a file with no
such library should not pay."""

from __future__ import annotations

import threading

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .virtual_tensors import _is_host

_CUDA = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)


def _on_virtual_gpu(values) -> bool:
    for value in values:
        if isinstance(value, torch.Tensor) and not _is_host(value):
            return True
        if isinstance(value, (list, tuple)) and _on_virtual_gpu(value):
            return True
    return False


class LibraryCudaKernels(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if (torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), "CUDA")
                and (_on_virtual_gpu(args) or _on_virtual_gpu(kwargs.values()))):
            return func.redispatch(_CUDA, *args, **kwargs)
        return func(*args, **kwargs)


_routed = threading.local()


def route_cuda_registrations(original_impl):
    """`torch.library.Library.impl`, which also starts routing (in the registering thread, the file's)
    when a kernel is registered for the CUDA dispatch key."""
    def impl(self, op_name, fn, dispatch_key="", *args, **kwargs):
        result = original_impl(self, op_name, fn, dispatch_key, *args, **kwargs)
        key = str(dispatch_key or kwargs.get("dispatch_key", ""))
        if key == "CUDA" and not getattr(_routed, "on", False):
            LibraryCudaKernels().__enter__()  # popped by virtual_gpu() with every mode the run pushed
            _routed.on = True
        return result
    return impl


def routing_stopped() -> None:
    """The run is over and its modes are popped: the next run starts without routing."""
    _routed.on = False
