"""LLVM IR as Triton's backends print it, read once: instructions, labels, inline assembly and the debug
metadata that locates them.

    %12 = load <4 x float>, ptr addrspace(1) %11, align 16, !dbg !25
    %13 = tail call { i32, i32 } asm sideeffect "@$3 ld.global.v2.b32 { $0, $1 }, [ $2 + 0 ];", "=r,=r,l,b"(...)
    !25 = !DILocation(line: 26, column: 18, scope: !7, inlinedAt: !30)
"""

from __future__ import annotations

import re
from typing import NamedTuple

_INSTRUCTION = re.compile(
    r"^(?:(?P<d>%[\w.\-]+)\s*=\s*)?(?:(?:tail|musttail|notail)\s+)?(?P<op>[a-z]+)\b(?P<rest>.*)$"
)
_LABEL = re.compile(r"^([\w.$\-]+):(\s|$)")
_ASM = re.compile(r'asm\s+(?:sideeffect\s+)?(?:\w+\s+)*"(?P<body>(?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{2})")
_STATEMENT_END = re.compile(r"[;\n]")
_META = re.compile(r"^!(\d+) = (?:distinct )?!(\w+)\((.*)\)\s*$")
_FIELD = re.compile(r"(\w+): (?:!(\d+)|\"((?:[^\"\\]|\\.)*)\"|(-?\d+))")
_DBG = re.compile(r"!dbg !(\d+)")


class Instruction(NamedTuple):
    result: str | None  # "%12", or None
    opcode: str  # "load", "call", "getelementptr" (a leading `tail` is dropped)
    rest: str  # the rest of the line, metadata included unless stripped first


def instruction(line: str) -> Instruction | None:
    """The instruction on one (stripped) line, or None."""
    found = _INSTRUCTION.match(line)
    return Instruction(found.group("d"), found.group("op"), found.group("rest")) if found else None


def label(line: str) -> str | None:
    """`L_3:  ; preds = ...` -> "L_3"; None for any other line."""
    found = _LABEL.match(line)
    return found.group(1) if found else None


def inline_asm(line: str) -> str | None:
    """The assembly string of an `asm` call, as written (escapes such as `\\0A` kept)."""
    found = _ASM.search(line)
    return found.group("body") if found else None


def asm_statements(body: str) -> list[str]:
    """An assembly string's statements: escapes decoded, cut at `;` and newlines, stripped, empty ones left out."""
    text = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), body)
    return [piece.strip() for piece in _STATEMENT_END.split(text) if piece.strip()]


def metadata_node(line: str) -> tuple[str, str, str] | None:
    """`!25 = !DILocation(line: 26, ...)` -> ("25", "DILocation", "line: 26, ...")."""
    found = _META.match(line)
    return (found.group(1), found.group(2), found.group(3)) if found else None


def metadata_fields(body: str) -> dict[str, str]:
    """`line: 26, scope: !7, file: "k.py"` -> {"line": "26", "scope": "7", "file": "k.py"}."""
    return {m.group(1): m.group(2) or m.group(3) or m.group(4) or "" for m in _FIELD.finditer(body)}


def debug_location(line: str) -> str | None:
    """The metadata number of a line's `!dbg !N`."""
    found = _DBG.search(line)
    return found.group(1) if found else None
