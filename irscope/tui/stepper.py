"""Stepper mode: walk one program of a kernel line by line, with its locals, masks and memory accesses,
next to the IR the current line became.

The program is recorded once (in a worker thread, on copies of the launch's tensors); every move is
then a lookup in the recording, so stepping backwards is as cheap as forwards.
"""

from __future__ import annotations

import gc
import os

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Label, Static

from ..core.errors import IrscopeError
from ..core.interp import Recording, Value, launch_grid, normalize_program_id
from ..core.interp.stepper import Stepper
from ..core.stages.mlir import strip_locations
from .asker import Asker
from .messages import Failed, ProgramRecorded, Request
from .widgets.key_footer import KeyFooter
from .widgets.line_list import LineList
from .widgets.stepper_views import LocalsView, SourceView
from .widgets.value_grid import ValueGrid

MASK_ROW = 64          # 1-D masks: lanes per drawn row
INTERNAL = "internal error: "  # how loader.describe_open_error starts what is not an IrscopeError

STEPPER_HELP = """\
The stepper — one program of the kernel, run line by line in Triton's interpreter.

## What it shows
  Left: your file (▶ the line about to run, ● breakpoints) and the IR that line became.
  Right: the locals of the current function, the value of the one picked (its numbers,
  or a mask as █ on / · off lanes), and the memory the line reads or writes
  (✗ a lane that is on but outside its tensor).

## Moving through the program
  s       step: the next line, into @triton.jit helpers
  n       next: the next line of this function (helpers run through)
  o       finish: run until this function returns
  c       continue to the next breakpoint (or the end)
  b       one step back             r   restart: back to the first line
  e       the last step (the end, or where it failed)

## Breakpoints, programs, IR
  space   toggle a breakpoint on the source cursor line (Enter, or click the gutter)
  p       choose another program id within the grid
  i       cycle the IR stage shown for the current line

## Panes
  Tab / Shift+Tab   move between the source and the locals
  ↑ ↓ PgUp PgDn     move the cursor (in the locals: pick the value shown)

  esc     back to the main view (at the line the stepper stopped at)
  ?       this help                 q   quit
"""


def _program_text(pid) -> str:
    return ",".join(str(p) for p in pid)


