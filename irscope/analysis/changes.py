"""What an edit changed in the compiled code: after a reload, the source lines whose text is new or changed,
and the lines whose memory instructions differ from before, with the registers before and after.

Lines are matched by their text (difflib over the two versions of the kernel's file), so a line that only
moved, because lines were added above it, is still the same line and is compared with itself; a changed
line is compared with the line it replaced. The instructions of a line are those of the primary stage (PTX
on NVIDIA, AMDGCN on AMD), counted by opcode as the compiler wrote it.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass

from irscope.analysis.memory.ops import memory_ops, primary_stage
from irscope.base.compiled import CompiledKernel


@dataclass(frozen=True)
class LineChange:
    line: int  # 1-based, in the new version of the file
    before: Counter  # opcode -> instructions on the line it was (empty: a new line)
    after: Counter


@dataclass(frozen=True)
class Changes:
    edited: tuple[int, ...]  # 1-based lines of the new version whose text is new or changed
    lines: tuple[LineChange, ...]  # lines whose memory instructions changed, in file order
    registers: tuple[int | None, int | None]  # per thread, before and after (None: not known)

    def summary(self, most: int = 3) -> str:
        """One line: "line 26: 4 × ld.global.v4.b32 → 16 × ld.global.b32; registers 26 → 32", the first
        `most` lines and how many more; "no change in memory instructions or registers" when none."""
        parts = [
            f"line {c.line}: {_counted(c.before)} → {_counted(c.after)}" for c in self.lines[:most]
        ]
        if len(self.lines) > most:
            parts.append(f"{len(self.lines) - most} more line(s)")
        before, after = self.registers
        if before is not None and after is not None and before != after:
            parts.append(f"registers {before} → {after}")
        return "; ".join(parts) or "no change in memory instructions or registers"


def changes(before: CompiledKernel, after: CompiledKernel) -> Changes:
    old_lines = before.source_text.splitlines()
    new_lines = after.source_text.splitlines()
    old_of: dict[int, int] = {}  # 1-based new line -> the old line it is, or replaced
    edited: list[int] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag != "equal":
            edited.extend(range(new_start + 1, new_end + 1))
        if tag in ("equal", "replace"):
            for offset in range(min(old_end - old_start, new_end - new_start)):
                old_of[new_start + offset + 1] = old_start + offset + 1
    old_ops, new_ops = _opcodes_by_line(before), _opcodes_by_line(after)
    changed = []
    for line in sorted(set(new_ops) | {n for n, o in old_of.items() if o in old_ops}):
        was = old_ops.get(old_of.get(line, -1), Counter())
        now = new_ops.get(line, Counter())
        if was != now:
            changed.append(LineChange(line, was, now))
    return Changes(tuple(edited), tuple(changed), (_registers(before), _registers(after)))


def _opcodes_by_line(comp: CompiledKernel) -> dict[int, Counter]:
    if not comp.ok:
        return {}
    out: dict[int, Counter] = {}
    for op in memory_ops(comp, [primary_stage(comp)]):
        if op.source_line is not None:
            out.setdefault(op.source_line, Counter())[op.opcode] += 1
    return out


def _registers(comp: CompiledKernel) -> int | None:
    return comp.resources.registers if comp.resources is not None else None


def _counted(opcodes: Counter) -> str:
    if not opcodes:
        return "none"
    return " + ".join(f"{n} × {opcode}" for opcode, n in sorted(opcodes.items()))
