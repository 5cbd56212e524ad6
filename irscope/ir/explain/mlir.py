"""Explain one line of TTIR or TTGIR: the op from data/ttir.py or data/ttgir.py, its operands, and (TTGIR)
the layouts of the tensors it touches, in words."""

from __future__ import annotations

import functools
import re

from irscope.ir.explain import layouts
from irscope.ir.explain.common import Explanation, fill, nothing, sentence
from irscope.ir.explain.data import ttgir as ttgir_data
from irscope.ir.explain.data import ttir as ttir_data
from irscope.ir.mlir import operation, strip_locations

OPS = {**ttir_data.OPS, **ttgir_data.OPS}

_VALUE = re.compile(r"%[\w-]+(?:#\d+)?")
_ALIAS_DEF = re.compile(r"^(#\w+)\s*=\s*(#(?:ttg|ttng|amdg|triton_gpu)\.\w+(?:<.*>)?)\s*$")
_TENSOR = re.compile(
    r"(?:tensor|!ttg\.memdesc|memdesc)?<((?:\d+x)+)([\w!.]+(?:<[^>]*>)?)\s*(?:,\s*(#[\w.]+(?:<\{.*?\}>)?))?"
)


@functools.lru_cache(maxsize=16)
def aliases_of(module_text: str) -> dict[str, str]:
    """`#blocked = #ttg.blocked<...>` definitions of a module, alias -> attribute text."""
    out = {}
    for raw in module_text.splitlines():
        m = _ALIAS_DEF.match(raw.strip())
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _top_level_split(rest: str) -> tuple[str, str]:
    """Split `operands {attrs} : types` at the first ' : ' outside brackets."""
    depth = 0
    for i, ch in enumerate(rest):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0 and rest[i - 1 : i] == " " and rest[i + 1 : i + 2] == " ":
            return rest[:i], rest[i + 1 :]
    return rest, ""


def _describe_type(types: str) -> str:
    result = types.split("->")[-1].strip()
    m = _TENSOR.search(result)
    if m:
        dims = m.group(1).rstrip("x").split("x")
        kind = "shared-memory buffer" if "memdesc" in result else "tensor"
        return f"a {'×'.join(dims)} {kind} of {m.group(2)}"
    return result or "a value"


def _layout_details(types: str, aliases: dict[str, str]) -> list[str]:
    out, seen = [], set()
    result, arrow, inputs = types.rpartition("->")
    ordered = f"{inputs} {result}" if arrow else types  # the result's layout first
    for m in _TENSOR.finditer(ordered):
        enc = m.group(3)
        if not enc or enc in seen or enc.startswith("#smem"):
            continue
        seen.add(enc)
        shape = [int(d) for d in m.group(1).rstrip("x").split("x")]
        label = enc if enc.startswith("#") and "<" not in enc else enc.split("<")[0]
        text = layouts.describe(enc, shape, aliases)
        if text:
            out.append(f"{label}: " + " ".join(text))
        if len(seen) >= 3:
            break
    return out


def explain(text: str, stage: str, module_text: str | None = None) -> Explanation:
    line = strip_locations(text.strip())
    if not line or line.startswith("//") or line in ("}", "})", "}) :") or line.startswith("#loc"):
        return nothing(stage)
    if line.startswith("}"):
        if "else" in line:
            return Explanation(
                stage, None, "Else branch", "What follows runs when the scf.if condition is false."
            )
        return nothing(stage)
    if line.startswith("^bb"):
        return Explanation(
            stage,
            None,
            "Block arguments",
            "The values a region receives; in a reduction, the two partial results to combine.",
        )
    if line.startswith("default {"):
        return Explanation(
            stage,
            None,
            "Default region of a warp_specialize",
            "What the block's own warps run while the partitions below run on warps of their own.",
        )
    region = re.match(r"partition(\d+)\(", line)
    if region:
        warps = re.search(r"num_warps\((\d+)\)", line)
        return Explanation(
            stage,
            None,
            f"Partition {region.group(1)} of a warp_specialize",
            "A region that runs on a group of warps of its own"
            + (f" ({warps.group(1)} warps)" if warps else "")
            + ", beside the default region; its arguments are the values captured from outside.",
        )
    alias = _ALIAS_DEF.match(line)
    if alias:
        return _layout_definition(alias.group(1), alias.group(2), stage)
    if line.startswith("module"):
        title, template = OPS["module"]
        return Explanation(stage, "module", title, sentence(template), _module_details(line))
    found = operation(line)
    if found is None:
        return Explanation(
            stage, line.split()[0], "Unrecognised line", "", known=False, unknown=(line.split()[0],)
        )
    op, results, rest = found.opcode, found.results or "", found.rest
    operand_text, types = _top_level_split(rest)
    if op == "tt.func":
        operand_text, types = rest, ""
    entry = OPS.get(op)
    if entry is None:
        return Explanation(stage, op, op, "", known=False, unknown=(op,))
    title, template = entry
    values = _fields(op, results, operand_text, types)
    details = []
    if stage == "ttgir" or "#" in types:
        aliases = aliases_of(module_text) if module_text else {}
        details = _layout_details(types, aliases)
    if op == "tt.func":
        details = _func_details(rest)
    return Explanation(
        stage, op, f"{title} ({op})", sentence(fill(template, values)), tuple(details)
    )


