"""Read a kernel file and find the @triton.jit functions defined in it."""

from __future__ import annotations

import ast
import io
import os
import tokenize
from dataclasses import dataclass
from types import CodeType

from .errors import IrscopeError
from .paths import check_kernel_path
from .model import Kernel
from .triton_compat import unwrap_kernel


@dataclass
class UserFile:
    path: str    # absolute
    shown: str   # as the user typed it, for messages
    text: str
    code: CodeType
    def_lines: dict[str, int]  # top-level function name -> line of its `def`


def read_user_file(path: str) -> UserFile:
    """Check that `path` is a readable Python file and compile it; one-line errors otherwise."""
    shown = path
    check_kernel_path(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise IrscopeError(f"{shown}: cannot read it ({exc.strerror}); check its permissions") from None
    if b"\0" in raw[:8192]:
        raise IrscopeError(f"{shown} is not a Python file (it holds binary data); give a .py file with kernels")
    text = _decoded(raw, shown)
    absolute = os.path.abspath(path)
    try:
        tree = ast.parse(text, filename=absolute)
        code = compile(tree, absolute, "exec")
    except SyntaxError as exc:
        where = f"{shown}:{exc.lineno}" if exc.lineno else shown
        kind = "is not valid Python" if not path.endswith(".py") else "has a syntax error"
        raise IrscopeError(f"{where}: {kind}: {exc.msg}; fix the file and try again") from None
    def_lines = {node.name: node.lineno for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    return UserFile(absolute, shown, text, code, def_lines)


def _decoded(raw: bytes, shown: str) -> str:
    """The file's text as Python reads it: UTF-8 unless a PEP 263 coding line says otherwise, a UTF-8 byte
    order mark dropped (Triton reads the source the same way, through linecache)."""
    not_text = (f"{shown} is not a Python file (not UTF-8 text, and no coding line names another encoding); "
                f"give a .py file with kernels")
    try:
        encoding, _lines = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        if str(exc.msg).startswith("unknown encoding"):
            raise IrscopeError(f"{shown}: its coding line names an {exc.msg}; fix the coding line "
                               f"(e.g. # -*- coding: utf-8 -*-) or save the file as UTF-8") from None
        raise IrscopeError(not_text) from None  # not UTF-8 in its first lines, or a BOM with another coding
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError:
        if encoding in ("utf-8", "utf-8-sig"):
            raise IrscopeError(not_text) from None
        raise IrscopeError(f"{shown} is not {encoding} text, as its coding line says; fix the coding line or "
                           f"save the file in that encoding") from None


def find_kernels(namespace: dict, user_file: UserFile) -> list[Kernel]:
    """Every @triton.jit function defined in the file (autotune/heuristics wrappers peeled off).

    Kernels imported from elsewhere are left out: they are not this file's to show.
    """
    kernels: dict[str, Kernel] = {}
    for value in list(namespace.values()):
        unwrapped = unwrap_kernel(value)
        if unwrapped is None:
            continue
        jit = unwrapped.jit
        if os.path.abspath(jit.fn.__code__.co_filename) != user_file.path:
            continue
        name = jit.fn.__name__
        line = user_file.def_lines.get(name, jit.fn.__code__.co_firstlineno)
        known = kernels.get(name)
        if known is None or (unwrapped.autotune_configs and not known.autotune_configs):
            kernels[name] = Kernel(name, user_file.path, line, jit, unwrapped.autotune_configs, unwrapped.heuristics)
    return sorted(kernels.values(), key=lambda k: k.line)
