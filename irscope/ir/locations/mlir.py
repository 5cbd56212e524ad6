"""Locations in MLIR text (TTIR, TTGIR): `loc(...)` on each op, `#locN` aliases, named locations,
`callsite(callee at caller)`, `fused[...]`, `unknown`; ops whose region spans several lines.

Where the compiler recorded no location (`loc(unknown)`, typically constants hoisted to the top of the
function), the op takes the location of the first later op that uses its result, marked as inferred.
"""

from __future__ import annotations

from irscope.ir.line_types import Chain, LineKind, Parsed
from irscope.ir.mlir import (
    Locations,
    defined_values,
    is_function_header,
    location_alias_definition,
    strip_locations,
    trailing_alias,
    trailing_location,
    values,
)

__all__ = ["parse_mlir", "strip_locations"]


def parse_mlir(text: str) -> Parsed:
    lines = text.splitlines()
    aliases: dict[str, str] = {}
    for line in lines:
        if line.startswith("#loc"):
            found = location_alias_definition(line)
            if found:
                aliases[found[0]] = found[1]
    locs = Locations(aliases)
    kinds: list[LineKind] = []
    chains: list[Chain | None] = []
    openers: list[int] = []
    INSTR, D, DBG = LineKind.INSTRUCTION, LineKind.DIRECTIVE, LineKind.DEBUG
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
                found = location_alias_definition(s)
                kinds.append(DBG)
                chains.append(locs.alias(found[0]) if found else None)
            else:
                kinds.append(D)
                chains.append(None)
            continue
        if s.startswith("//"):
            kinds.append(LineKind.COMMENT)
            chains.append(None)
            continue
        alias = trailing_alias(line)
        if alias:
            chain = locs.alias(alias)
        else:
            loc_text = trailing_location(line)
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
            chains.append(locs.expr(line[k + 5 :]) if k >= 0 and chain is None else chain)
        elif is_function_header(s):
            kinds.append(D)
            chains.append(chain)
        else:
            kinds.append(INSTR)
            chains.append(chain)
        if line.endswith("{"):
            openers.append(index)
    inferred = _infer_from_first_use(lines, kinds, chains)
    return Parsed(kinds, chains, inferred)


def _infer_from_first_use(
    lines: list[str], kinds: list[LineKind], chains: list[Chain | None]
) -> set[int]:
    """Ops with no location (hoisted constants) take the location of the first op that uses them."""
    pending: dict[str, int] = {}
    inferred: set[int] = set()
    for index, line in enumerate(lines):
        if kinds[index] is not LineKind.INSTRUCTION:
            continue
        if pending and chains[index] is not None:
            for value in values(line):
                target = pending.pop(value.split("#")[0], None)
                if target is not None and target != index:
                    chains[target] = chains[index]
                    inferred.add(target)
        if chains[index] is None:
            for value in defined_values(line):
                pending[value] = index
    return inferred
