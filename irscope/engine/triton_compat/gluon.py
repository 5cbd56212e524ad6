"""Gluon kernels (`@gluon.jit`, `triton.experimental.gluon`): what sets them apart from `@triton.jit` ones.

A Gluon kernel's author writes the layouts the Triton compiler would otherwise choose, as constexpr
arguments. Triton's JIT binds and specializes its launches exactly as it does a Triton kernel's (the
same `JITFunction.run`), then compiles it from a source of another class: `GluonASTSource`, whose IR
starts at TTGIR (Triton 3.6: the `ttgir` stage runs Gluon's own passes; 3.9 keeps the module as Gluon
built it in a `glir` stage first). Compiling one from `ASTSource` fails ("Could not determine the number
of warps per CTA"), so every compile irscope makes takes its source class from here.

Triton's interpreter does not run Gluon (its builtins ask for the code generator's `_semantic`): on the
virtual GPU a Gluon launch is recorded and compiled, and not run.
"""

from __future__ import annotations

from typing import Any

from triton.compiler.compiler import ASTSource


def is_gluon(jit: Any) -> bool:
    """Whether `jit` is a `@gluon.jit` kernel (Triton's `JITFunction.is_gluon`, 3.6 through 3.9)."""
    asks = getattr(jit, "is_gluon", None)
    return bool(asks()) if callable(asks) else False


def language_of(jit: Any) -> str:
    """The front end a kernel is written in, as irscope's Kernel names it: "gluon" or "triton"."""
    return "gluon" if is_gluon(jit) else "triton"


def ast_source_class(jit: Any) -> type:
    """The class Triton's JIT builds the kernel's source from: `GluonASTSource` for a Gluon kernel (what
    `GluonJITFunction.create_binder` installs), `ASTSource` otherwise."""
    if not is_gluon(jit):
        return ASTSource
    from triton.experimental.gluon._runtime import GluonASTSource

    return GluonASTSource


def first_ir_stage(asm: dict) -> str | None:
    """The earliest IR that records the kernel's debug locations: TTIR for a Triton kernel; for a Gluon
    one, Gluon's own IR where the release keeps it (3.9's `glir`), else its TTGIR."""
    for stage in ("ttir", "glir", "ttgir"):
        if isinstance(asm.get(stage), str):
            return stage
    return None


# Why a Gluon launch on the virtual GPU was not run (a launch's `interp_error`, as the report shows it).
GLUON_NOT_INTERPRETED = "Triton's interpreter does not run Gluon kernels"
