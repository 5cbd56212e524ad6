"""Locations in MLIR text (TTIR, TTGIR): `loc(...)` on each op, `#locN` aliases, named locations,
`callsite(callee at caller)`, `fused[...]`, `unknown`; ops whose region spans several lines.

Where the compiler recorded no location (`loc(unknown)`, typically constants hoisted to the top of the
function), the op takes the location of the first later op that uses its result, marked as inferred.
"""

from __future__ import annotations

import re

from .base import Chain, LineKind, Parsed, SourceLoc

_ALIAS_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_TRAILING_ALIAS = re.compile(r" loc\((#loc\d*)\)\s*$")
_FILE_LOC = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')
_DEFINES = re.compile(r"^\s*(%[\w.$-]+)(?::\d+)?(?:\s*,\s*(%[\w.$-]+)(?::\d+)?)*\s*=")
_VALUE = re.compile(r"%[\w.$-]+")
_FUNC_HEADER = re.compile(r"^\s*(?:tt\.func|func\.func|llvm\.func|module)\b")


class _LocParser:
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
        out.append(line[i:j - 1] if j > i and line[j - 1] == " " else line[i:j])
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


def _trailing_loc_text(line: str) -> str | None:
    """The location of the op on this line: the last ` loc(...)` closing the line."""
    if not line.endswith(")"):
        return None
    k = line.rfind(" loc(")
    if k < 0:
        return None
    return line[k + 5:-1]


def parse_mlir(text: str) -> Parsed:
    lines = text.splitlines()
    aliases: dict[str, str] = {}
    for line in lines:
        if line.startswith("#loc"):
            m = _ALIAS_DEF.match(line)
            if m:
                aliases[m.group(1)] = m.group(2)
    locs = _LocParser(aliases)
    kinds: list[LineKind] = []
    chains: list[Chain | None] = []
    openers: list[int] = []
    I, D, DBG = LineKind.INSTRUCTION, LineKind.DIRECTIVE, LineKind.DEBUG
    for index, line in enumerate(lines):
        s = line.lstrip()
        chain: Chain | None = None
        if not s:
            kinds.append(LineKind.BLANK)
            chains.append(None)
            continue
        first = s[0]
        if first == "#":
            if s.startswith("#loc"):
                m = _ALIAS_DEF.match(s)
                kinds.append(DBG)
                chains.append(locs.alias(m.group(1)) if m else None)
            else:
                kinds.append(D)
                chains.append(None)
            continue
        if s.startswith("//"):
            kinds.append(LineKind.COMMENT)
            chains.append(None)
            continue
        m = _TRAILING_ALIAS.search(line)
        if m:
            chain = locs.alias(m.group(1))
        else:
            loc_text = _trailing_loc_text(line)
            if loc_text is not None:
                chain = locs.expr(loc_text)
        if first == "}":
            kinds.append(D)
            chains.append(chain)
            if not line.endswith("{") and openers:  # `} else {` continues the same op
                opener = openers.pop()
                if chains[opener] is None and chain is not None:
                    chains[opener] = chain
            continue
        if first == "^":
            kinds.append(LineKind.LABEL)
            k = line.find(" loc(")
            chains.append(locs.expr(line[k + 5:]) if k >= 0 and chain is None else chain)
        elif _FUNC_HEADER.match(s):
            kinds.append(D)
            chains.append(chain)
        else:
            kinds.append(I)
            chains.append(chain)
        if line.endswith("{"):
            openers.append(index)
    inferred = _infer_from_first_use(lines, kinds, chains)
    return Parsed(kinds, chains, inferred)


def _infer_from_first_use(lines: list[str], kinds: list[LineKind], chains: list[Chain | None]) -> set[int]:
    """Ops with no location (hoisted constants) take the location of the first op that uses them."""
    pending: dict[str, int] = {}
    inferred: set[int] = set()
    for index, line in enumerate(lines):
        if kinds[index] is not LineKind.INSTRUCTION:
            continue
        if pending and chains[index] is not None:
            for value in _VALUE.findall(line):
                target = pending.pop(value.split("#")[0], None)
                if target is not None and target != index:
                    chains[target] = chains[index]
                    inferred.add(target)
        if chains[index] is None:
            m = _DEFINES.match(line)
            if m:
                head = line[:m.end()]
                for value in _VALUE.findall(head):
                    pending[value] = index
    return inferred
