"""Running one program of a launch in Triton's interpreter, with hooks on its memory accesses (the stepper
and the coalescing analysis)."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import triton
from triton.runtime.jit import JITFunction

from irscope.engine.triton_compat.driver import interpreter_lock
from irscope.engine.triton_compat.jit import constexpr_param_names, unwrap_kernel
from irscope.engine.triton_compat.kernel_prints import kernel_prints
from irscope.engine.triton_compat.lang_patch import (
    call_interpreted,
    interpreter_for,
    launch_patch,
)


@dataclass
class MemoryHook:
    """What one load, store or atomic of the interpreter is about to touch.

    `addresses` are raw byte addresses (uint64, the access's shape); `mask` is None when every lane is
    active. Returned before the access happens, so a hook may raise to stop an out-of-bounds access.
    """

    kind: str  # "load" | "store" | "atomic"
    addresses: Any
    mask: Any
    elem_bytes: int
    dtype: str


def interpreter_value(value) -> tuple[Any, str, bool, bool] | None:
    """An interpreter tensor as (numpy data, element dtype name, is_pointer, is_block); None otherwise.

    Pointers are raw uint64 addresses; bf16 and fp8 arrive as their integer bit patterns, as the
    interpreter stores them.
    """
    handle = getattr(value, "handle", None)
    data = getattr(handle, "data", None)
    if data is None or not hasattr(data, "dtype") or not hasattr(value, "type"):
        return None
    ty = value.type
    is_block = bool(getattr(ty, "is_block", lambda: False)())
    scalar = ty.scalar if hasattr(ty, "scalar") else ty
    is_pointer = bool(getattr(scalar, "is_ptr", lambda: False)())
    name = str(scalar.element_ty) if is_pointer else str(scalar)
    return data, name, is_pointer, is_block


def pointer_elem_bytes(dtype_name: str) -> int:
    bits = getattr(
        triton.language,
        dtype_name.replace("fp", "float").replace("bf16", "bfloat16").replace("i1", "int1"),
        None,
    )
    width = getattr(bits, "primitive_bitwidth", 8)
    return max(1, width // 8)


def _elem_bytes_of(handle) -> tuple[int, str]:
    ty = handle.get_element_ty()
    return max(1, ty.primitive_bitwidth // 8), str(ty)


@contextlib.contextmanager
def memory_ops_replaced(builder, load, store, atomic_rmw, atomic_cas) -> Iterator[None]:
    """The interpreter builder's memory operations replaced on the instance for the block (instance attributes
    shadow the class's methods; `create_load` and `create_store` go through the masked ones), then put back as
    they were (a replacement already there, from an enclosing block, included)."""
    patches = {
        "create_masked_load": load,
        "create_masked_store": store,
        "create_atomic_rmw": atomic_rmw,
        "create_atomic_cas": atomic_cas,
    }
    saved = {name: builder.__dict__[name] for name in patches if name in builder.__dict__}
    builder.__dict__.update(patches)
    try:
        yield
    finally:
        for name in patches:
            builder.__dict__.pop(name, None)
        builder.__dict__.update(saved)


@contextlib.contextmanager
def _memory_hooks(builder, on_access: Callable[[MemoryHook], None]) -> Iterator[None]:
    """Report every load/store/atomic the interpreter's builder makes (instance attributes shadow
    the class's methods, so `create_load` → `self.create_masked_load` goes through here too)."""
    import numpy as np

    cls = type(builder)

    def lanes(mask_handle):
        if mask_handle is None:
            return None
        mask = np.asarray(mask_handle.data, dtype=bool)
        return None if mask.all() else mask

    def masked_load(ptrs, mask, other, *args, **kwargs):
        size, name = _elem_bytes_of(ptrs)
        on_access(MemoryHook("load", ptrs.data, lanes(mask), size, name))
        return cls.create_masked_load(builder, ptrs, mask, other, *args, **kwargs)

    def masked_store(ptrs, value, mask, *args, **kwargs):
        size, name = _elem_bytes_of(ptrs)
        on_access(MemoryHook("store", ptrs.data, lanes(mask), size, name))
        return cls.create_masked_store(builder, ptrs, value, mask, *args, **kwargs)

    def atomic_rmw(op, ptr, val, mask, *args, **kwargs):
        size, name = _elem_bytes_of(ptr)
        on_access(MemoryHook("atomic", ptr.data, lanes(mask), size, name))
        return cls.create_atomic_rmw(builder, op, ptr, val, mask, *args, **kwargs)

    def atomic_cas(ptr, cmp, val, *args, **kwargs):
        size, name = _elem_bytes_of(ptr)
        on_access(MemoryHook("atomic", ptr.data, None, size, name))
        return cls.create_atomic_cas(builder, ptr, cmp, val, *args, **kwargs)

    with memory_ops_replaced(builder, masked_load, masked_store, atomic_rmw, atomic_cas):
        yield


@dataclass
class FlopHook:
    """Floating-point work one arithmetic op of the interpreter does, counted as Nsight Compute's roofline counts
    the instructions Triton lowers it to: an add, subtract or multiply is one operation per element, a fused
    multiply-add two, a `tl.dot` two per multiply-accumulate (M x N x K of them, on the tensor cores; adding its
    result to an accumulator is the dot's own accumulate, not counted again); an
    exponential or a logarithm one (the multiply by log2(e) or ln(2) around the SFU's ex2 or lg2), a division one
    (the multiply by the SFU's reciprocal). A `tl.sum` is `kind` "reduce": `flops` holds its outputs, and the
    roofline counts its adds from the block's threads (`recording.work`). Square roots and the other SFU
    functions are not counted, as there."""

    dtype: str  # the operands' element type: "fp32", "fp16", "bf16", "fp64", "fp8e4nv", ...
    elements: int  # the elements of the op's result (1 for a scalar); a reduction's input
    flops: int
    kind: str = "elementwise"  # or "tensor" (a dot), "reduce" (a sum)


def _float_name(handle) -> str | None:
    dtype = getattr(handle, "dtype", None)
    scalar = getattr(dtype, "scalar", dtype)
    if scalar is None or not getattr(scalar, "is_floating", lambda: False)():
        return None
    return str(scalar)


# Builder ops and the FLOPs per element of what Triton lowers them to (FlopHook).
_ELEMENTWISE_FLOPS = {
    "create_fadd": 1,
    "create_fsub": 1,
    "create_fmul": 1,
    "create_fma": 2,
    "create_exp": 1,
    "create_log": 1,
    "create_fdiv": 1,
}


@contextlib.contextmanager
def _flop_hooks(builder, on_flops: Callable[[FlopHook], None]) -> Iterator[None]:
    """Report the floating-point work of each elementwise op, dot and sum the interpreter runs (builder ops
    patched on the instance, as `_memory_hooks` does; the interpreter's sum on its class, for the run)."""
    from triton.runtime import interpreter as interp

    cls = type(builder)

    # the last dot's result: `acc += tl.dot(a, b)` adds it to the accumulator, an add Triton folds into the
    # dot's own accumulate (its combine pass), so not one the hardware runs
    last_dot: list = [None]

    def elementwise(name: str, per_element: int):
        original = getattr(cls, name)

        def counted(*operands):
            dtype = _float_name(operands[0])
            folded = name == "create_fadd" and any(o is last_dot[0] for o in operands)
            if dtype is not None and not folded:
                elements = int(getattr(operands[0].data, "size", 1))
                on_flops(FlopHook(dtype, elements, elements * per_element))
            last_dot[0] = None
            return original(builder, *operands)

        return counted

    def dot(a, b, d, *args, **kwargs):
        dtype = _float_name(a)
        if dtype is not None:
            a_shape, b_shape = a.data.shape, b.data.shape
            products = int(math.prod(a_shape)) * int(
                b_shape[-1]
            )  # (.., M, K) x (.., K, N): M x K x N
            elements = int(math.prod(a_shape[:-1])) * int(b_shape[-1])
            on_flops(FlopHook(dtype, elements, 2 * products, "tensor"))
        last_dot[0] = result = cls.create_dot(builder, a, b, d, *args, **kwargs)
        return result

    original_sum = interp.ReduceOps.sum

    def reduce_sum(ops, value):
        result = original_sum(ops, value)
        dtype = _float_name(value.handle)
        if dtype is not None:
            outputs = int(getattr(result.handle.data, "size", 1))
            on_flops(FlopHook(dtype, int(value.handle.data.size), outputs, "reduce"))
        return result

    patches = {name: elementwise(name, n) for name, n in _ELEMENTWISE_FLOPS.items()}
    patches["create_dot"] = dot
    for name, fn in patches.items():
        setattr(builder, name, fn)
    interp.ReduceOps.sum = reduce_sum
    try:
        yield
    finally:
        interp.ReduceOps.sum = original_sum
        for name in patches:
            builder.__dict__.pop(name, None)


def jit_code_ids(jit: JITFunction) -> set[tuple[str, str]]:
    """(file, function name) of the kernel and of every @triton.jit function its module can see:
    the interpreter re-creates each function from source, so code objects are matched by these."""
    ids = {(jit.fn.__code__.co_filename, jit.fn.__name__)}
    for value in list(jit.fn.__globals__.values()):
        unwrapped = unwrap_kernel(value) if not isinstance(value, type) else None
        if unwrapped is not None:
            fn = unwrapped.jit.fn
            ids.add((fn.__code__.co_filename, fn.__name__))
    return ids


def run_one_program(
    jit: JITFunction,
    arguments: dict[str, Any],
    grid: tuple[int, int, int],
    program_id: tuple[int, int, int],
    on_access: Callable[[MemoryHook], None] | None = None,
    trace: Callable | None = None,
    on_flops: Callable[[FlopHook], None] | None = None,
) -> None:
    """Run one program of a launch in Triton's interpreter, on the tensors given (they are written to).

    `arguments` maps every kernel parameter to its value (tensors on the CPU; constexprs as plain
    values). What Triton's GridExecutor does for the whole grid, done for one grid index: patch
    triton.language for the interpreter (and undo it after), turn tensors into pointers, set the grid.
    `trace` is installed with sys.settrace for the run (this thread only); `on_flops` hears of each
    floating-point add, multiply, FMA and dot. Exceptions of the kernel propagate unchanged.
    """
    import sys

    from triton.runtime import interpreter as interp

    constexprs = set(constexpr_param_names(jit))
    with interpreter_lock, kernel_prints():
        fn = interpreter_for(jit).rewrite()
        scope = launch_patch(jit.fn)
        original_call = JITFunction.__call__
        JITFunction.__call__ = call_interpreted
        try:
            args = {
                name: value if name in constexprs else interp._implicit_cvt(value)
                for name, value in arguments.items()
            }
            builder = interp.interpreter_builder
            builder.set_grid_dim(*grid)
            builder.set_grid_idx(*program_id)
            memory = _memory_hooks(builder, on_access) if on_access else contextlib.nullcontext()
            flops = _flop_hooks(builder, on_flops) if on_flops else contextlib.nullcontext()
            with memory, flops:
                previous = sys.gettrace()
                if trace is not None:
                    sys.settrace(trace)
                try:
                    fn(**args)
                finally:
                    if trace is not None:
                        sys.settrace(previous)
        finally:
            JITFunction.__call__ = original_call
            scope.restore()


def reinterpreted_tensor(value) -> tuple[Any, Callable[[Any], Any]] | None:
    """A tensor argument the kernel gets wrapped, as (the tensor, a function that wraps a copy of it the same
    way): `triton.reinterpret(t, dtype)`, or a host tensor descriptor (Triton's `TensorDescriptor`, Gluon's:
    a dataclass whose `base` is the tensor), whose loads and stores reach the base's memory."""
    import dataclasses

    import torch
    from triton.runtime.jit import TensorWrapper

    if isinstance(value, TensorWrapper):
        return value.base, lambda copy: TensorWrapper(copy, value.dtype)
    if (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and isinstance(getattr(value, "base", None), torch.Tensor)
    ):
        return value.base, lambda copy: dataclasses.replace(value, base=copy)
    return None


def kernel_parameters(jit: JITFunction, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Every kernel parameter bound to the launch's value, defaults applied, launch options dropped."""
    params = [p.name for p in jit.params]
    bound = jit.signature.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in params})
    bound.apply_defaults()
    return dict(bound.arguments)


def interpreter_failure(exc: BaseException, jit: JITFunction) -> str:
    """One line: what stopped the interpreter, and the kernel line where it stopped when known."""
    import traceback

    path = jit.fn.__code__.co_filename
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path:
            line = frame.lineno
    # the interpreter wraps the real error: InterpreterError(repr(err))
    while exc.__cause__ is not None:
        exc = exc.__cause__
        line = next(
            (
                f.lineno
                for f in reversed(traceback.extract_tb(exc.__traceback__))
                if f.filename == path
            ),
            line,
        )
    text = str(exc).strip().splitlines()
    detail = f"{type(exc).__name__}: {text[-1]}" if text else type(exc).__name__
    return f"{detail} (at line {line})" if line else detail
