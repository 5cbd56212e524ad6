"""The "Coalescing" panel: for the load or store under the cursor, one warp's lanes against the 32-byte
sectors they touch, with sectors per request, the ideal, and what to change.

The analysis records programs in Triton's interpreter (a fraction of a second per kernel), so the worker
runs it once per compilation (a request, tui/asker.py); the panel says it is recording until the answer
comes, and keeps the answers for the last few compilations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from irscope.analysis.coalescing.picture import (
    LABEL_END,
    picture_registers,
    warp_picture_lines,
)
from irscope.tui.asker import Asker, bounded
from irscope.tui.context import CursorContext
from irscope.tui.messages import CoalescingAnalysed, Failed, Request
from irscope.tui.panels.base import InfoPanel
from irscope.tui.panels.measured import measured_line, measured_lines, measured_text

# the analysis (and numpy under it) is imported when a panel first draws: the app paints sooner
if TYPE_CHECKING:
    from irscope.analysis.coalescing.sectors import AccessCoalescing, KernelCoalescing
    from irscope.analysis.roofline import Roofline


def picture_table(lines: list[str]) -> Table:
    """The picture's lines as a two-column grid (label, lanes), so that no renderer trims its alignment."""
    table = Table.grid(padding=(0, 1))
    table.add_column(justify="right", no_wrap=True)
    table.add_column(no_wrap=True)
    for line in lines:
        label, _, row = line.partition(LABEL_END)
        table.add_row(label.strip(), Text(row, no_wrap=True))
    return table


def access_summary(access: AccessCoalescing, result: KernelCoalescing) -> Table:
    c = access.counts
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    what = f"{access.kind} {access.param or '?'}  {access.dtype} {'×'.join(map(str, access.shape)) or 'scalar'}"
    width = (
        f"{access.width_bytes} B per lane per instruction"
        if access.width_bytes
        else "width unknown"
    )
    table.add_row(
        f"line {access.source_line}",
        Text(f"{what}  ·  {access.op} (ttgir line {access.stage_line + 1})  ·  {width}"),
    )
    table.add_row("layout", access.layout)
    if not access.analysed:
        table.add_row("not analysed", access.reason)
        return table
    eff = c.efficiency or 0.0
    style = "green" if eff >= 0.9 else ("yellow" if eff >= 0.5 else "bold red")
    # (spaces end a segment rather than start the next: Textual drops a segment's leading blanks)
    numbers = Text()
    numbers.append(f"{c.sectors_per_request:.1f} sectors/request", style=style)
    numbers.append(f" · ideal {c.ideal_sectors_per_request:.1f} · efficiency ")
    numbers.append(f"{eff:.0%}", style=style)
    # the next instructions ask for the same sectors: not more traffic
    if access.cause == "narrow_access":
        # deferred: NumPy loads when a panel first needs it; the TUI starts without it
        from irscope.analysis.coalescing.width import moved_factor

        moved = moved_factor(access)
        numbers.append(
            f" · {c.cost:.1f}× the sectors requested"
            + (f", {moved:.1f}× moved" if moved else "")
            + " · "
        )
    elif access.cause == "sibling_fields":  # the other fields' loads use the rest of its sectors
        # deferred: NumPy loads when a panel first needs it; the TUI starts without it
        from irscope.analysis.coalescing.text import lines_text

        numbers.append(
            f" · {c.cost:.1f}× the sectors requested, {access.together_moved:.1f}× moved with the loads "
            f"on {lines_text(access.siblings)} · "
        )
    else:
        numbers.append(f" · {c.cost:.1f}× the bytes · {c.excess_bytes} excess bytes · ")
    numbers.append(
        f"{c.requests} requests in {len(result.programs)} of {_programs(result)} programs"
    )
    table.add_row("sectors", numbers)
    if access.lane_stride_bytes is not None:
        table.add_row("lane stride", f"{access.lane_stride_bytes} bytes between neighbouring lanes")
    return table


def _programs(result: KernelCoalescing) -> int:
    g = result.grid
    return g[0] * g[1] * g[2]


def _analyse(request: Request, comp) -> CoalescingAnalysed:
    # the interpreter runs in the worker; the roofline is made from the same recordings (cached there)
    result = comp.call("coalescing")
    try:
        roof = comp.call("roofline")
    except Exception as exc:  # noqa: BLE001 - the panel shows the coalescing without it
        roof = f"{type(exc).__name__}: {exc}"
    return CoalescingAnalysed(request, result, roof)


def roofline_rows(roof: Roofline | str | None) -> list[Text]:
    """The launch's traffic, its place on the roofline and its predicted time, one line each."""
    if roof is None:
        return []
    if isinstance(roof, str) or roof.error is not None:
        why = roof if isinstance(roof, str) else roof.error
        return [Text(f"roofline not predicted: {why}", style="dim")]
    return [
        Text("traffic  ", style="bold") + Text(roof.traffic_text()),
        Text("roofline ", style="bold") + Text(roof.roofline_text()),
        Text("time     ", style="bold") + Text(roof.time_text()),
    ]


