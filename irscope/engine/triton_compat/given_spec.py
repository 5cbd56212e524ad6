"""A specialization given whole by someone other than Triton's JIT: Inductor's `triton_meta`.

Inductor does not launch its kernels through `JITFunction.run`; it calls `triton.compile(ASTSource(fn,
signature, constants, attrs), target, options)` itself with what its code generator wrote. This builds the
same `Specialized` the JIT path yields, from those four parts, so that the rest of irscope compiles it
with `compile_specialized` unchanged.
"""

from __future__ import annotations

from typing import Any

from irscope.engine.triton_compat import JITFunction, Specialized, Target
from irscope.engine.triton_compat.driver import gpu_target_of


def specialization_from_parts(
    jit: JITFunction,
    signature: dict[str, str],
    constants: dict,
    attrs: dict,
    options: dict[str, Any],
    target: Target,
) -> Specialized:
    """`constants` keyed by parameter name or by Triton's path tuple, as ASTSource takes them; `options`
    parsed by the target's backend exactly as `triton.compile` parses them."""
    from triton.compiler import compiler as compiler_module

    keyed = {}
    for key, value in constants.items():
        keyed[(jit.arg_names.index(key),) if isinstance(key, str) else tuple(key)] = value
    parsed = compiler_module.make_backend(gpu_target_of(target)).parse_options(dict(options))
    return Specialized(dict(signature), keyed, dict(attrs), parsed)
