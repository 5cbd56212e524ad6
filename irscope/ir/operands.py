"""Operand lists, split at their top-level commas."""

from __future__ import annotations


def split_operands(text: str) -> list[str]:
    """Split `a, {b, c}, [d + 4], e` at top-level commas, keeping brackets, braces, parentheses and angle
    brackets whole; each piece is stripped, and an empty last piece is dropped."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>" and depth:
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last:
        out.append(last)
    return out


def opcode_modifiers(ins) -> list[str]:
    """An instruction's modifiers: "ld.global.v4.b32" -> ["global", "v4", "b32"] (PTX and SASS alike)."""
    return ins.opcode.split(".")[1:]


def operand_list(ins) -> list[str]:
    """An instruction's operands, split at its top-level commas."""
    return split_operands(ins.operand_text)