def _fields(op: str, results: str, operand_text: str, types: str) -> dict[str, str]:
    names = _VALUE.findall(operand_text.split("{", 1)[0] if op != "scf.for" else operand_text)
    values = {
        "results": results.strip() or "the result",
        "operands": ", ".join(names) or "nothing",
        "type": _describe_type(types),
    }
    for key, value in zip(("a", "b", "c", "e", "f"), names):
        values[key] = value
    attrs = re.search(r"\{([^{}]*)\}", operand_text)
    values["attrs"] = attrs.group(1) if attrs else ""
    for key in ("axis", "num", "pendings", "start", "end"):
        am = re.search(rf"\b{key} = (-?\d+)", operand_text)
        if am:
            values[key] = am.group(1)
    if "start" in values and "end" in values:
        values["range"] = (
            f"[{values['start']}, {int(values['start']) + 1}, ..., {int(values['end']) - 1}]"
        )
    values["value"] = operand_text.strip() or "?"
    pred = re.match(r"\s*(\w+),", operand_text)
    if pred:
        values["pred"] = ttir_data.PREDICATES.get(pred.group(1), pred.group(1))
    loop = re.match(r"\s*(%\w+) = (\S+) to (\S+) step (\S+)", operand_text)
    if loop:
        values["loop"] = (
            f"{loop.group(1)} runs from {loop.group(2)} up to {loop.group(3)} in steps of {loop.group(4)}"
        )
    count = re.search(r",\s*(\d+)\s*$", operand_text.strip())
    values["count"] = count.group(1) if count else "?"
    values["init"] = f", filled with {names[0]}" if names else ""
    values["masked"] = _masked(op, names, operand_text)
    return values


def _masked(op: str, names: list[str], operand_text: str) -> str:
    if op == "tt.load" and len(names) >= 2:
        other = (
            f"; masked-off elements get {names[2]}"
            if len(names) >= 3
            else " (masked-off elements are undefined)"
        )
        return f", only where the mask {names[1]} is true{other}"
    if op == "tt.store" and len(names) >= 3:
        return f", only where the mask {names[2]} is true"
    if op == "amdg.buffer_load" and len(names) >= 3:
        return f", only where the mask {names[2]} is true"
    if op == "amdg.buffer_store" and len(names) >= 4:
        return f", only where the mask {names[3]} is true"
    return ""


def _layout_definition(name: str, attr: str, stage: str) -> Explanation:
    layout = layouts.parse(attr)
    kind = layout.name if layout else attr.split("<")[0]
    words = layouts.describe(attr)
    if not words:
        return Explanation(stage, kind, f"Layout {name}", "", known=False, unknown=(kind,))
    return Explanation(stage, kind, f"Layout {name} ({kind})", words[0], tuple(words[1:]))


def _module_details(line: str) -> tuple[str, ...]:
    out = []
    for key, words in (
        ("ttg.num-warps", "warps per program (thread block)"),
        ("ttg.threads-per-warp", "threads per warp"),
        ("ttg.num-ctas", "thread blocks per cluster"),
        ("ttg.target", "target"),
    ):
        m = re.search(rf'"?{re.escape(key)}"?\s*=\s*("[^"]*"|\d+)', line)
        if m:
            out.append(f"{m.group(1).strip(chr(34))} {words}")
    return tuple(out)


def _func_details(rest: str) -> tuple[str, ...]:
    out = []
    for m in re.finditer(r"(%\w+): ([^{,)]+?)(?: \{([^}]*)\})?(?=\s+loc|,|\))", rest):
        name, typ, attrs = m.group(1), m.group(2).strip(), m.group(3) or ""
        facts = []
        if "tt.divisibility = 16" in attrs:
            facts.append("known to be a multiple of 16 (16-byte aligned for a pointer)")
        if "tt.pointer_range = 32" in attrs:
            facts.append("its offsets fit in 32 bits")
        out.append(f"{name}: {typ}" + (f" — {'; '.join(facts)}" if facts else ""))
    return tuple(out)
