"""A small def-use view of a TTIR / TTGIR function: which kernel arguments and ops feed a value.

Enough to answer "which arguments does this load's address (or mask) depend on, and through which
ops" — the questions behind "why is this access not vectorized". It reads the printed IR line by line:
each `%results = op %operands` line defines its results from its operands; `scf.for` iter_args are
defined from their initial values and from what the loop's `scf.yield` passes back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from irscope.ir.mlir import strip_locations

_VALUE = re.compile(r"%[\w.$-]+(?:#\d+)?")
_FUNC = re.compile(r"^\s*tt\.func\b.*?@[\w$.]+\((?P<args>.*)\)\s*(?:->.*)?(?:attributes.*)?\{\s*$")
_ARG = re.compile(r"(%[\w.$-]+)\s*:\s*([^{,]+?)(?:\s*\{(?P<attrs>[^}]*)\})?\s*(?:,|$)")
_ITER_ARGS = re.compile(r"iter_args\((?P<pairs>[^)]*)\)")


@dataclass
class Def:
    line: int
    opcode: str
    operands: list[str]
    text: str


@dataclass
class FunctionGraph:
    args: dict[str, str] = field(default_factory=dict)  # %name -> type text
    arg_attrs: dict[str, str] = field(default_factory=dict)  # %name -> attribute text
    arg_order: list[str] = field(default_factory=list)
    # value -> its definitions (loops: several)
    defs: dict[str, list[Def]] = field(default_factory=dict)

    def definition(self, value: str) -> list[Def]:
        """A result `%r#k` of a loop is defined by its own iter_arg alone; any other `%r#k` by all of `%r`'s op."""
        return self.defs.get(value) or self.defs.get(value.split("#")[0], [])

    def reaching(self, value: str) -> "Reach":
        """Every argument and op that flows into `value`."""
        seen: set[str] = set()
        reach = Reach()
        stack = [value]
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in self.args:
                reach.args.add(v)
                continue
            for d in self.definition(v):
                reach.ops.append(d)
                stack.extend(d.operands)
        return reach


@dataclass
class Reach:
    args: set[str] = field(default_factory=set)
    ops: list[Def] = field(default_factory=list)


def parse_function(text: str) -> FunctionGraph:
    graph = FunctionGraph()
    loops: list[list[str]] = []  # iter_args of the scf.for regions we are inside
    regions: list[str] = []  # what opened each region: "for" or "other"
    for index, raw in enumerate(text.splitlines()):
        line = strip_locations(raw)
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("//"):
            continue
        func = _FUNC.match(line)
        if func:
            for m in _ARG.finditer(func.group("args")):
                graph.args[m.group(1)] = m.group(2).strip()
                graph.arg_attrs[m.group(1)] = m.group("attrs") or ""
                graph.arg_order.append(m.group(1))
            continue
        if stripped.startswith("}"):
            if regions:
                kind = regions.pop()
                if kind == "for" and loops:
                    loops.pop()
            if stripped.endswith("{"):  # "} else {"
                regions.append("other")
            continue
        results, _, rest = (
            stripped.partition(" = ")
            if re.match(r"^%[\w.$#:, %-]+ = ", stripped)
            else ("", "", stripped)
        )
        opcode = rest.split(None, 1)[0] if rest else ""
        body = rest[len(opcode) :]
        # drop attribute dictionaries and types after the last ':' that are not values
        operands = _VALUE.findall(body.split(" : ")[0] if " : " in body else body)
        names = [r.strip().split(":")[0] for r in results.split(",")] if results else []
        if opcode == "scf.for":
            pairs = _ITER_ARGS.search(body)
            iter_names = []
            if pairs:
                for pair in pairs.group("pairs").split(","):
                    if "=" in pair:
                        name, init = (p.strip() for p in pair.split("=", 1))
                        iter_names.append(name)
                        graph.defs.setdefault(name, []).append(
                            Def(index, "scf.for.iter_arg", [init], stripped)
                        )
            induction = re.match(
                r"\s*(%[\w.$-]+)\s*=\s*(%[\w.$-]+)\s+to\s+(%[\w.$-]+)\s+step\s+(%[\w.$-]+)", body
            )
            if induction:
                graph.defs.setdefault(induction.group(1), []).append(
                    Def(index, "scf.for.induction", list(induction.group(2, 3, 4)), stripped)
                )
            for name in names:
                graph.defs.setdefault(name, []).append(
                    Def(index, opcode, list(iter_names), stripped)
                )
                # `%r:2 = scf.for`: `%r#1` is what the second iter_arg holds when the loop ends, not the others
                for k, iter_name in enumerate(iter_names if ":" in results else []):
                    graph.defs.setdefault(f"{name}#{k}", []).append(
                        Def(index, opcode, [iter_name], stripped)
                    )
            loops.append(iter_names)
            regions.append("for")
            continue
        if opcode == "scf.yield" and regions and regions[-1] == "for" and loops:
            for name, value in zip(loops[-1], operands):
                graph.defs.setdefault(name, []).append(Def(index, "scf.yield", [value], stripped))
        for name in names:
            graph.defs.setdefault(name, []).append(Def(index, opcode, operands, stripped))
        if stripped.endswith("{"):
            regions.append("other")
    return graph


def constant_value(graph: FunctionGraph, value: str) -> int | None:
    """The integer a value is a splat/dense constant of, if it is one."""
    for d in graph.definition(value):
        if d.opcode == "arith.constant":
            m = re.search(r"(?:dense<)?(-?\d+)>?\s*:", d.text.split("arith.constant", 1)[1])
            if m:
                return int(m.group(1))
        if d.opcode in ("tt.splat", "tt.broadcast", "tt.expand_dims") and d.operands:
            return constant_value(graph, d.operands[0])
    return None
