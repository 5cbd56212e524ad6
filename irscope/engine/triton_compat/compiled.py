"""What a launch returns on the virtual GPU: a stand-in for Triton's CompiledKernel, compiled when first
looked at, and launchable again directly as libraries do."""

from __future__ import annotations

from typing import Any, Callable

from triton.runtime.driver import driver as _driver_registry
from triton.runtime.jit import JITFunction

from irscope.engine.triton_compat.capture_state import capture_state
from irscope.engine.triton_compat.compiler import compile_specialized, specialize
from irscope.engine.triton_compat.driver import target_from_gpu_target
from irscope.engine.triton_compat.jit import (
    bind_arguments,
    constexpr_param_names,
    kernel_param_names,
)


class CompiledWhenUsed:
    """What a launch returns on the virtual GPU: the CompiledKernel a GPU launch would, compiled the
    first time an attribute of it is read. Launched again directly, `kernel[grid](*args)` (libraries keep
    the kernel a first launch returned and launch it so afterwards: FlagGems' LibEntry), it is a launch of
    the same JITFunction with the constexprs of the first, run in the interpreter."""

    def __init__(
        self,
        compile_it: Callable[[], Any],
        jit: JITFunction | None = None,
        args: tuple = (),
        kwargs: dict | None = None,
    ):
        self._compile_it = compile_it
        self._kernel = None
        self._jit, self._args, self._kwargs = jit, args, dict(kwargs or {})

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if self._kernel is None:
            self._kernel = self._compile_it()
        return getattr(self._kernel, name)

    def __getitem__(self, grid):
        if self._jit is None:
            raise TypeError("this kernel cannot be launched again directly")
        return lambda *args: self._launch(grid, args)

    def _launch(self, grid, args: tuple) -> None:
        names = kernel_param_names(self._jit)
        constexprs = set(constexpr_param_names(self._jit))
        first = bind_arguments(self._jit, self._args, self._kwargs)
        # every parameter, constexprs too (how Triton 3.3-3.6's kernels take them)
        if len(args) == len(names):
            values = dict(zip(names, args))
        # the runtime arguments; constexprs as compiled
        elif len(args) == len(names) - len(constexprs):
            values = {
                **{n: first[n] for n in names if n in constexprs and n in first},
                **dict(zip([n for n in names if n not in constexprs], args)),
            }
        else:
            raise TypeError(
                f"{self._jit.__name__} takes {len(names) - len(constexprs)} runtime arguments "
                f"({len(names)} with its constexprs); {len(args)} were given"
            )
        options = {
            k: v for k, v in self._kwargs.items() if k not in names
        }  # num_warps, num_stages, ...
        # The GPU would run the binary of the first launch again, whatever these arguments would specialize
        # to: nothing new to compile or show, so the launch runs in the interpreter unrecorded.
        recording = capture_state.record
        capture_state.record = False
        try:
            self._jit.run(grid=tuple(grid), warmup=False, **options, **values)
        except Exception:  # noqa: BLE001 - the interpreter cannot run it: said at its first launch, kept there
            pass
        finally:
            capture_state.record = recording


def compile_for_active_target(jit: JITFunction, args: tuple, kwargs: dict):
    """`JITFunction.warmup` with no GPU: compile for the target the active driver names, exactly as the JIT
    would, and return Triton's CompiledKernel (the virtual GPU's driver "loads" it: triton_compat/virtual_device.py)."""
    target = target_from_gpu_target(_driver_registry.active.get_current_target())
    return compile_specialized(jit, specialize(jit, args, kwargs, target), target)


def by_hand_call(src, metadata, args: tuple) -> tuple[JITFunction, dict, dict] | None:
    """A compiled kernel launched by hand (`kernel = f.warmup(...)`, then `kernel[grid](*args)`, as
    tutorial 02 does) as the launch of its JIT function it amounts to: (jit, arguments by name, launch
    options), or None where the kernel has no @triton.jit source. As on a GPU, the constexprs are the
    compiled ones, whatever values the call passes for them. By keyword: a parameter that is also a launch
    option (tutorial 02's `num_stages`) was given to the warmup as one keyword, which set both; passed the
    same way, it sets both again."""
    jit = getattr(src, "fn", None)
    if not isinstance(jit, JITFunction):
        return None
    args = list(args)
    for path, value in dict(getattr(src, "constants", None) or {}).items():
        if isinstance(path, tuple) and len(path) == 1 and path[0] < len(args):
            args[path[0]] = value
    bound = dict(zip([p.name for p in jit.params], args))
    options = {
        k: getattr(metadata, k)
        for k in ("num_warps", "num_stages", "num_ctas")
        if k not in bound and hasattr(metadata, k)
    }
    return jit, bound, options