class ProgramChooser(ModalScreen[tuple[int, int, int] | None]):
    """Ask for a program id within the launch's grid."""

    DEFAULT_CSS = """
    ProgramChooser { align: center middle; }
    ProgramChooser > Vertical { width: 60; height: auto; border: round $accent; background: $surface;
                                padding: 1 2; }
    ProgramChooser #chooser-error { color: $error; width: 1fr; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, grid: tuple[int, int, int], current: tuple[int, int, int]):
        super().__init__()
        self.grid = grid
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Program id X[,Y[,Z]] within the grid ({_program_text(self.grid)})")
            yield Input(value=_program_text(self.current), id="chooser-input")
            yield Label("", id="chooser-error")

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        try:
            parts = tuple(int(p) for p in event.value.replace(" ", "").split(",") if p != "")
            self.dismiss(normalize_program_id(parts, self.grid))
        except (ValueError, IrscopeError) as exc:
            message = str(exc) if isinstance(exc, IrscopeError) else "give whole numbers, like 1 or 1,0"
            self.query_one("#chooser-error", Label).update(message)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


def _record(request: Request, comp, program_id: tuple[int, int, int]) -> ProgramRecorded:
    rec = comp.call("record_program", program_id)
    failure = None if rec.steps else f"the interpreter cannot run {rec.kernel}: {rec.error or 'no line ran'}"
    return ProgramRecorded(request, program_id, rec, failure)


class StepperScreen(Asker, Screen):
    """One program of `comp`'s launch, recorded in the interpreter and stepped through."""

    DEFAULT_CSS = """
    StepperScreen { layout: vertical; }
    StepperScreen #stepper-status { height: 2; padding: 0 1; background: $panel; }
    StepperScreen #stepper-body { height: 1fr; }
    StepperScreen #stepper-left { width: 1fr; }
    StepperScreen #stepper-right { width: 1fr; }
    StepperScreen #stepper-source { height: 2fr; border: round $primary-darken-2; }
    StepperScreen #stepper-ir { height: 1fr; border: round $primary-darken-2; overflow: hidden;
                                text-wrap: nowrap; text-overflow: ellipsis; }
    StepperScreen #stepper-locals { height: 1fr; border: round $primary-darken-2; overflow-x: hidden; }
    StepperScreen #stepper-value-box { height: 1fr; border: round $primary-darken-2; }
    StepperScreen #stepper-value-stats { height: 1; }
    StepperScreen #stepper-value-grid { height: 1fr; }
    StepperScreen #stepper-mask { height: 1fr; display: none; overflow: hidden; }
    StepperScreen #stepper-accesses { height: 7; border: round $primary-darken-2; overflow: hidden; }
    """

    BINDINGS = [
        Binding("s", "step_into", "Step", tooltip="Next recorded line, into @triton.jit helpers", id="stepper.step"),
        Binding("n", "step_over", "Next", tooltip="Next line of this function; helpers run through",
                id="stepper.next"),
        Binding("o", "finish", "Finish", tooltip="Run until this function returns", id="stepper.finish"),
        Binding("c", "cont", "Continue", tooltip="Run to the next breakpoint (or the end)", id="stepper.continue"),
        Binding("b", "back", "Back", tooltip="One step back", id="stepper.back"),
        Binding("r", "restart", "Restart", tooltip="Back to the first line", id="stepper.restart"),
        Binding("e", "end", "End", tooltip="The last step (the end, or where it failed)", id="stepper.end"),
        Binding("space", "toggle_breakpoint", "Breakpoint", tooltip="Toggle a breakpoint on the source cursor line",
                id="stepper.breakpoint"),
        Binding("p", "choose_program", "Program", tooltip="Choose the program id within the grid",
                id="stepper.program"),
        Binding("i", "next_stage", "IR stage", tooltip="Cycle the IR stage linked to the current line",
                id="stepper.stage"),
        Binding("escape", "leave", "Leave", tooltip="Back to the main view", id="stepper.leave"),
        Binding("question_mark", "help", "Help", key_display="?", tooltip="The stepper's keys",
                id="stepper.help"),
    ]

    # Left out of the footer when it does not fit the terminal (`?` lists every key).
    FOOTER_MINOR = frozenset({"finish", "restart", "end", "choose_program", "next_stage", "quit"})

    def __init__(self, comp, program_id: tuple[int, ...] = (0,), **kwargs):
        super().__init__(**kwargs)
        self.comp = comp  # a CompilationView: the worker records the program
        self.grid = launch_grid(comp.launch)
        self.program_id = normalize_program_id(program_id, self.grid)
        self.stepper: Stepper | None = None
        self.failure: str | None = None
        self.source_lines = comp.source_text.splitlines()  # the kernel's own file
        self.ir_stages = [s for s in comp.stage_names if s != "source"] if comp.ok else []
        self.ir_stage = "ttgir" if "ttgir" in self.ir_stages else (self.ir_stages[0] if self.ir_stages else None)
        self._ir_links: dict[str, dict[int, list[int]]] = {}
        self._shown_line: int | None = None
        self._selected: str | None = None      # the local shown in the value view
        self._pinned: str | None = None        # the local the user picked (else: the newest one)
        self.breakpoints: set[int] = set()    # source lines; kept when another program is recorded
        self._table_values: dict[str, Value | None] = {}  # what the locals table shows, row by row
        self._table_function: str | None = None
        self._function_names: dict[str, list[str]] = {}
        self._value_shown: Value | None = None

    # ---- layout

    def compose(self) -> ComposeResult:
        yield Static("", id="stepper-status")
        with Horizontal(id="stepper-body"):
            with Vertical(id="stepper-left"):
                source = SourceView(self.source_lines, self.breakpoints, id="stepper-source")
                source.border_title = self.comp.kernel.shown or _shown_path(self.comp.kernel.file)
                yield source
                ir = Static("", id="stepper-ir")
                ir.border_title = f"{self.ir_stage or 'IR'} of the current line"
                yield ir
            with Vertical(id="stepper-right"):
                table = LocalsView(id="stepper-locals")
                table.border_title = "locals"
                yield table
                with Vertical(id="stepper-value-box") as box:
                    box.border_title = "value"
                    yield Static("", id="stepper-value-stats")
                    yield Static("", id="stepper-mask")
                    yield ValueGrid(id="stepper-value-grid")
                accesses = Static("", id="stepper-accesses")
                accesses.border_title = "memory at this line"
                yield accesses
        yield KeyFooter({}, self.FOOTER_MINOR)

    def on_mount(self) -> None:
        self._set_status(f"recording program ({_program_text(self.program_id)}) of {self.comp.kernel.name} "
                         f"in Triton's interpreter…")
        self.record(self.program_id)

    def on_unmount(self) -> None:
        gc.unfreeze()  # hand everything back to the collector (Triton's bindings check at exit)

    # ---- recording (in a thread)

    def record(self, program_id: tuple[int, int, int]) -> None:
        self.ask("record", _record, self.comp, program_id, about=program_id)

    def on_program_recorded(self, message: ProgramRecorded) -> None:
        if self.answered(message):
            self._recorded(message.program_id, message.recording, message.failure)

    def request_failed(self, message: Failed) -> None:
        why = message.failure.message
        if why.startswith(INTERNAL):  # the interpreter itself broke: say so in one line
            why = f"the interpreter cannot run {self.comp.kernel.name}: {why[len(INTERNAL):]}"
        self._recorded(message.request.about, None, why)

    def _recorded(self, program_id, rec: Recording | None, failure: str | None) -> None:
        if not self.is_mounted:
            return  # the screen is gone
        self.program_id = program_id
        self.failure = failure
        self.stepper = Stepper(rec, breakpoints=self.breakpoints) if rec is not None and failure is None else None
        self._table_values.clear()
        self._table_function = None
        self._function_names.clear()
        self._value_shown = None
        if self.stepper is None:
            self._set_status(failure or "nothing recorded", error=True)
            return
        # A full garbage collection walks torch's and Triton's many objects: ~0.2 s, at random steps.
        # Collect once now and move what survives out of the collector's sight; a recording holds no
        # reference cycles, so replacing it still frees it.
        gc.collect()
        gc.freeze()
        self._refresh_all()

    # ---- drawing

    def _set_status(self, text: str, error: bool = False) -> None:
        _update(self.query_one("#stepper-status", Static), Text(text, style="bold red" if error else ""))

    def _refresh_all(self) -> None:
        step = self.stepper.step if self.stepper else None
        if step is None:
            return
        rec = self.stepper.recording
        event = {"line": "before", "return": "after the last line of", "exception": "stopped by an exception at"}
        parts = [f"program ({_program_text(rec.program_id)}) of grid ({_program_text(rec.grid)})",
                 f"step {step.index + 1}/{len(rec.steps)}",
                 f"{event.get(step.event, 'at')} line {step.line} in {step.function}"]
        if len(step.stack) > 1:
            parts.append("stack: " + " → ".join(f"{f.function}:{f.line}" for f in step.stack))
        if self.comp.launch.origin != "captured":
            parts.append("stand-in arguments: the file does not launch this kernel")
        status = Text.assemble((rec.kernel, "bold"), " · ", " · ".join(parts))
        if rec.error:
            status.append("\n")
            status.append(("⚠ " if step.event == "exception" else "(ends with) ") + rec.error,
                          style="bold red" if step.event == "exception" else "red")
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
            _update(target, Text(f"{self.comp.kernel.name} did not compile for {self.comp.target}: no IR to show",
                                 style="dim"))
            return
        text = self.comp.stage(self.ir_stage).splitlines()
        indices = self._ir_index(self.ir_stage).get(line, [])
        if not indices:
            _update(target, Text(f"line {line} produced no {self.ir_stage} (or it is not linked)", style="dim"))
            return
        room = max(1, target.scrollable_content_region.height or 12)
        shown = indices if len(indices) <= room else indices[:room - 1]
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
        changed = [n for n, v in step.locals.items() if before.get(n) is not v and not n.startswith("(")]
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

    @on(LineList.CursorMoved, "#stepper-locals")
    def _local_picked(self, event: LineList.CursorMoved) -> None:
        if self.stepper is None or not event.by_user:
            return
        view = self.query_one("#stepper-locals", LocalsView)
        name = view.names[event.index] if event.index < len(view.names) else None
        if name in self.stepper.step.locals:
            self._pinned = name  # the user picked this local: keep showing it while stepping
            self._show_value(name)

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
        _update(stats, Text.assemble((f"{name}: ", "bold"), _stats_text(value)))
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

    # ---- actions

    def _move(self, how: str) -> None:
        if self.stepper is None:
            return
        getattr(self.stepper, how)()
        self._refresh_all()

    def action_step_into(self) -> None:
        self._move("step_into")

    def action_step_over(self) -> None:
        self._move("step_over")

    def action_finish(self) -> None:
        self._move("finish")

    def action_cont(self) -> None:
        self._move("cont")

    def action_back(self) -> None:
        self._move("back")

    def action_restart(self) -> None:
        self._move("restart")

    def action_end(self) -> None:
        self._move("end")

    def action_toggle_breakpoint(self, line: int | None = None) -> None:
        source = self.query_one("#stepper-source", SourceView)
        line = source.cursor + 1 if line is None else line
        if line in self.breakpoints:
            self.breakpoints.discard(line)
        else:
            self.breakpoints.add(line)
        source.breakpoint_changed(line)

    @on(SourceView.GutterClicked)
    def _gutter_clicked(self, event: SourceView.GutterClicked) -> None:
        self.action_toggle_breakpoint(event.line)

    def action_choose_program(self) -> None:
        def chosen(pid) -> None:
            if pid is not None and pid != self.program_id:
                self._set_status(f"recording program ({_program_text(pid)})…")
                self.record(pid)

        self.app.push_screen(ProgramChooser(self.grid, self.program_id), chosen)

    def action_next_stage(self) -> None:
        if not self.ir_stages:
            return
        index = self.ir_stages.index(self.ir_stage) if self.ir_stage in self.ir_stages else -1
        self.ir_stage = self.ir_stages[(index + 1) % len(self.ir_stages)]
        self.query_one("#stepper-ir", Static).border_title = f"{self.ir_stage} of the current line"
        if self._shown_line is not None:
            self._draw_ir(self._shown_line)

    def action_help(self) -> None:
        from .screens import HelpScreen

        self.app.push_screen(HelpScreen(STEPPER_HELP))

    def action_leave(self) -> None:
        line = self._shown_line
        self.app.pop_screen()
        if line is not None:
            _main_view_to_source_line(getattr(self.app, "main", None), line)


