"""Debugger calls in a kernel: `breakpoint()`, `pdb.set_trace()` (and the `import pdb` before it).

People put them in a kernel to debug it in Triton's interpreter (TRITON_INTERPRET=1); Triton's compiler
cannot compile them (`NameError('breakpoint is not defined')`). irscope compiles such a kernel as if the
call were not there: while it compiles, every such statement of the kernel and of its @triton.jit helpers
parses as a `pass` at the same line and column, which becomes no IR, so every other line keeps its own
debug location (the source map, the `.loc` lines) exactly as in the kernel written without the call.
"""

from __future__ import annotations

import ast
import contextlib
import threading
from dataclasses import dataclass
from typing import Any, Iterator

from triton.runtime.jit import JITFunction

_DEBUGGER_MODULES = frozenset({"pdb", "ipdb"})
# The class that defines `parse` (JITCallable since Triton 3.6: kernels, helpers, constexpr functions), and
# Triton's own parse: the function's source, parsed again on each call.
_PARSER = next(cls for cls in JITFunction.__mro__ if "parse" in vars(cls))
_PARSE = _PARSER.parse
_patch_lock = threading.Lock()
_patch_depth = 0


@dataclass(frozen=True)
class DebuggerCall:
    """One debugger call in a kernel or a helper it calls: where it is in its file, and its text."""

    file: str
    line: int
    text: str  # "breakpoint()", "pdb.set_trace()"

    def note(self, shown_file: str | None = None) -> str:
        """The one line that says the compile leaves it out (shown_file: name the file, for a helper's)."""
        where = f"{shown_file}:{self.line}" if shown_file else f"line {self.line}"
        return (
            f"{where}: {self.text} left out of the compile (Triton compiles no debugger call); "
            f"the stepper (ctrl+t, irscope step) stops there"
        )


def _is_call(node: ast.AST) -> bool:
    """`breakpoint()`, `pdb.set_trace()`, `ipdb.set_trace()` as a statement of its own."""
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
        return False
    func = node.value.func
    if isinstance(func, ast.Name):
        return func.id == "breakpoint"
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "set_trace"
        and isinstance(func.value, ast.Name)
        and func.value.id in _DEBUGGER_MODULES
    )


def _is_debugger_statement(node: ast.AST) -> bool:
    """A debugger call, or the `import pdb` that comes with it (which Triton cannot compile either)."""
    if isinstance(node, ast.Import):
        return all(alias.name in _DEBUGGER_MODULES for alias in node.names)
    return _is_call(node)


class _LeftOut(ast.NodeTransformer):
    """Each debugger statement becomes a `pass` with its position (a body it was alone in stays valid)."""

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        return ast.copy_location(ast.Pass(), node) if _is_call(node) else node

    def visit_Import(self, node: ast.Import) -> ast.AST:
        return ast.copy_location(ast.Pass(), node) if _is_debugger_statement(node) else node


def _parse_without_debugger_calls(self: JITFunction) -> ast.Module:
    return _LeftOut().visit(_PARSE(self))


@contextlib.contextmanager
def debugger_calls_left_out() -> Iterator[None]:
    """While a compile runs: every @triton.jit function (the kernel, its helpers) parses without its
    debugger statements. Triton parses the kernel and each helper it calls through JITFunction.parse."""
    global _patch_depth
    with _patch_lock:
        if _patch_depth == 0:
            _PARSER.parse = _parse_without_debugger_calls
        _patch_depth += 1
    try:
        yield
    finally:
        with _patch_lock:
            _patch_depth -= 1
            if _patch_depth == 0:
                _PARSER.parse = _PARSE


def debugger_calls(jit: Any) -> list[DebuggerCall]:
    """The debugger calls of a kernel and of the @triton.jit helpers it calls (transitively), in the
    order of their files' lines; [] for what is not a JITFunction."""
    found: list[DebuggerCall] = []
    seen: set[int] = set()
    todo = [jit] if isinstance(jit, JITFunction) else []
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        try:
            tree = _PARSE(fn)
        except (SyntaxError, AssertionError):
            continue
        lines = fn._src.splitlines()
        for node in ast.walk(tree):
            if _is_call(node):
                text = ast.get_source_segment(fn._src, node) or lines[node.lineno - 1].strip()
                found.append(
                    DebuggerCall(fn.fn.__code__.co_filename, _def_line(fn) + node.lineno - 1, text)
                )
            elif isinstance(node, ast.Call):
                todo.extend(_helper(fn, node.func))
    own = jit.fn.__code__.co_filename if isinstance(jit, JITFunction) else ""
    return sorted(set(found), key=lambda call: (call.file != own, call.file, call.line))


def _def_line(fn: JITFunction) -> int:
    """The file line of the function's `def` (its source, which parses as line 1, starts there)."""
    for index, text in enumerate(fn.raw_src):
        if text.strip().startswith("def "):
            return fn.starting_line_number + index
    return fn.starting_line_number


def _helper(fn: JITFunction, func: ast.AST) -> list[JITFunction]:
    """The @triton.jit function a call names (`helper(...)`, `module.helper(...)`), if any."""
    path: list[str] = []
    while isinstance(func, ast.Attribute):
        path.insert(0, func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return []
    value = _scope(fn).get(func.id)
    for attr in path:
        value = getattr(value, attr, None)
    return [value] if isinstance(value, JITFunction) else []


def _scope(fn: JITFunction) -> dict[str, Any]:
    """The names the function sees, as Triton's code generator resolves them: its globals and closure."""
    scope = dict(fn.__globals__)
    for name, cell in zip(fn.fn.__code__.co_freevars, fn.fn.__closure__ or ()):
        with contextlib.suppress(ValueError):  # a cell not yet filled
            scope[name] = cell.cell_contents
    return scope
