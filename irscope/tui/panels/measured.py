"""The "Measured" panel: measured mode in the TUI (`M`). With a GPU, the worker times the compilation and
runs Nsight Compute on its launch (core/measure): the panel shows time, bandwidth and FLOP rate against
the device's peaks, the source lines ranked by warp stall samples, and for the line under the cursor
what ncu counted beside what irscope predicted. With no GPU it says why in one line.

Measuring takes seconds (ncu: tens of seconds), so it runs only when asked, in a thread worker; results
are kept per compilation and a result for another compilation than the one shown is only stored.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.widgets import Static

from ...core.measure.format import format_measured
from ..context import CursorContext
from .base import InfoPanel

ASK = "Press M to measure this compilation on the GPU: time, bandwidth against the peak, Nsight Compute per line."


class MeasuredPanel(InfoPanel):
    panel_title = "Measured"

    def __init__(self) -> None:
        super().__init__()
        self._cursor: CursorContext | None = None
        self._results: dict[int, object] = {}  # compilation key -> "measuring" | str (refusal, error) | dict
        self._refusal: str | None = None      # why this machine cannot measure ("" when it can; asked once)
        self._asking = False

    def compose(self) -> ComposeResult:
        yield Static(Text(ASK), id="measured-body")

    def show_context(self, ctx: CursorContext) -> None:
        self._cursor = ctx
        if self._refusal is None and not self._asking:
            self._asking = True
            self._ask_refusal(ctx.comp)
        self._redraw()

    def measure(self) -> None:
        """Measure the shown compilation (the app's `M`)."""
        ctx = self._cursor
        if ctx is None or self._results.get(ctx.comp.key) == "measuring":
            return
        if self._refusal:  # this machine cannot measure: the panel already says why
            self._redraw()
            return
        self._results[ctx.comp.key] = "measuring"
        self._redraw()
        self._run(ctx.comp)

    @work(thread=True, group="measure-refusal")
    def _ask_refusal(self, comp) -> None:
        try:
            why = comp.call("why_not_measurable")
        except Exception as exc:  # noqa: BLE001 - shown, never a crash
            why = f"cannot ask the worker: {type(exc).__name__}: {exc}"
        self.app.call_from_thread(self._refusal_known, why or "")

    def _refusal_known(self, why: str) -> None:
        self._refusal, self._asking = why, False
        self._redraw()

    @work(thread=True, group="measure")
    def _run(self, comp) -> None:
        try:
            result = comp.call("measure")
        except Exception as exc:  # noqa: BLE001 - the user's kernel on the GPU: said in the panel
            result = f"measuring failed: {type(exc).__name__}: {exc}"
        self.app.call_from_thread(self._done, comp.key, result)

    def _done(self, key: int, result) -> None:
        self._results[key] = result
        if isinstance(result, dict):  # the Memory and Coalescing panels show it beside their predictions
            self.app.__dict__.setdefault("measured_lines", {})[key] = {
                c["source_line"]: c for c in (result["measured"].get("ncu") or {}).get("lines") or []}
            self.screen.refresh_panels()
        if self._cursor is not None and self._cursor.comp.key == key:
            self._redraw()

    def _body(self) -> Static:
        return self.query_one("#measured-body", Static)

    def _redraw(self) -> None:
        ctx = self._cursor
        if ctx is None or not self.is_mounted:
            return
        result = self._results.get(ctx.comp.key)
        if result is None:
            text = Text(self._refusal, style="yellow") if self._refusal else Text(ASK)
            self._body().update(text)
        elif result == "measuring":
            self._body().update(Text("measuring: do_bench, then Nsight Compute on this launch (tens of seconds)…"))
        elif isinstance(result, str):
            self._body().update(Text(result, style="yellow"))
        else:
            self._body().update(self._measured_view(result["measured"], ctx))

    def _measured_view(self, m: dict, ctx: CursorContext) -> Group:
        parts: list = [Text(line.strip()) for line in format_measured(m) if not line.lstrip().startswith("ncu ")]
        ncu = m.get("ncu") or {}
        # a group of lines compared together (two maps file its instructions differently) shows on each of them
        here = [a for a in m.get("agreements") or []
                if ctx.source_line in (a.get("source_lines") or [a["source_line"]])]
        if here:
            table = Table(box=None, padding=(0, 2), show_edge=False, title=f"line {ctx.source_line}", title_justify="left")
            for column in ("counter", "measured", "predicted", ""):
                table.add_column(column)
            for a in here:
                verdict = {True: Text("agrees", style="green"), False: Text("DISAGREES", style="bold red"),
                           None: Text(a.get("note") or "no prediction", style="dim")}[a["agrees"]]
                group = a.get("source_lines")
                what = a["what"] + (" (lines " + "+".join(map(str, group)) + " together)" if group else "")
                table.add_row(what, _num(a["measured"]), _num(a["predicted"]), verdict)
            parts.append(table)
        lines = sorted((c for c in ncu.get("lines") or [] if c["stall_samples"]), key=lambda c: -c["stall_samples"])
        if lines:
            total = sum(c["stall_samples"] for c in lines)
            table = Table(box=None, padding=(0, 2), show_edge=False, title="where warps stall (ncu samples)",
                          title_justify="left")
            for column in ("line", "share", "top reasons"):
                table.add_column(column)
            for c in lines[:8]:
                reasons = ", ".join(f"{k} {v:g}" for k, v in c["top_stalls"].items())
                style = "bold" if c["source_line"] == ctx.source_line else ""
                table.add_row(str(c["source_line"] or "-"), f"{c['stall_samples'] / total:.0%}", Text(reasons),
                              style=style)
            parts.append(table)
        return Group(*parts)


def measured_line(app, key: int, line: int | None) -> dict | None:
    """Nsight Compute's counters of one source line of a measured compilation (None: not measured)."""
    return (getattr(app, "measured_lines", {}).get(key) or {}).get(line)


def measured_text(counters: dict | None, kind: str) -> str:
    """'32 sectors/request' for a line's loads ("ld") or stores ("st"), or "" when ncu counted none."""
    if not counters or not counters.get(f"{kind}_requests"):
        return ""
    return f"{counters[f'{kind}_sectors_per_request']:g} sectors/request ({counters[f'{kind}_sectors']:g} sectors)"


def _num(value) -> str:
    return "-" if value is None else f"{value:g}"
