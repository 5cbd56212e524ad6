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

An operator that torch implements as a composite of others (`aten::rms_norm`, CompositeImplicitAutograd)
never reaches a dispatch mode whole: on CPU tensors it is taken apart above the mode, while on a GPU the
library's CUDA kernel replaces it. For such an operator the route also registers, for the run, a kernel
under AutogradCPU that calls the library's kernel when a tensor argument is on the virtual GPU, and takes
the operator apart as torch would otherwise (host tensors, or once the library is gone).

The mode is pushed only once the file registers a CUDA kernel (`route_cuda_registrations`): any torch
dispatch mode makes torch import TorchDynamo on the next operator, over a second that a file with no
such library should not pay."""

from __future__ import annotations

import threading

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from irscope.engine.triton_compat.capture import launches_not_run
from irscope.engine.virtual_gpu.registrations import (
    forget_registrations,
    library_kernel,
    note_registration,
)
from irscope.engine.virtual_gpu.tensors import is_host

_CUDA = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)


def _on_virtual_gpu(values) -> bool:
    for value in values:
        if isinstance(value, torch.Tensor) and not is_host(value):
            return True
        if isinstance(value, (list, tuple)) and _on_virtual_gpu(value):
            return True
    return False


class LibraryCudaKernels(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if (
            library_kernel(func.name())
            and torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), "CUDA")
            and (_on_virtual_gpu(args) or _on_virtual_gpu(kwargs.values()))
        ):
            return func.redispatch(_CUDA, *args, **kwargs)
        return func(*args, **kwargs)


_routed = threading.local()
_composites: list = []  # the run's own Library of AutogradCPU kernels for composite operators (0 or 1)
_composite_names: set[str] = set()  # the operators it holds a kernel for


def _overload(name: str):
    """torch.ops' OpOverload for "ns::op" or "ns::op.overload"."""
    namespace, _, rest = name.partition("::")
    op, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), op), overload or "default")


def _route_composite(name: str, original_impl) -> None:
    """See the module's docstring: a composite operator the file's library implements for CUDA."""
    if name in _composite_names or not torch._C._dispatch_has_kernel_for_dispatch_key(
        name, "CompositeImplicitAutograd"
    ):
        return
    try:
        op = _overload(name)
    except (AttributeError, RuntimeError):  # a name torch.ops cannot resolve: left as it was
        return

    def kernel(*args, **kwargs):
        if library_kernel(name) and (_on_virtual_gpu(args) or _on_virtual_gpu(kwargs.values())):
            return op.redispatch(_CUDA, *args, **kwargs)
        return op.decompose(*args, **kwargs)

    if not _composites:
        _composites.append(torch.library.Library(name.partition("::")[0], "IMPL"))
    library = _composites[0]
    if library.ns != name.partition("::")[0]:
        return  # one namespace's composites only (aten's, in every library seen)
    original_impl(library, name.partition("::")[2], kernel, "AutogradCPU")
    _composite_names.add(name)


def _operator_name(library, op_name) -> str | None:
    # an OpOverload, or text
    name = op_name.name() if callable(getattr(op_name, "name", None)) else op_name
    if not isinstance(name, str):
        return None
    return name if "::" in name else f"{library.ns}::{name}"


def route_cuda_registrations(original_impl):
    """`torch.library.Library.impl`, which also notes a kernel registered for the CUDA dispatch key and
    starts routing (in the registering thread, the file's)."""

    def impl(self, op_name, fn, dispatch_key="", *args, **kwargs):
        result = original_impl(self, op_name, fn, dispatch_key, *args, **kwargs)
        key = str(
            dispatch_key or kwargs.get("dispatch_key") or getattr(self, "dispatch_key", "") or ""
        )
        name = _operator_name(self, op_name) if key == "CUDA" else None
        if name is not None:
            note_registration(name, self)
            _route_composite(name, original_impl)
            if not getattr(_routed, "on", False):
                LibraryCudaKernels().__enter__()  # popped by virtual_gpu() with every mode the run pushed
                _routed.on = True
        return result

    return impl


# triton.testing.do_bench's buffer on a CUDA GPU (256 MB of int32), which it zeroes to flush L2
_FLUSH_INTS = 256 * 1024 * 1024 // 4
_flush_buffer: list = []  # 0 or 1 buffer, made on first use in a run


def benchmark_flush() -> None:
    """What Triton's do_bench does on a GPU between runs of what it times: `cache.zero_()` of its buffer.
    Where the file's library implements `zero_` for CUDA (FlagGems under `use_gems()`), a GPU runs the
    library's kernel there (FlagGems' zeros_kernel, compiled during the first benchmark): so it runs here
    too, on a buffer of that size on the virtual GPU, and its launch is captured. Otherwise nothing: nothing
    is timed, nothing needs flushing, and nobody reads the buffer: the launch is recorded, not run (the
    interpreter would spend its budget on 65,536 programs). Called inside a library's own operator too (its
    autotuner benchmarks there), where no mode of the run is on: so the library's kernel is called as the
    route calls it."""
    if not library_kernel("aten::zero_"):
        return
    if not _flush_buffer:
        # a CPU tensor no mode marks as the host's: on the virtual GPU
        with torch._C.DisableTorchFunction():
            _flush_buffer.append(torch.empty(_FLUSH_INTS, dtype=torch.int))
    with launches_not_run():
        torch.ops.aten.zero_.default.redispatch(_CUDA, _flush_buffer[0])


def routing_stopped() -> None:
    """The run is over and its modes are popped: the next run starts without routing."""
    _routed.on = False
    forget_registrations()
    _flush_buffer.clear()
    for library in _composites:
        library._destroy()
    _composites.clear()
    _composite_names.clear()
