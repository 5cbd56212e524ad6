"""Explain one line of SASS: opcode and modifiers from data/sass.py, plus the control field decoded from
the instruction's encoding when the cubin is at hand."""

from __future__ import annotations

import re
from dataclasses import dataclass

from irscope.ir import sass as ir
from irscope.ir.explain.common import (
    Explanation,
    fill,
    lower_first,
    nothing,
    sentence,
    split_operands,
)
from irscope.ir.explain.data import sass as data


@dataclass(frozen=True)
class Control:
    """The scheduling bits of one instruction (Volta and later; layout from reverse-engineering work)."""

    stall: int
    yield_hint: bool
    write_barrier: int | None
    read_barrier: int | None
    wait_mask: int
    reuse: int

    @classmethod
    def from_high_word(cls, high: int) -> "Control":
        bits = high >> 41  # bits 105..127 of the 128-bit instruction
        write, read = (bits >> 5) & 7, (bits >> 8) & 7
        return cls(
            stall=bits & 0xF,
            yield_hint=not (bits >> 4) & 1,  # the bit is clear when the hint is given
            write_barrier=None if write == 7 else write,
            read_barrier=None if read == 7 else read,
            wait_mask=(bits >> 11) & 0x3F,
            reuse=(bits >> 17) & 0xF,
        )

    def words(self) -> list[str]:
        notes = data.CONTROL_NOTES
        out = [f"stall {self.stall} cycle{'s' if self.stall != 1 else ''}: {notes['stall']}"]
        if self.yield_hint:
            out.append(f"yield: {notes['yield']}")
        if self.write_barrier is not None:
            out.append(notes["write"].format(n=self.write_barrier))
        if self.read_barrier is not None:
            out.append(notes["read"].format(n=self.read_barrier))
        if self.wait_mask:
            waits = ", ".join(f"SB{i}" for i in range(6) if self.wait_mask >> i & 1)
            out.append(notes["wait"].format(list=waits))
        if self.reuse:
            slots = ", ".join("abcd"[i] for i in range(4) if self.reuse >> i & 1)
            out.append(notes["reuse"].format(list=slots))
        return out

    def short(self) -> str:
        """Compact form, e.g. `S01 Y W1 R- B0-2`."""
        waits = "".join(str(i) for i in range(6) if self.wait_mask >> i & 1)
        return (
            f"S{self.stall:02d} {'Y' if self.yield_hint else '-'} "
            f"W{'-' if self.write_barrier is None else self.write_barrier} "
            f"R{'-' if self.read_barrier is None else self.read_barrier} B{waits or '-'}"
        )


def _modifier(opcode: str, token: str) -> str | None:
    for key in (f"{opcode}.{token}", token):
        if key in data.MODIFIERS:
            return data.MODIFIERS[key]
    for pattern, template in data.PATTERNS:
        m = re.fullmatch(pattern, token)
        if m:
            return template.format(*m.groups())
    return None


_SPACES = {
    "LDG": "global memory",
    "STG": "global memory",
    "LDS": "shared memory",
    "STS": "shared memory",
    "LDL": "local memory (per-thread, in DRAM: spills)",
    "STL": "local memory (per-thread, in DRAM: spills)",
    "LD": "memory (generic address)",
    "ST": "memory (generic address)",
}


def _address(text: str) -> str:
    """`desc[UR4][R2.64]` -> `R2 (64-bit)`; `[R5+0x400]` -> `R5 + 0x400`."""
    where = ir.address_of(text)
    where = where.replace(".64", " (64-bit)").replace("+", " + ")
    return where


