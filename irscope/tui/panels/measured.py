"""The "Measured" panel: measured mode in the TUI (`M`). With a GPU, the worker times the compilation and
runs Nsight Compute on its launch (core/measure): the panel shows time, bandwidth and FLOP rate against
the device's peaks, the source lines ranked by warp stall samples, and for the line under the cursor
what ncu counted beside what irscope predicted. With no GPU it says why in one line.

Measuring takes seconds (ncu: tens of seconds), so it runs only when asked, in the worker (a request,
tui/asker.py); results are kept for the last few compilations, and a result for another compilation
than the one shown is only stored.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from irscope.analysis.measured.format import format_measured
from irscope.tui.asker import Asker, bounded
from irscope.tui.context import CursorContext
from irscope.tui.messages import Failed, Measured, MeasureRefusal, Request
from irscope.tui.panels.base import InfoPanel

ASK = "Press M to measure this compilation on the GPU: time, bandwidth against the peak, Nsight Compute per line."


def _refusal(request: Request, comp) -> MeasureRefusal:
    return MeasureRefusal(request, comp.call("why_not_measurable") or "")


def _measure(request: Request, comp) -> Measured:
    return Measured(request, comp.call("measure"))


class MeasuredPanel(Asker, InfoPanel):
    panel_title = "Measured"

    def __init__(self) -> None:
        super().__init__()
        self._cursor: CursorContext | None = None
        self._results = bounded()  # compilation key -> "measuring" | str (refusal, error) | dict
        self._refusal: str | None = (
            None  # why this machine cannot measure ("" when it can; asked once)
        )

    def caches(self) -> dict:
        return {"results": self._results}

    def compose(self) -> ComposeResult:
        yield Static(Text(ASK), id="measured-body")

    def show_context(self, ctx: CursorContext) -> None:
        self._cursor = ctx
        if self._refusal is None and self.asking("refusal") is None:
            self.ask("refusal", _refusal, ctx.comp)
        self._redraw()

    def measure(self) -> None:
        """Measure the shown compilation (the app's `M`)."""
        ctx = self._cursor
        if ctx is None or self._results.get(ctx.comp.key) == "measuring":
            return
        if self._refusal:  # this machine cannot measure: the panel already says why
            self._redraw()
            return
        before = self.asking("measure")
        if before is not None:  # its answer will be stale: that compilation can be measured again
            self._results.discard(before.about)
        self._results[ctx.comp.key] = "measuring"
        self._redraw()
        self.ask("measure", _measure, ctx.comp, about=ctx.comp.key)

    def on_measure_refusal(self, message: MeasureRefusal) -> None:
        if self.answered(message):
            self._refusal = message.why or ""
            self._redraw()

    def on_measured(self, message: Measured) -> None:
        if self.answered(message):
            self.show_measured(message.request.about, message.result)

    def request_failed(self, message: Failed) -> None:
        why = message.failure.message
        if message.request.kind == "refusal":
            self._refusal = f"cannot ask the worker: {why}"
            self._redraw()
        else:  # the user's kernel on the GPU: said in the panel
            self.show_measured(message.request.about, f"measuring failed: {why}")

    def drop_caches(self) -> None:
        super().drop_caches()
        self._refusal = None  # a new worker may see another machine: asked again

    def show_measured(self, key: int, result) -> None:
        """The worker's answer to `M` for compilation `key`."""
        self._results[key] = result
        # the Memory and Coalescing panels show it beside their predictions
        if isinstance(result, dict):
            keep = getattr(self.screen, "keep_measured_lines", None)  # the main screen keeps them
            if keep is not None:
                keep(
                    key,
                    {
                        c["source_line"]: c
                        for c in (result["measured"].get("ncu") or {}).get("lines") or []
                    },
                )
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
            self._body().update(
                Text("measuring: do_bench, then Nsight Compute on this launch (tens of seconds)…")
            )
        elif isinstance(result, str):
            self._body().update(Text(result, style="yellow"))
        else:
            self._body().update(self._measured_view(result["measured"], ctx))

    def _measured_view(self, m: dict, ctx: CursorContext) -> Group:
        parts: list = [
            Text(line.strip())
            for line in format_measured(m)
            if not line.lstrip().startswith("ncu ")
        ]
        ncu = m.get("ncu") or {}
        # a group of lines compared together (two maps file its instructions differently) shows on each of them
        here = [
            a
            for a in m.get("agreements") or []
            if ctx.source_line in (a.get("source_lines") or [a["source_line"]])
        ]
        if here:
            table = Table(
                box=None,
                padding=(0, 2),
                show_edge=False,
                title=f"line {ctx.source_line}",
                title_justify="left",
            )
            for column in ("counter", "measured", "predicted", ""):
                table.add_column(column)
            for a in here:
                verdict = {
                    True: Text("agrees", style="green"),
                    False: Text("DISAGREES", style="bold red"),
                    None: Text(a.get("note") or "no prediction", style="dim"),
                }[a["agrees"]]
                group = a.get("source_lines")
                what = a["what"] + (
                    " (lines " + "+".join(map(str, group)) + " together)" if group else ""
                )
                table.add_row(what, _num(a["measured"]), _num(a["predicted"]), verdict)
            parts.append(table)
        lines = sorted(
            (c for c in ncu.get("lines") or [] if c["stall_samples"]),
            key=lambda c: -c["stall_samples"],
        )
        if lines:
            total = sum(c["stall_samples"] for c in lines)
            table = Table(
                box=None,
                padding=(0, 2),
                show_edge=False,
                title="where warps stall (ncu samples)",
                title_justify="left",
            )
            for column in ("line", "share", "top reasons"):
                table.add_column(column)
            for c in lines[:8]:
                reasons = ", ".join(f"{k} {v:g}" for k, v in c["top_stalls"].items())
                style = "bold" if c["source_line"] == ctx.source_line else ""
                table.add_row(
                    str(c["source_line"] or "-"),
                    f"{c['stall_samples'] / total:.0%}",
                    Text(reasons),
                    style=style,
                )
            parts.append(table)
        return Group(*parts)


def measured_lines(screen, key: int) -> dict | None:
    """Nsight Compute's counters of each source line of a measured compilation (None: not measured),
    as the main screen keeps them."""
    kept = getattr(screen, "measured_lines", None)
    return kept.get(key) if kept is not None else None


def measured_line(screen, key: int, line: int | None) -> dict | None:
    """Nsight Compute's counters of one source line of a measured compilation (None: not measured)."""
    return (measured_lines(screen, key) or {}).get(line)


def measured_text(counters: dict | None, kind: str) -> str:
    """'32 sectors/request' for a line's loads ("ld") or stores ("st"), or "" when ncu counted none."""
    if not counters or not counters.get(f"{kind}_requests"):
        return ""
    return f"{counters[f'{kind}_sectors_per_request']:g} sectors/request ({counters[f'{kind}_sectors']:g} sectors)"


def _num(value) -> str:
    return "-" if value is None else f"{value:g}"
