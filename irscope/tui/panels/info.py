"""The "Info" panel: the kernel's metadata and what the source line under the cursor became."""

from __future__ import annotations

import os

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from irscope.analysis.launch_stats import launch_stats
from irscope.tui.context import CursorContext
from irscope.tui.panels.base import InfoPanel


class LineInfoPanel(InfoPanel):
    panel_title = "Info"

    def compose(self) -> ComposeResult:
        yield Static("Move the cursor to a line.", id="line-info")

    def show_context(self, ctx: CursorContext) -> None:
        comp = ctx.comp
        links = _links_for(self.screen, comp)
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        where = f"{ctx.stage} line {ctx.index + 1}"
        source_lines = comp.source_text.splitlines()
        if ctx.source_line is not None and 0 < ctx.source_line <= len(source_lines):
            code = source_lines[ctx.source_line - 1].strip()
            table.add_row(
                "cursor",
                Text(f"{where} ← {os.path.basename(comp.kernel.file)}:{ctx.source_line}  ")
                + Text(code, style="italic"),
            )
        else:
            table.add_row(
                "cursor", f"{where} (no source line: code the compiler added, or metadata)"
            )
        if links is not None and ctx.source_line is not None and comp.ok:
            chain = links.chain(ctx.stage, ctx.index)
            if len(chain) > 1:
                table.add_row(
                    "frames",
                    " → ".join(f"line {n}" for n in chain) + "  (helper body, then call sites)",
                )
            parts = []
            for stage in comp.stage_names:
                if stage == "source":
                    continue
                hits = links.ir_lines(stage, ctx.source_line)
                blocks = _runs(hits)
                parts.append(
                    f"{stage} {len(hits)}" + (f" in {blocks} blocks" if blocks > 1 else "")
                )
            table.add_row(f"line {ctx.source_line} →", " · ".join(parts) + "  lines")
        if links is not None and comp.ok:
            table.add_row("mapped", mapped_text(comp))
        res = comp.resources
        table.add_row(
            "kernel",
            f"{comp.kernel.name}  {comp.target}  warps {comp.num_warps}  stages {comp.num_stages}"
            f"  regs {res.registers}  spills {res.spills}  shared {res.shared_bytes} B",
        )
        if comp.ok and comp.resources is not None:
            _launch_rows(table, comp)
        inductor = comp.kernel.inductor
        if inductor:
            nodes = ", ".join(inductor.get("source_nodes") or [])
            table.add_row(
                "inductor",
                Text(comp.kernel.inductor_ops + (f"  (model nodes: {nodes})" if nodes else "")),
            )
            lines = inductor.get("model_lines") or []
            if lines:
                table.add_row(
                    "model",
                    Text(
                        ", ".join(
                            f"{os.path.basename(str(m['file']))}:{m['line']} ({m['node']})"
                            for m in lines
                        )
                    ),
                )
            if comp.kernel.generated_for_cpu:
                table.add_row(
                    "",
                    Text(
                        "generated for CPU by Inductor's Triton CPU backend: a GPU run may choose "
                        "other block sizes",
                        style="yellow",
                    ),
                )
            if inductor.get("ptxas_note"):
                table.add_row("ptxas", Text(inductor["ptxas_note"], style="yellow"))
        self.query_one("#line-info", Static).update(table)


# grids of one compilation shown in the Info panel; `irscope report` lists them all
SHOWN_GRIDS = 3


def _launch_rows(table: Table, comp) -> None:
    """How each grid the compilation was launched with fills the GPU (analysis/launch_stats.py)."""
    stats = launch_stats(comp)
    for number, one in enumerate(stats[:SHOWN_GRIDS]):
        grid = "×".join(map(str, one.grid))
        table.add_row("launch" if number == 0 else "", Text(f"grid {grid}: {one.describe()}"))
    if len(stats) > SHOWN_GRIDS:
        table.add_row(
            "",
            Text(
                f"and {len(stats) - SHOWN_GRIDS} more grids (irscope report lists them)",
                style="dim",
            ),
        )


def mapped_text(comp) -> str:
    """Each stage's share of instruction lines that have a source line: the number `irscope report --json`
    gives as `stages.<stage>.mapped_fraction` (one function, core.sourcemap, computes both)."""
    sm = comp.source_map
    shares = [f"{s} {sm.mapped_fraction(s):.0%}" for s in comp.stage_names if s != "source"]
    return " · ".join(shares) + "  of instruction lines have a source line"


def _links_for(main, comp):
    shown = getattr(main, "shown", None)
    return shown.links if shown is not None and shown.comp is comp else None


def _runs(indices: list[int]) -> int:
    runs, last = 0, None
    for i in indices:
        if last is None or i != last + 1:
            runs += 1
        last = i
    return runs
