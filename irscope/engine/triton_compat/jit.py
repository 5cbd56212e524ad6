"""Kernels in a user's module: unwrapping autotuners and heuristics, binding a launch's arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import triton
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.interpreter import InterpretedFunction
from triton.runtime.jit import JITFunction, KernelInterface

from irscope.engine.triton_compat.autotune import known_configs


@dataclass
class UnwrappedKernel:
    jit: JITFunction
    autotune_configs: list[Any] | None  # triton.Config objects, when @triton.autotune wraps it
    heuristics: list[str]  # names of values @triton.heuristics fills in


def unwrap_kernel(obj: Any) -> UnwrappedKernel | None:
    """Peel @triton.autotune / @triton.heuristics off a module attribute; None if it is no kernel."""
    configs = None
    heuristics: list[str] = []
    seen = 0
    while seen < 16:
        seen += 1
        if isinstance(obj, JITFunction):
            return UnwrappedKernel(obj, configs, heuristics)
        if isinstance(obj, InterpretedFunction):
            # The file forced TRITON_INTERPRET=1 itself: rebuild the JIT function it would have been.
            return UnwrappedKernel(
                JITFunction(obj.fn, **_jit_kwargs(obj.kwargs)), configs, heuristics
            )
        if isinstance(obj, Autotuner):
            # the declared ones, then those its pruning made in the run
            configs = list(known_configs(obj))
            obj = obj.fn
        elif isinstance(obj, Heuristics):
            heuristics.extend(obj.values.keys())
            obj = obj.fn
        elif isinstance(obj, KernelInterface) and getattr(obj, "fn", None) is not None:
            # a library's own wrapper of the kernel interface (FlagGems' LibEntry), around the JIT function
            obj = obj.fn
        else:
            return None
    return None


def _jit_kwargs(kwargs: dict) -> dict:
    allowed = {
        "version",
        "do_not_specialize",
        "do_not_specialize_on_alignment",
        "debug",
        "noinline",
        "repr",
        "launch_metadata",
    }
    return {k: v for k, v in kwargs.items() if k in allowed}


def config_kwargs(config) -> dict:
    """A triton.Config as the keyword arguments the autotuner would launch with."""
    return dict(config.all_kwargs())


def bind_arguments(jit: JITFunction, args: tuple, kwargs: dict, partial: bool = False) -> dict:
    """The kernel's parameters by name, defaults applied (what a grid lambda receives as `meta`). With
    `partial`, a parameter the launch left out is left out here too, for -D to give (else TypeError)."""
    params = set(jit.signature.parameters)
    bind = jit.signature.bind_partial if partial else jit.signature.bind
    bound = bind(*args, **{k: v for k, v in kwargs.items() if k in params})
    bound.apply_defaults()
    return {**kwargs, **bound.arguments}


def descriptor_param_values(value: Any) -> list | None:
    """The values a host-side tensor descriptor (triton.tools.tensor_descriptor.TensorDescriptor) is passed
    as in the compiled kernel's parameters, or None for any other argument. NVIDIA's launcher
    (make_tensordesc_arg, Triton 3.6 to 3.9) passes the 128-byte TMA descriptor, then the shape, then the
    strides: one PTX parameter each. The descriptor's bytes are not an address irscope follows (None)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    if not isinstance(value, TensorDescriptor):
        return None
    return [None, *(int(n) for n in value.shape), *(int(n) for n in value.strides)]


def kernel_param_names(jit: JITFunction) -> list[str]:
    return [p.name for p in jit.params]


def kernel_source(jit: Any) -> str:
    """The kernel function's source text as Triton holds it (empty for what is not a JITFunction)."""
    return getattr(jit, "src", "") or ""


def constexpr_param_names(jit: JITFunction) -> list[str]:
    return [p.name for p in jit.params if p.is_constexpr]


def param_defaults(jit: JITFunction) -> dict[str, Any]:
    return {p.name: p.default for p in jit.params if p.has_default}


def jit_decorator_kept() -> Callable[[], None]:
    """Keep `@triton.jit` making JITFunctions while the user's file runs, even when the file sets
    TRITON_INTERPRET=1 itself: an InterpretedFunction cannot be compiled, and its launches would pass the
    capture by. Without a GPU the launches run in the interpreter anyway. Returns the undo."""
    knobs = getattr(triton, "knobs", None)
    runtime = getattr(knobs, "runtime", None)
    if runtime is None or "interpret" not in vars(type(runtime)):
        return lambda: None
    runtime.interpret = False

    def undo() -> None:
        try:
            del runtime.interpret
        except AttributeError:
            pass

    return undo
