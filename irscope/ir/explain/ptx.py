"""Explain one line of PTX: opcode + modifiers from data/ptx.py and data/ptx_modifiers.py, with this line's operands
filled in."""

from __future__ import annotations

import re

from irscope.ir import ptx as ir
from irscope.ir.explain.common import (
    Explanation,
    address,
    fill,
    lower_first,
    nothing,
    positional,
    register_list,
    sentence,
)
from irscope.ir.explain.data import ptx as data
from irscope.ir.explain.data import ptx_modifiers as modifiers


def _modifier(token: str) -> str | None:
    """What a modifier means, or None if irscope has no note for it."""
    if token in modifiers.MODIFIERS:
        return modifiers.MODIFIERS[token]
    if token in modifiers.TYPES:
        return modifiers.TYPES[token][0]
    if token in modifiers.COMPARISONS:
        return f"compare with {modifiers.COMPARISONS[token]}"
    for pattern, template in modifiers.PATTERNS:
        m = re.fullmatch(pattern, token)
        if m:
            return template.format(*[g or "" for g in m.groups()])
    return None


def _float_literal(operand: str) -> str:
    """PTX writes float constants as raw bits: `0f3F000000` -> `0f3F000000 (0.5)`."""
    value = ir.float_bits(operand)
    return operand if value is None else f"{operand} ({value:.6g})"


def split_opcode(opcode: str) -> tuple[str | None, list[str]]:
    """`ld.global.v4.b32` -> ('ld', ['global', 'v4', 'b32']): the longest known prefix and the rest."""
    parts = opcode.split(".")
    for n in range(len(parts), 0, -1):
        key = ".".join(parts[:n])
        if key in data.OPS:
            return key, parts[n:]
    return None, parts[1:]


def explain(text: str, stage: str = "ptx") -> Explanation:
    line = text.split("//", 1)[0].strip()
    if not line or line in ("{", "}", ")", "(") or line.startswith(("}", ")")):
        return nothing(stage)
    label = ir.label(line)
    if label is not None:
        return Explanation(
            stage,
            "label",
            f"Label {label}",
            "A place in the code that branches jump to; it does nothing itself.",
        )
    if line.startswith("."):
        return _directive(line, stage)
    instruction = ir.tokenize(line)
    return explain_instruction(
        instruction.opcode, instruction.operands, instruction.guard, instruction.negated, stage
    )


def _directive(line: str, stage: str) -> Explanation:
    word = line.split()[0].rstrip(";")
    title, text = data.DIRECTIVES.get(word, (None, None))
    if title is None:
        return Explanation(stage, word, f"Directive {word}", "", known=False, unknown=(word,))
    return Explanation(stage, word, f"{title} ({word})", sentence(text))


def explain_instruction(
    opcode: str,
    operands: list[str],
    predicate: str | None = None,
    negated: bool = False,
    stage: str = "ptx",
) -> Explanation:
    key, mods = split_opcode(opcode)
    unknown = [opcode.split(".")[0]] if key is None else []
    details, types, cmp = [], [], None
    for token in mods:
        meaning = _modifier(token)
        if meaning is None:
            unknown.append("." + token)
            continue
        if token in modifiers.TYPES:
            types.append(token)
        elif token in modifiers.COMPARISONS:
            cmp = modifiers.COMPARISONS[token]
        note = f".{token}: {meaning}"
        if meaning and note not in details:
            details.append(note)
    values = positional([_float_literal(o) for o in operands])
    values["type"] = " → ".join(modifiers.TYPES[t][0] for t in types) if types else "raw bits"
    values["cmp"] = cmp or "?"
    values["to_type"] = modifiers.TYPES[types[0]][0] if types else "?"
    values["from_type"] = modifiers.TYPES[types[-1]][0] if types else "?"
    if key is None:
        title, body = f"PTX {opcode}", ""
    elif key in ("ld", "ldu", "st") and operands:
        title, body = _memory(key, mods, types, operands)
    else:
        title, template = data.OPS[key]
        body = fill(template, values)
    if predicate and body:
        state = "false" if negated else "true"
        body = f"If predicate {predicate} is {state} for this thread (its lane's mask bit), {lower_first(body)}"
    return Explanation(
        stage,
        opcode,
        f"{title} ({opcode})",
        sentence(body),
        tuple(details),
        known=not unknown,
        unknown=tuple(unknown),
    )


_SPACE_WORDS = {
    "global": "global memory",
    "shared": "shared memory",
    "shared::cta": "shared memory",
    "shared::cluster": "cluster shared memory",
    "local": "local memory (per-thread, in DRAM)",
    "param": "the kernel parameters",
    "const": "constant memory",
}


def _memory(key: str, mods: list[str], types: list[str], operands: list[str]) -> tuple[str, str]:
    space = next((_SPACE_WORDS[m] for m in mods if m in _SPACE_WORDS), "memory (generic address)")
    vec = next((n for n in map(ir.vector_count, mods) if n is not None), 1)
    bits = modifiers.TYPES[types[-1]][1] if types else 32
    if key == "st":
        where, regs = operands[0], register_list(operands[1] if len(operands) > 1 else "")
    else:
        regs, where = register_list(operands[0]), operands[1] if len(operands) > 1 else "?"
    amount = (
        f"{vec} × {bits} bits = {vec * bits // 8} bytes"
        if vec > 1
        else f"{bits} bits ({bits // 8} byte{'s' if bits != 8 else ''})"
    )
    regs_words = (
        f"{len(regs)} registers ({', '.join(regs)})"
        if len(regs) > 1
        else (regs[0] if regs else "a register")
    )
    at = address(where)
    if key == "st":
        return "Store", f"store {amount} from {regs_words} to {space} at {at}"
    verb = "load the same value for all threads:" if key == "ldu" else "load"
    return (
        "Load" if key == "ld" else "Load uniform"
    ), f"{verb} {amount} from {space} at {at} into {regs_words}"
