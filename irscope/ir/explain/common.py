"""Pieces every dialect's explainer shares: the Explanation record, operand splitting, safe templates."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field

from irscope.ir.operands import split_operands  # noqa: F401  (the explainers split operands here)


@dataclass(frozen=True)
class Explanation:
    """What one IR line does, in plain words.

    `op` is the op or opcode the line was matched on (the unit the coverage benchmark counts); it is None
    for lines with nothing to explain (blank, comment, closing brace). `known` is False when the op, or
    one of its modifiers, is not in irscope's data: `unknown` then lists the parts it could not explain.
    """

    stage: str
    op: str | None
    title: str
    text: str
    details: tuple[str, ...] = ()
    known: bool = True
    unknown: tuple[str, ...] = field(default=())

    def render(self) -> str:
        """Title, text and details as plain text (for the CLI and for tests)."""
        parts = [self.title, self.text] if self.text else [self.title]
        parts += [f"  - {d}" for d in self.details]
        if self.unknown:
            parts.append(f"  (not in irscope's notes yet: {', '.join(self.unknown)})")
        return "\n".join(parts)


def nothing(stage: str, title: str = "", text: str = "") -> Explanation:
    return Explanation(stage, None, title, text)


class _Keep(dict):
    """Leave `{name}` in place when a template asks for an operand this line does not have."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


_formatter = string.Formatter()


def fill(template: str, values: dict[str, str]) -> str:
    """`template.format(**values)` that never raises on a missing or odd field."""
    try:
        return _formatter.vformat(template, (), _Keep(values))
    except (ValueError, IndexError, AttributeError):
        return template


def positional(operands: list[str]) -> dict[str, str]:
    """Operands as template fields: d (destination), a, b, c, e (sources), and `ops` (all, joined)."""
    values = {"ops": ", ".join(operands), "last": operands[-1] if operands else "?"}
    for name, value in zip(("d", "a", "b", "c", "e", "f"), operands):
        values[name] = address(value) if value.startswith("[") else value
    if values.get("e") == "-1":
        values["e"] = "-1 (all 32 lanes)"
    return values


def sentence(text: str) -> str:
    text = text.strip()
    if text and text[-1] not in ".!?:":
        text += "."
    first = text.split(" ", 1)[0]
    if re.search(r"[\d%$\[{]", first) or first.lower() in ("vcc", "exec", "scc", "m0", "pt", "rz"):
        return text  # starts with a register or value name: keep it as written
    return text[:1].upper() + text[1:] if text else text


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text else text


def register_list(text: str) -> list[str]:
    """`{ %r1, %r2 }` -> ['%r1', '%r2']; a single operand -> [it]."""
    inner = text.strip()
    if inner.startswith("{") and inner.endswith("}"):
        inner = inner[1:-1]
    return [p.strip() for p in inner.split(",") if p.strip()]


def address(text: str) -> str:
    """`[ %rd1 + 0 ]` -> `%rd1`; `[%r5+1024]` -> `%r5 + 1024 bytes`."""
    inner = text.strip()
    if inner.startswith("[") and inner.endswith("]"):
        inner = inner[1:-1].strip()
    m = re.fullmatch(r"(\S+?)\s*\+\s*(-?\w+)", inner)
    if m:
        base, off = m.groups()
        if off in ("0", "0x0"):
            return base
        return f"{base} + {off} bytes"
    return inner
