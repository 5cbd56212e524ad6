"""The "Memory" panel: the accesses of the source line under the cursor, why one is not vectorized
and what a fix would change, the kernel's registers and occupancy, and the legend of the pane marks."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from irscope.analysis.marks import MARK_LEGEND, MARKS
from irscope.analysis.memory.ops import memory_ops, primary_stage
from irscope.analysis.occupancy import occupancy
from irscope.tui.asker import Asker, bounded
from irscope.tui.context import CursorContext
from irscope.tui.messages import Failed, Request, WhatIfCompiled
from irscope.tui.panels.base import InfoPanel
from irscope.tui.panels.measured import measured_line, measured_text
from irscope.tui.widgets.stage_rows import MARK_COLOURS


def mark_glyph(name: str) -> Text:

    return Text(MARK_LEGEND[name][0], style=f"bold {MARK_COLOURS[name]}")


def legend() -> Text:
    out = Text()
    for name in MARKS:
        if out:
            out.append("  ")
        out.append_text(mark_glyph(name))
        out.append(f" {name.replace('_', ' ')}", style="dim")
    return out


class _Analysis:
    """What the panel shows about one compilation, computed once."""

    def __init__(self, comp) -> None:

        self.stage = primary_stage(comp)
        self.ops_by_line: dict[int | None, list] = {}
        for op in memory_ops(comp, [self.stage]):
            self.ops_by_line.setdefault(op.source_line, []).append(op)
        self.occupancy = occupancy(comp)
        # the launch's arguments live in the worker
        self.diagnoses = comp.call("why_not_vectorized")
        self.what_if: Any = None
        self.what_if_state = "none" if not self.diagnoses else "pending"


def _what_if(request: Request, comp) -> WhatIfCompiled:
    return WhatIfCompiled(request, comp.call("what_if"))  # the worker recompiles with the fixes


class MemoryPanel(Asker, InfoPanel):
    panel_title = "Memory"

    def plain_text(self, width: int = 160) -> str:
        """What the panel shows, as plain text."""
        from rich.console import Console

        console = Console(width=width, record=True, file=open(os.devnull, "w"))
        console.print(self.shown if self.shown is not None else "")
        return console.export_text()

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._cache = bounded(1)  # comp.key -> _Analysis: one compilation at a time
        self._last: CursorContext | None = None
        self.shown: Any = None  # the renderable on screen (tests read it as text)

    def caches(self) -> dict:
        return {"analysis": self._cache}

    def compose(self) -> ComposeResult:
        yield Static("Move the cursor to a line.", id="memory-info")

    def analysis(self, comp) -> _Analysis:
        found = self._cache.get(comp.key)
        if found is None:
            found = _Analysis(comp)
            self._cache[comp.key] = found
            if found.what_if_state == "pending":
                self.ask("what-if", _what_if, comp, about=comp.key)
        return found

    def on_what_if_compiled(self, message: WhatIfCompiled) -> None:
        if self.answered(message):
            self._what_if_known(message.request.about, message.what_if, "done")

    # a what-if that does not compile is a result to show
    def request_failed(self, message: Failed) -> None:
        self._what_if_known(message.request.about, None, f"failed: {message.failure.message}")

    def _what_if_known(self, key: int, what_if, state: str) -> None:
        found = self._cache.get(key)
        if found is not None:
            found.what_if, found.what_if_state = what_if, state
        if self._last is not None:
            self.show_context(self._last)

    def show_context(self, ctx: CursorContext) -> None:
        self._last = ctx
        comp = ctx.comp
        static = self.query_one("#memory-info", Static)
        if not comp.ok:
            self.shown = Text("The kernel did not compile: no memory accesses to show.")
            static.update(self.shown)
            return
        a = self.analysis(comp)
        self.shown = Group(*self._parts(comp, ctx, a))
        static.update(self.shown)

    def _parts(self, comp, ctx: CursorContext, a: _Analysis) -> list:

        parts: list = []
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        res = comp.resources
        regs = (
            f"VGPRs {res.registers}  SGPRs {res.sgprs}"
            if not comp.target.is_nvidia
            else f"registers {res.registers}"
        )
        table.add_row(
            "kernel",
            f"{regs}  spills {res.spills}  shared {res.shared_bytes} B  local {res.local_bytes} B",
        )
        if a.occupancy is not None:
            table.add_row("occupancy", a.occupancy.describe())
        line = ctx.source_line

        counters = measured_line(self.screen, comp.key, line)
        if counters:
            said = [
                f"{kind} {measured_text(counters, k)}"
                for kind, k in (("loads", "ld"), ("stores", "st"))
                if measured_text(counters, k)
            ]
            if counters.get("shared_wavefronts"):
                said.append(
                    f"shared {counters['shared_wavefronts']:g} wavefronts (ideal "
                    f"{counters['shared_wavefronts_ideal']:g})"
                )
            table.add_row(
                "measured",
                Text(f"line {line}, Nsight Compute: " + ("; ".join(said) or "no memory access")),
            )
        ops = a.ops_by_line.get(line, []) if line is not None else []
        label = f"line {line}" if line is not None else "this line"
        if ops:
            counts = Counter((op.opcode, op.op, op.space, op.width_bytes, op.masked) for op in ops)
            first = True
            for (opcode, kind, space, width, masked), n in counts.items():
                row = Text()
                for name in _marks_of(kind, space, width, masked):
                    row.append_text(mark_glyph(name))
                row.append(
                    f" {n} × {opcode}  {kind} {space} "
                    f"{'?' if width is None else width} B/thread{'  masked' if masked else ''}"
                )
                table.add_row(f"{label} ({a.stage})" if first else "", row)
                first = False
        else:
            table.add_row(
                label, Text(f"no memory access in {a.stage}; the kernel's, by line:", style="dim")
            )
            for source_line, line_ops in sorted(
                a.ops_by_line.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)
            ):
                row = Text()
                counts = Counter((op.op, op.space, op.width_bytes, op.masked) for op in line_ops)
                for (kind, space, width, masked), n in sorted(counts.items(), key=str):
                    if row:
                        row.append("  ")
                    for name in _marks_of(kind, space, width, masked):
                        row.append_text(mark_glyph(name))
                    row.append(f" {n} {kind} {space} {'?' if width is None else width} B")
                table.add_row(
                    f"  line {source_line}" if source_line is not None else "  unmapped", row
                )
        here = (
            [op for op in memory_ops(comp, [ctx.stage]) if op.line == ctx.index]
            if ctx.stage != "source"
            else []
        )
        for op in here:
            details = [f"{op.opcode}: {op.op} {op.space}"]
            if op.width_bytes is not None:
                details.append(
                    f"{op.width_bytes} B per thread ({op.vector} × {op.width_bytes // max(op.vector, 1)} B)"
                )
            if op.predicate:
                details.append(f"guarded by {op.predicate}")
            elif op.masked:
                details.append("masked")
            if op.other:
                details.append(f"masked-off lanes get {op.other}")
            if op.copy_to:
                details.append(f"copies into {op.copy_to} memory")
            if op.cache:
                details.append("hints " + " ".join(op.cache))
            table.add_row("cursor", ", ".join(details))
        parts.append(table)
        diagnoses = [d for d in a.diagnoses if line is not None and d.source_line == line]
        for d in diagnoses:
            parts.append(
                Text.assemble(
                    ("not vectorized: ", "bold #E69F00"),
                    f"{d.op} of {d.pointer or '?'} is {d.width_bytes} B per thread",
                )
            )
            for r in d.reasons:
                parts.append(Text.assemble(("  why ", "bold"), r.text))
                parts.append(Text.assemble(("  fix ", "bold"), r.fix))
        if diagnoses:
            if a.what_if_state == "pending":
                parts.append(Text("  what if: recompiling with the fix…", style="dim"))
            elif a.what_if is not None:
                rows = [r for r in a.what_if.rows if r["source_line"] == line]
                change = "; ".join(a.what_if.changes)
                for r in rows:
                    before = "?" if r["before"] is None else f"{r['before']} B"
                    after = "?" if r["after"] is None else f"{r['after']} B"
                    parts.append(
                        Text.assemble(
                            ("  what if ", "bold #009E73"),
                            f"{change}: {r['op']} {before} → {after}",
                        )
                    )
                for d in a.what_if.remaining:
                    if d.source_line == line:
                        for r in d.reasons:
                            parts.append(
                                Text.assemble((f"  still {d.width_bytes} B ", "bold"), r.text)
                            )
                            parts.append(Text.assemble(("  fix ", "bold"), r.fix))
            elif a.what_if_state.startswith("failed"):
                parts.append(Text(f"  what if: {a.what_if_state}", style="dim"))
        parts.append(legend())
        return parts


def _marks_of(kind: str, space: str, width: int | None, masked: bool) -> list[str]:
    out = []
    if space == "global" and width is not None:
        out.append("vector" if width >= 8 else "scalar")
    elif space in ("shared", "local"):
        out.append(space)
    if masked:
        out.append("masked")
    return out
