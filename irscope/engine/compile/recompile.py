"""A compilation again, for another target or with constexprs / launch options changed (the TUI's
`t` and `e`; the worker runs it)."""

from __future__ import annotations

from irscope.base.errors import IrscopeError, LaunchRejected
from irscope.base.model import Launch
from irscope.engine.compile.compilation import Compilation, compile_launch
from irscope.engine.triton_compat import bind_arguments
from irscope.engine.triton_compat.driver import resolve_target


def recompile(
    comp: Compilation, *, target: str | None = None, defines: dict | None = None
) -> Compilation:
    """The same launch compiled for another target, or with constexprs / launch options changed."""
    launch = comp.launch
    if defines:
        launch = relaunch(launch, defines)
    resolved = resolve_target(target) if target else comp.target
    try:
        return compile_launch(launch, resolved, comp.source_text)
    except (LaunchRejected, AssertionError, ValueError, TypeError) as exc:
        if not defines:
            raise
        asked = ", ".join(f"{name}={value!r}" for name, value in defines.items())
        reason = exc.reason if isinstance(exc, LaunchRejected) else exc
        raise IrscopeError(
            f"Triton refused {asked}: {reason}; press e to try other values"
        ) from None


def relaunch(launch: Launch, defines: dict) -> Launch:

    bound = bind_arguments(launch.kernel.jit, launch.args, launch.kwargs)
    bound.update(defines)
    return Launch(
        launch.kernel,
        (),
        bound,
        launch.grid,
        launch.origin,
        launch.autotune_index,
        launch.autotune_count,
        guesses={k: v for k, v in launch.guesses.items() if k not in defines},
    )