# ---- helpers (pure functions: easy to test)


def _main_view_to_source_line(main, line: int) -> None:
    """Back in irscope's main view, put its source pane (and so every linked IR pane) on the line the
    stepper stopped at. Nothing happens in an app without such panes (a test harness)."""
    for pane in getattr(main, "panes", None) or []:
        if getattr(pane, "stage", None) == "source" and pane.display:
            try:
                pane.view.move_cursor_to_index(line - 1, center=True)
                main.link_from(pane.view, line - 1)
            except Exception:  # the main view changed shape: leaving must still work
                pass
            return


def _update(widget: Static, content) -> None:
    """Fixed-size panes: new content never changes the layout, so skip the (costly) relayout."""
    widget.update(content, layout=False)


def _shown_path(path: str) -> str:
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path


def _stats_text(value: Value) -> Text:
    head = Text(f"{value.dtype}", style="bold")
    if value.is_block:
        head.append("[" + ",".join(map(str, value.shape)) + "]", style="bold")
    head.append(f"  {value.kind}")
    if value.kind == "pointer":
        head.append(f"  element offsets into {value.param or '?'}")
    st = value.stats() if value.kind in ("tensor", "scalar") and not value.is_mask else {}
    if st:
        head.append(f"  min {st['min']:.6g}  max {st['max']:.6g}  mean {st['mean']:.6g}")
        if st["nan"]:
            head.append(f"  NaN×{st['nan']}", style="bold yellow")
        if st["inf"]:
            head.append(f"  Inf×{st['inf']}", style="bold yellow")
    if value.is_mask:
        on_count = int(value.data.sum())
        head.append(f"  {on_count} of {value.data.size} lanes on")
    if not value.is_block:
        head.append(f"  = {value.summary()}")
    return head


