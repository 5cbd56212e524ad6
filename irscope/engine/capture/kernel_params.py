"""What a kernel's parameters are, read from how the kernel body uses them (for `--no-run`).

A parameter is a pointer when an address built from it reaches a memory op: the first argument of
`tl.load` / `tl.store` / `tl.atomic_*`, or the base of `tl.make_block_ptr` / `tl.make_tensor_descriptor`.
In an address `x_ptr + row * stride + offsets` the pointer is the leftmost term of the sum (`row * stride`
is an offset, whatever it is called), and a local like `row_ptr = x_ptr + row * stride` passes its own
root on. Names do not count: `src`, `a`, `out` are pointers when they are used as ones, and `ptr_stride`
is not."""

from __future__ import annotations

import ast
import inspect
import textwrap

_MEMORY_CALLS = {
    "load",
    "store",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_xchg",
    "atomic_cas",
    "make_block_ptr",
    "make_tensor_descriptor",
}
# Calls that hand their first argument's address through unchanged in shape.
_PASS_THROUGH = {
    "broadcast_to",
    "reshape",
    "view",
    "expand_dims",
    "multiple_of",
    "max_contiguous",
    "max_constancy",
    "advance",
}


def _call_name(node: ast.Call) -> str:
    func = node.func
    return (
        func.attr
        if isinstance(func, ast.Attribute)
        else func.id
        if isinstance(func, ast.Name)
        else ""
    )


def _root(expr: ast.AST) -> str | None:
    """The name an address expression is based on: the leftmost term of a sum."""
    while True:
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            expr = expr.left
        elif isinstance(expr, ast.Call) and _call_name(expr) in _PASS_THROUGH and expr.args:
            expr = expr.args[0]
        # x_ptr[None, :] style broadcasting of a pointer block
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Name):
            return expr.id
        else:
            return None


def _address_of(call: ast.Call) -> ast.AST | None:
    name = _call_name(call)
    if name not in _MEMORY_CALLS:
        return None
    for keyword in call.keywords:
        if keyword.arg in ("pointer", "base"):
            return keyword.value
    return call.args[0] if call.args else None


def pointer_params(fn, _depth: int = 0) -> set[str]:
    """The parameters of a @triton.jit function's Python function that the body uses as pointers (also
    through the @triton.jit helpers it passes them to)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return set()
    func = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)), None)
    if func is None:
        return set()
    params = {a.arg for a in func.args.args + func.args.kwonlyargs}
    assigned: dict[str, list[ast.AST]] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            assigned.setdefault(node.target.id, []).append(node.target)
    found: set[str] = set()
    todo = [
        _root(a)
        for n in ast.walk(func)
        if isinstance(n, ast.Call) and (a := _address_of(n)) is not None
    ]
    todo += _helper_pointer_args(func, getattr(fn, "__globals__", {}), _depth)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name is None or name in seen:
            continue
        seen.add(name)
        if name in params:
            found.add(name)
        for value in assigned.get(name, []):
            todo.append(_root(value))
    return found


def _helper_pointer_args(func: ast.FunctionDef, scope: dict, depth: int) -> list[str | None]:
    """Roots of the arguments this body passes where a @triton.jit helper takes a pointer."""
    if depth > 4:
        return []
    roots: list[str | None] = []
    for call in (
        n for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    ):
        # a JITFunction keeps its Python function in .fn
        helper = getattr(scope.get(call.func.id), "fn", None)
        if helper is None or not callable(helper):
            continue
        names = list(inspect.signature(helper).parameters)
        pointers = pointer_params(helper, depth + 1)
        roots += [_root(arg) for name, arg in zip(names, call.args) if name in pointers]
        roots += [_root(k.value) for k in call.keywords if k.arg in pointers]
    return roots
