"""Loop counters in Triton's interpreter are what a compiled kernel has: integer scalars, not Python ints.

A compiled `for i in range(n)` (or `tl.range`) gives its body an i32 scalar tensor, so kernels call
`i.to(tl.int64)` on it (fla's chunked recurrences do, to keep offsets from overflowing). Triton's
interpreter runs the loop as Python's `range` and gives the body a Python int, on which `.to()` fails:
the launch could not be interpreted, so it had no coalescing and could not be stepped. The interpreter
already rewrites each kernel before running it (its ASTTransformer makes every assigned value a tensor);
here its rewriter also assigns the counter of each `range` / `tl.range` loop to itself at the top of the
body, which that rewrite turns into the tensor a compiled kernel sees. `tl.static_range` counters stay
Python ints, as they are constexprs when compiled.
"""

from __future__ import annotations

import ast

import triton.runtime.interpreter as _interp


def _dynamic_range(node: ast.AST) -> bool:
    """`range(...)`, `tl.range(...)`, `triton.language.range(...)`: a loop the compiler keeps as a loop."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "range") or (
        isinstance(func, ast.Attribute) and func.attr == "range"
    )


class LoopCounters(_interp.ASTTransformer):
    """Triton's rewrite, and each dynamic loop's counter made a tensor as the body starts."""

    def visit_For(self, node: ast.For) -> ast.AST:
        if _dynamic_range(node.iter) and isinstance(node.target, ast.Name) and node.body:
            name = node.target.id
            again = ast.Assign(
                targets=[ast.Name(id=name, ctx=ast.Store())],
                value=ast.Name(id=name, ctx=ast.Load()),
            )
            node.body.insert(0, ast.copy_location(again, node.body[0]))
        return self.generic_visit(node)


def install() -> None:
    """Use LoopCounters for every kernel the interpreter rewrites from now on (once per process)."""
    rewriter = getattr(_interp, "FunctionRewriter", None)
    if rewriter is None or isinstance(getattr(rewriter, "ast_transformer", None), LoopCounters):
        return
    rewriter.ast_transformer = LoopCounters()
    cache = getattr(getattr(_interp, "InterpretedFunction", None), "rewritten_fn", None)
    if isinstance(cache, dict):
        cache.clear()  # rewritten before: rewritten again, with the counters
