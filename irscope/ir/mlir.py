"""MLIR as Triton prints it (TTIR, TTGIR), read once: operations and their locations.

    %5 = tt.load %3, %4 : tensor<128x!tt.ptr<f32>, #blocked> loc(#loc7)
    #loc7 = loc(callsite(#loc3 at #loc4))

An operation is its results, the dialect-qualified name (`tt.load`; generic form `"tt.reduce"(...)` too)
and the rest of the line. Locations are `loc(...)` on each op or `#locN` aliases defined at the end:
file positions, named locations, `callsite(callee at caller)`, `fused[...]`, `unknown`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from irscope.ir.line_types import Chain, SourceLoc

_OP = re.compile(r'^\s*(?:(?P<results>%[^=]+?)\s*=\s*)?"?(?P<op>[a-z_]\w*\.[\w.]+)"?(?P<rest>.*)$')
_ALIAS_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_TRAILING_ALIAS = re.compile(r" loc\((#loc\d*)\)\s*$")
_FILE_LOC = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')
_DEFINES = re.compile(r"^\s*(%[\w.$-]+)(?::\d+)?(?:\s*,\s*(%[\w.$-]+)(?::\d+)?)*\s*=")
_VALUE = re.compile(r"%[\w.$-]+")
_FUNC_HEADER = re.compile(r"^\s*(?:tt\.func|func\.func|llvm\.func|module)\b")


class Operation(NamedTuple):
    results: str | None  # "%5", "%a, %b", "%r:2" as written, or None
    opcode: str  # "tt.load"
    rest: str  # operands, attributes, types (and location, unless stripped first)


def operation(line: str) -> Operation | None:
    """The operation on one line, or None (block labels, `}`, attribute and `#loc` lines)."""
    found = _OP.match(line)
    return (
        Operation(found.group("results"), found.group("op"), found.group("rest")) if found else None
    )


def defined_values(line: str) -> list[str]:
    """The values an op line defines (`%a, %b:2 = ...` -> ["%a", "%b"]), or []."""
    found = _DEFINES.match(line)
    return _VALUE.findall(line[: found.end()]) if found else []


def values(text: str) -> list[str]:
    """Every `%value` named in the text."""
    return _VALUE.findall(text)


def is_function_header(stripped: str) -> bool:
    return _FUNC_HEADER.match(stripped) is not None


def location_alias_definition(line: str) -> tuple[str, str] | None:
    """`#loc7 = loc(...)` -> ("#loc7", the text inside loc(...))."""
    found = _ALIAS_DEF.match(line)
    return (found.group(1), found.group(2)) if found else None


def trailing_alias(line: str) -> str | None:
    """The `#locN` of a line ending in ` loc(#locN)`."""
    found = _TRAILING_ALIAS.search(line)
    return found.group(1) if found else None


class Locations:
    """Resolves location expressions to chains, memoized by text. Aliases resolve lazily."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = aliases
        self.alias_chain: dict[str, Chain | None] = {}
        self.memo: dict[str, Chain | None] = {}
        self.resolving: set[str] = set()

    def alias(self, name: str) -> Chain | None:
        if name in self.alias_chain:
            return self.alias_chain[name]
        body = self.aliases.get(name)
        if body is None or name in self.resolving:
            return None
        self.resolving.add(name)
        chain = self.expr(body)
        self.resolving.discard(name)
        self.alias_chain[name] = chain
        return chain

    def expr(self, text: str) -> Chain | None:
        text = text.strip()
        if text in self.memo:
            return self.memo[text]
        chain, _ = self._parse(text, 0)
        self.memo[text] = chain
        return chain

    def _parse(self, s: str, i: int) -> tuple[Chain | None, int]:
        """Parse one location starting at s[i]; return its chain and the index after it."""
        n = len(s)
        while i < n and s[i] == " ":
            i += 1
        if s.startswith("#loc", i):
            j = i + 4
            while j < n and s[j].isdigit():
                j += 1
            return self.alias(s[i:j]), j
        if s.startswith("unknown", i):
            return None, i + 7
        if s.startswith("callsite(", i):
            callee, j = self._parse(s, i + 9)
            k = s.find(" at ", j)
            if k < 0:
                return callee, n
            caller, j = self._parse(s, k + 4)
            j = _skip_past(s, j, ")")
            if callee and caller:
                return callee + caller, j
            return callee or caller, j
        if s.startswith("fused", i):
            j = s.find("[", i)
            if j < 0:
                return None, n
            j += 1
            first: Chain | None = None
            while j < n and s[j] != "]":
                part, j = self._parse(s, j)
                if first is None:
                    first = part
                while j < n and s[j] in ", ":
                    j += 1
            return first, j + 1
        if s.startswith('"', i):
            m = _FILE_LOC.match(s, i)
            if m:
                j = m.end()
                if s.startswith(" to ", j):  # a range "f":L:C to :L2:C2 (or to L2:C2)
                    j = _skip_range_end(s, j + 4)
                return (SourceLoc(m.group(1), int(m.group(2)), int(m.group(3))),), j
            # a named location: "name" or "name"(child)
            j = s.find('"', i + 1)
            while j > 0 and s[j - 1] == "\\":
                j = s.find('"', j + 1)
            if j < 0:
                return None, n
            j += 1
            if j < n and s[j] == "(":
                child, j = self._parse(s, j + 1)
                return child, _skip_past(s, j, ")")
            return None, j
        # something this parser does not know: skip to the next separator
        j = i
        while j < n and s[j] not in ",)]":
            j += 1
        return None, j


def _skip_past(s: str, j: int, ch: str) -> int:
    while j < len(s) and s[j] == " ":
        j += 1
    return j + 1 if j < len(s) and s[j] == ch else j


def _skip_range_end(s: str, j: int) -> int:
    while j < len(s) and (s[j].isdigit() or s[j] == ":"):
        j += 1
    return j


def strip_locations(line: str) -> str:
    """A line of MLIR without its `loc(...)` annotations (nested parentheses and quoted names with
    parentheses in them included), each with the space before it; trailing blanks dropped.
    `#loc` definition lines come back unchanged: they are nothing but a location."""
    if "loc(" not in line or line.lstrip().startswith("#loc"):
        return line.rstrip()
    out, i = [], 0
    while True:
        j = line.find("loc(", i)
        while j > 0 and (line[j - 1].isalnum() or line[j - 1] in "_.$"):  # part of a name: `alloc(`
            j = line.find("loc(", j + 4)
        if j < 0:
            out.append(line[i:])
            return "".join(out).rstrip()
        out.append(line[i : j - 1] if j > i and line[j - 1] == " " else line[i:j])
        depth, k = 0, j + 3
        while k < len(line):
            if line[k] == "(":
                depth += 1
            elif line[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            elif line[k] == '"':  # a quoted name may hold parentheses
                k = line.find('"', k + 1)
                if k < 0:
                    k = len(line)
            k += 1
        i = k + 1


def trailing_location(line: str) -> str | None:
    """The location of the op on this line: the last ` loc(...)` closing the line."""
    if not line.endswith(")"):
        return None
    k = line.rfind(" loc(")
    if k < 0:
        return None
    return line[k + 5 : -1]
