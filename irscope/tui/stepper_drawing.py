"""The stepper screen's drawing: the status line, the current source line and the IR it became, the
locals table, the picked value and the memory the line touches, redrawn from the recording at each move.

A mixin of `stepper.StepperScreen`, which holds the state it reads (the stepper, the shown line, the
locals table's rows) and the keys that move it; the event handlers stay on the screen, where Textual
looks for them.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from irscope.ir.locations.mlir import strip_locations
from irscope.ir.sourcemap import LineKind
from irscope.tui.stepper_text import access_lanes, draw_lanes, draw_mask, program_text, stats_text
from irscope.tui.widgets.stepper_views import LocalsView, SourceView
from irscope.tui.widgets.value_grid import ValueGrid


class StepperDrawing:
    """Drawing methods of `StepperScreen` (see the module's docstring)."""

    def _set_status(self, text: str, error: bool = False) -> None:
        _update(
            self.query_one("#stepper-status", Static), Text(text, style="bold red" if error else "")
        )

    def _refresh_all(self) -> None:
        step = self.stepper.step if self.stepper else None
        if step is None:
            return
        rec = self.stepper.recording
        event = {
            "line": "before",
            "return": "after the last line of",
            "exception": "stopped by an exception at",
        }
        parts = [
            f"program ({program_text(rec.program_id)}) of grid ({program_text(rec.grid)})",
            f"step {step.index + 1}/{len(rec.steps)}",
            f"{event.get(step.event, 'at')} line {step.line} in {step.function}",
        ]
        if step.index in rec.debugger_steps:
            parts.append("the program calls the debugger here (left out of the compile)")
        if len(step.stack) > 1:
            parts.append("stack: " + " → ".join(f"{f.function}:{f.line}" for f in step.stack))
        if self.comp.launch.origin != "captured":
            parts.append("stand-in arguments: the file does not launch this kernel")
        status = Text.assemble((rec.kernel, "bold"), " · ", " · ".join(parts))
        if rec.error:
            status.append("\n")
            status.append(
                ("⚠ " if step.event == "exception" else "(ends with) ") + rec.error,
                style="bold red" if step.event == "exception" else "red",
            )
        _update(self.query_one("#stepper-status", Static), status)
        self._draw_source(step.line)
        self._draw_ir(step.line)
        self._draw_locals()
        self._draw_accesses()

    def _draw_source(self, line: int) -> None:
        self._shown_line = line
        self.query_one("#stepper-source", SourceView).set_current(line)

    def _ir_index(self, stage: str) -> dict[int, list[int]]:
        """Source line → IR line indices of a stage, from irscope's source map."""
        if stage not in self._ir_links:
            self._ir_links[stage] = _ir_lines_by_source(self.comp, stage)
        return self._ir_links[stage]

    def _draw_ir(self, line: int) -> None:
        target = self.query_one("#stepper-ir", Static)
        if self.ir_stage is None:
            _update(
                target,
                Text(
                    f"{self.comp.kernel.name} did not compile for {self.comp.target}: no IR to show",
                    style="dim",
                ),
            )
            return
        text = self.comp.stage(self.ir_stage).splitlines()
        indices = self._ir_index(self.ir_stage).get(line, [])
        if not indices:
            _update(
                target,
                Text(f"line {line} produced no {self.ir_stage} (or it is not linked)", style="dim"),
            )
            return
        room = max(1, target.scrollable_content_region.height or 12)
        shown = indices if len(indices) <= room else indices[: room - 1]
        out = Text(no_wrap=True, overflow="ellipsis")
        for i in shown:
            out.append(f"{i + 1:>5} ", style="dim")
            out.append(strip_locations(text[i]).strip() + "\n")
        if len(shown) < len(indices):
            out.append(f"      … {len(indices) - len(shown)} more lines", style="dim")
        out.rstrip()
        _update(target, out)

    def _newest_local(self) -> str | None:
        """The local the previous step changed (what the line just run assigned), else the last one."""
        step = self.stepper.step
        steps = self.stepper.recording.steps
        before = steps[step.index - 1].locals if step.index > 0 else {}
        changed = [
            n for n, v in step.locals.items() if before.get(n) is not v and not n.startswith("(")
        ]
        names = list(step.locals)
        return changed[-1] if changed else (names[-1] if names else None)

    def _draw_locals(self) -> None:
        """One row per local the current function ever has (in order of first assignment), so rows
        never come and go while stepping inside a function: only changed rows are redrawn."""
        step = self.stepper.step
        view = self.query_one("#stepper-locals", LocalsView)
        keep = self._pinned if self._pinned in step.locals else self._newest_local()
        names = self._names_of(step.function)
        shown = self._table_values
        if self._table_function != step.function:
            view.set_names(names)
            shown.clear()
            self._table_function = step.function
        for index, name in enumerate(names):
            value = step.locals.get(name)
            if name in shown and shown[name] is value:
                continue
            if value is None:
                kind, summary = "", Text("not yet assigned", style="dim")
            else:
                kind = "mask" if value.is_mask else value.kind
                summary = Text(value.summary())
                st = value.stats() if value.kind == "tensor" else {}
                if st.get("nan") or st.get("inf"):
                    summary.stylize("bold yellow")
            view.set_row(index, kind, summary)
            shown[name] = value
        if keep in names:
            view.move_to(names.index(keep))
        self._show_value(keep)

    def _names_of(self, function: str) -> list[str]:
        """Every local of a function over the whole recording, in order of first appearance."""
        if function not in self._function_names:
            seen: dict[str, None] = {}
            for step in self.stepper.recording.steps:
                if step.function == function:
                    seen.update(dict.fromkeys(step.locals))
            self._function_names[function] = list(seen)
        return self._function_names[function]

    def _show_value(self, name: str | None) -> None:
        self._selected = name
        step = self.stepper.step if self.stepper else None
        value = step.locals.get(name) if (step is not None and name is not None) else None
        if value is self._value_shown:
            return
        self._value_shown = value
        stats = self.query_one("#stepper-value-stats", Static)
        mask = self.query_one("#stepper-mask", Static)
        grid = self.query_one("#stepper-value-grid", ValueGrid)
        if value is None:
            grid.show(None)
            _update(stats, "")
            return
        _update(stats, Text.assemble((f"{name}: ", "bold"), stats_text(value)))
        if mask.display != value.is_mask:
            mask.display = value.is_mask
            grid.display = not value.is_mask
        if value.is_mask:
            _update(mask, draw_mask(value.data))
            return
        grid.show(value.data if value.is_block else None)

    def _draw_accesses(self) -> None:
        step = self.stepper.step
        rec = self.stepper.recording
        widget = self.query_one("#stepper-accesses", Static)
        if not step.accesses:
            _update(widget, Text("no load or store at this line", style="dim"))
            return
        out = Text()
        for index in step.accesses[:4]:
            access = rec.accesses[index]
            out.append(access.summary() + f", shape {list(access.shape)}\n")
            lanes = access_lanes(access, rec.regions.get(access.param) if access.param else None)
            if lanes is not None:
                out.append_text(draw_lanes(lanes, max_rows=2))
                out.append("\n")
        out.rstrip()
        _update(widget, out)


def _update(widget: Static, content) -> None:
    """Fixed-size panes: new content never changes the layout, so skip the (costly) relayout."""
    widget.update(content, layout=False)


def _ir_lines_by_source(comp, stage: str) -> dict[int, list[int]]:
    """Source line → indices of the IR lines it became (instructions and labels; debug metadata such as
    `#loc` definitions left out), from the compilation's source map."""

    shown_kinds = (LineKind.INSTRUCTION, LineKind.LABEL, LineKind.DIRECTIVE)
    sm = comp.source_map
    out: dict[int, list[int]] = {}
    for index, line in enumerate(sm.lines(stage)):
        if line.kind in shown_kinds:
            for source in sm.source_lines(stage, index):
                out.setdefault(source, []).append(index)
    return out