class CoalescingPanel(Asker, InfoPanel):
    panel_title = "Coalescing"

    DEFAULT_CSS = """
    CoalescingPanel #coalescing-body {
        height: auto;
    }
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._analyses = bounded()  # comp.key -> KernelCoalescing, or why it failed (a str)
        self._rooflines = bounded()  # comp.key -> Roofline, or why it failed (a str)
        self._cursor: CursorContext | None = None

    def caches(self) -> dict:
        return {"analyses": self._analyses, "rooflines": self._rooflines}

    def compose(self) -> ComposeResult:
        yield Static("Move the cursor to a load or store.", id="coalescing-body")

    def show_context(self, ctx: CursorContext) -> None:
        self._cursor = ctx
        if not self.is_mounted:
            return
        key = ctx.comp.key
        if self._analyses.get(key) is None:
            asked = self.asking("coalescing")
            if asked is None or asked.about != key:
                self.ask("coalescing", _analyse, ctx.comp, about=key)
            self._body_widget().update(
                Text("Coalescing: recording addresses in the interpreter…", style="italic")
            )
            return
        self._redraw()

    def _body_widget(self) -> Static:
        return self.query_one("#coalescing-body", Static)

    def on_mount(self) -> None:
        if self._cursor is not None:  # shown before it was mounted
            self.show_context(self._cursor)

    def on_coalescing_analysed(self, message: CoalescingAnalysed) -> None:
        if self.answered(message):
            self._rooflines[message.request.about] = message.roofline
            self._analysis_done(message.request.about, message.result)

    def request_failed(self, message: Failed) -> None:
        self._analysis_done(
            message.request.about, f"coalescing analysis failed: {message.failure.message}"
        )

    def _analysis_done(self, key: int, result: KernelCoalescing | str) -> None:
        self._analyses[key] = result
        if self._cursor is not None and self._cursor.comp.key == key:
            self._redraw()

    def _redraw(self) -> None:
        ctx = self._cursor
        if ctx is None:
            return
        result = self._analyses.get(ctx.comp.key)
        if result is None:
            return
        if isinstance(result, str):
            self._body_widget().update(Text(result, style="red"))
            return
        if result.error and not result.accesses:
            self._body_widget().update(
                Text(f"Coalescing not analysed: {result.error}", style="yellow")
            )
            return
        here = result.at_line(ctx.source_line) if ctx.source_line is not None else []
        if not here:
            self._body_widget().update(self._overview_for(result, ctx))
            return
        parts: list = []

        for access in here:
            parts.append(access_summary(access, result))
            ncu = measured_text(
                measured_line(self.screen, ctx.comp.key, access.source_line),
                "st" if access.kind == "store" else "ld",
            )
            if ncu:
                parts.append(
                    Text(f"measured by Nsight Compute (the whole launch): {ncu}", style="bold")
                )
            if access.diagnosis:
                parts.append(Text(access.diagnosis))
            if access.fix:
                parts.append(Text("fix: " + access.fix, style="bold"))
            if access.analysed and access.picture is not None:
                p = access.picture
                caption = (
                    f"warp {p.warp}, {picture_registers(access)}: "
                    f"{sum(1 for lane in p.lanes if lane)} lanes, {p.sectors} sectors "
                    f"(ideal {p.ideal_sectors}), {p.lines} lines of 128 B — the costliest request"
                )
                parts.append(Text(caption, style="dim"))
                parts.append(picture_table(warp_picture_lines(p, access.elem_bytes)))
        self._body_widget().update(Group(*parts))

    def _overview_for(self, result: KernelCoalescing, ctx: CursorContext) -> Group:

        measured = measured_lines(self.screen, ctx.comp.key)
        table = Table(box=None, padding=(0, 2), show_edge=False)
        for column in ("line", "access", "sectors/request", "ideal", "efficiency") + (
            ("measured",) if measured else ()
        ):
            table.add_column(column)
        for a in result.accesses:
            c = a.counts
            extra = ()
            if measured:
                m = measured_line(self.screen, ctx.comp.key, a.source_line)
                kind = "st" if a.kind == "store" else "ld"
                extra = (
                    f"{m[f'{kind}_sectors_per_request']:g}"
                    if m and m.get(f"{kind}_requests")
                    else "-",
                )
            if not a.analysed or not c.requests:
                table.add_row(
                    str(a.source_line),
                    f"{a.kind} {a.param or '?'}",
                    "-",
                    "-",
                    "not analysed",
                    *extra,
                )
                continue
            eff = c.efficiency or 0.0
            table.add_row(
                str(a.source_line),
                f"{a.kind} {a.param or '?'}",
                f"{c.sectors_per_request:.1f}",
                f"{c.ideal_sectors_per_request:.1f}",
                Text(f"{eff:.0%}", style="green" if eff >= 0.9 else "bold red"),
                *extra,
            )
        totals = []
        for name, c in (("loads", result.loads), ("stores", result.stores)):
            if c.requests:
                totals.append(
                    f"{name} {c.sectors_per_request:.1f} sectors/request (ideal {c.ideal_sectors_per_request:.1f})"
                )
        where = f"line {ctx.source_line}" if ctx.source_line is not None else "this line"
        head = Text(
            f"{where} has no global load or store. Kernel: "
            + ", ".join(totals)
            + f"  [{len(result.programs)} of {_programs(result)} programs]"
        )
        notes = [Text(n, style="dim") for n in result.notes]
        roof = roofline_rows(self._rooflines.get(ctx.comp.key))
        return Group(head, table, *notes, *([Text("")] + roof if roof else []))