MASKED, ACTIVE, OUTSIDE = 0, 1, 2
_LANE_GLYPHS = {MASKED: ("·", "red"), ACTIVE: ("█", "green"), OUTSIDE: ("✗", "bold white on red")}


def draw_mask(mask: np.ndarray, max_rows: int = 16) -> Text:
    """A mask as rows of cells: █ for an active lane, · for a masked-off one."""
    return draw_lanes(np.asarray(mask, dtype=np.int8), max_rows)


def draw_lanes(states: np.ndarray, max_rows: int = 16) -> Text:
    """Lanes as rows of cells (1-D: 64 a row; 2-D: a row each): █ active, · masked off, ✗ active but
    outside its tensor."""
    data = np.asarray(states, dtype=np.int8)
    rows = data.reshape(-1, min(MASK_ROW, data.size)) if data.ndim <= 1 else data.reshape(data.shape[0], -1)
    out = Text()
    for r, row in enumerate(rows[:max_rows]):
        start = r * rows.shape[1] if data.ndim <= 1 else r
        out.append(f"{start:>5} ", style="dim")
        row = row[:MASK_ROW * 2]
        edges = np.flatnonzero(np.diff(row)) + 1  # one span per run of equal lanes
        for run in np.split(row, edges):
            glyph, style = _LANE_GLYPHS[int(run[0])]
            out.append(glyph * len(run), style=style)
        out.append("\n")
    if len(rows) > max_rows:
        out.append(f"      … {len(rows) - max_rows} more rows\n", style="dim")
    out.rstrip()
    return out


def access_lanes(access, region) -> np.ndarray | None:
    """Each lane of an access as MASKED / ACTIVE / OUTSIDE (an active lane past its tensor's elements);
    None when every lane is simply active."""
    states = access.active.astype(np.int8)
    if region is not None:
        outside = (access.offsets < 0) | (access.offsets >= region.numel)
        states[outside & access.active] = OUTSIDE
    return None if (states == ACTIVE).all() else states


def _ir_lines_by_source(comp, stage: str) -> dict[int, list[int]]:
    """Source line → indices of the IR lines it became (instructions and labels; debug metadata such as
    `#loc` definitions left out), from the compilation's source map."""
    from ..core.sourcemap import LineKind

    shown_kinds = (LineKind.INSTRUCTION, LineKind.LABEL, LineKind.DIRECTIVE)
    sm = comp.source_map
    out: dict[int, list[int]] = {}
    for index, line in enumerate(sm.lines(stage)):
        if line.kind in shown_kinds:
            for source in sm.source_lines(stage, index):
                out.setdefault(source, []).append(index)
    return out