def _memory(base: str, mods: list[str], operands: list[str]) -> str:
    size = next((data.WIDTH_BYTES[m] for m in mods if m in data.WIDTH_BYTES), 4)
    space = _SPACES[base]
    regs = ir.register_range(operands[0], size // 4) if operands else "a register"
    if base.startswith("L"):
        address = _address(operands[1] if len(operands) > 1 else "?")
        plural = "s" if size > 1 else ""
        return f"load {size} byte{plural} per thread from {space} at {address} into {regs}"
    src = operands[1] if len(operands) > 1 else "?"
    srcs = ir.register_range(src, size // 4)
    return f"store {size} byte{'s' if size > 1 else ''} per thread from {srcs} to {space} at {_address(operands[0])}"


_CMP = {
    "EQ": "==",
    "NE": "!=",
    "LT": "<",
    "LE": "<=",
    "GT": ">",
    "GE": ">=",
    "GEU": ">= (or NaN)",
    "LTU": "< (or NaN)",
    "GTU": "> (or NaN)",
    "LEU": "<= (or NaN)",
    "NEU": "!= (or NaN)",
    "EQU": "== (or NaN)",
}
_DROP_PREDICATES = {"IADD3", "UIADD3", "VIMNMX", "LEA", "ULEA", "IMAD", "UIMAD", "VIADD", "IMNMX"}


def _values(base: str, mods: list[str], operands: list[str]) -> dict[str, str]:
    """Template fields for one instruction: operands in order (carry predicates dropped where they only
    confuse), plus {cmp}, {combine}, {shift}, {minmax}, {target}, {bytes}."""
    values = {"ops": ", ".join(operands)}
    shown = operands
    if base in _DROP_PREDICATES and operands:
        shown = operands[:1] + [o for o in operands[1:] if not ir.is_predicate(o)]
    for name, value in zip(("d", "a", "b", "c", "e", "f"), shown):
        values[name] = data.SPECIAL_REGISTERS.get(value, value) if name != "d" else value
    values["cmp"] = next((_CMP[m] for m in mods if m in _CMP), "compared with")
    if base.endswith("SETP") and len(operands) >= 5:
        combine, other = next((m for m in mods if m in ("AND", "OR", "XOR")), "AND"), operands[4]
        values["combine"] = "" if other in ("PT", "UPT") else f" {combine} {other}"
        if "EX" in mods:
            values["combine"] += " (the high-half step of a 64-bit compare)"
    else:
        values["combine"] = ""
    plain = [o for o in shown if not ir.is_predicate(o)]
    values["shift"] = plain[-1] if len(plain) >= 4 else "?"
    last = operands[-1] if operands else ""
    values["minmax"] = (
        "maximum"
        if last in ("!PT", "!UPT")
        else "minimum"
        if last in ("PT", "UPT")
        else "minimum or maximum"
    )
    target = next((o for o in operands if "`(" in o), None)
    values["target"] = target.split("`(", 1)[1].rstrip(")") if target else values.get("d", "?")
    cond = [o for o in operands if ir.is_predicate(o) and o not in ("PT", "UPT")]
    if base == "BRA" and cond:
        values["target"] += f" if {cond[0]} is true"
    values["bytes"] = (
        f"{next((data.WIDTH_BYTES[m] for m in mods if m in data.WIDTH_BYTES), 4)} bytes"
    )
    return values


def explain(
    text: str, stage: str = "sass", controls: dict[int, tuple[int, int]] | None = None
) -> Explanation:
    line = text.strip()
    if not line or line.startswith("//") or line.startswith("."):
        return nothing(stage)
    if ir.label(line) is not None:
        return Explanation(
            stage, None, f"Label {line[:-1]}", "A branch target or the start of the kernel's code."
        )
    instruction = ir.tokenize(line)
    if instruction is None or not instruction.opcode:
        return nothing(stage)
    offset, opcode, rest = instruction.offset, instruction.opcode, instruction.operand_text
    guard = "@" + instruction.guard if instruction.guard else None
    operands = split_operands(rest.split("`", 1)[0] if "`(" not in rest else rest)
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    unknown, details = [], []
    entry = next(
        (
            data.OPS[k]
            for k in (".".join(parts[:n]) for n in range(len(parts), 0, -1))
            if k in data.OPS
        ),
        None,
    )
    if entry is None:
        unknown.append(base)
    for token in mods:
        meaning = _modifier(base, token)
        if meaning is None:
            unknown.append("." + token)
        elif meaning:
            details.append(f".{token}: {meaning}")
    operands = [o.replace(".reuse", "") for o in operands]
    values = _values(base, mods, operands)
    if entry is None:
        title, body = f"SASS {base}", ""
    elif base in _SPACES:
        title, body = entry[0], _memory(base, mods, operands)
    else:
        title, body = entry[0], fill(entry[1], values)
    body = body.replace("the old value goes to RZ", "the old value is not kept")
    if guard and body:
        negated, pred = guard.startswith("@!"), guard.lstrip("@!")
        body = f"If predicate {pred} is {'false' if negated else 'true'} for this thread, {lower_first(body)}"
    if any(".reuse" in o for o in operands):
        details.append(
            ".reuse on an operand: keep it in the operand reuse cache for the next instruction"
        )
    if controls is not None and offset in controls:
        control = Control.from_high_word(controls[offset][1])
        details += [
            f"control [{control.short()}] " + w if i == 0 else w
            for i, w in enumerate(control.words())
        ]
    return Explanation(
        stage,
        opcode,
        f"{title} ({opcode})",
        sentence(body),
        tuple(details),
        known=not unknown,
        unknown=tuple(unknown),
    )
