"""Torch operators that a library implements for CUDA, run on the virtual GPU.

Kernel libraries such as flag-gems replace ATen operators for the CUDA device with their own Python
functions, which launch Triton kernels (`torch.library` registrations under the CUDA dispatch key). On a
GPU, an operator on CUDA tensors would run it; with the virtual GPU the tensors live in CPU memory and torch
would pick its CPU kernel instead. `LibraryCudaKernels` sends such an operator, when a tensor argument is
on the virtual GPU, to the CUDA registration, as a GPU would: its launches are then captured.

Which operators: those the file registers for CUDA through `torch.library.Library.impl` while it runs
(flag-gems' `enable()`, `only_enable()`, `use_gems()`; `torch.library.impl(..., "cuda")`), as long as
the registering `Library` is alive and not destroyed (`use_gems()` takes its registrations back on exit).
Only those: a CUDA build of torch (on a machine whose GPU is hidden or absent) has CUDA kernels of its own
for every operator, which cannot run on CPU memory; the registrations irscope saw made are the library's
on any build.

The mode is pushed only once the file registers a CUDA kernel (`route_cuda_registrations`): any torch
dispatch mode makes torch import TorchDynamo on the next operator, over a second that a file with no
such library should not pay."""

from __future__ import annotations

import threading
import weakref

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


# operator name ("aten::add.Tensor") -> the Libraries that registered a CUDA kernel for it during the run
_registered: dict[str, list[weakref.ref]] = {}


def _library_kernel(name: str) -> bool:
    """Does a live `Library` that the file made hold this operator's CUDA kernel?"""
    return any(lib is not None and getattr(lib, "m", None) is not None
               for lib in (ref() for ref in _registered.get(name, ())))


class LibraryCudaKernels(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if (_library_kernel(func.name()) and torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), "CUDA")
                and (_on_virtual_gpu(args) or _on_virtual_gpu(kwargs.values()))):
            return func.redispatch(_CUDA, *args, **kwargs)
        return func(*args, **kwargs)


_routed = threading.local()


def _operator_name(library, op_name) -> str | None:
    name = op_name.name() if callable(getattr(op_name, "name", None)) else op_name  # an OpOverload, or text
    if not isinstance(name, str):
        return None
    return name if "::" in name else f"{library.ns}::{name}"


def route_cuda_registrations(original_impl):
    """`torch.library.Library.impl`, which also notes a kernel registered for the CUDA dispatch key and
    starts routing (in the registering thread, the file's)."""
    def impl(self, op_name, fn, dispatch_key="", *args, **kwargs):
        result = original_impl(self, op_name, fn, dispatch_key, *args, **kwargs)
        key = str(dispatch_key or kwargs.get("dispatch_key") or getattr(self, "dispatch_key", "") or "")
        name = _operator_name(self, op_name) if key == "CUDA" else None
        if name is not None:
            _registered.setdefault(name, []).append(weakref.ref(self))
            if not getattr(_routed, "on", False):
                LibraryCudaKernels().__enter__()  # popped by virtual_gpu() with every mode the run pushed
                _routed.on = True
        return result
    return impl


def routing_stopped() -> None:
    """The run is over and its modes are popped: the next run starts without routing."""
    _routed.on = False
    _registered.clear()
