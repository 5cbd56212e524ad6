"""Stepper mode: walk one program of a kernel line by line, with its locals, masks and memory accesses,
next to the IR the current line became.

The program is recorded once (in a worker thread, on copies of the launch's tensors); every move is
then a lookup in the recording, so stepping backwards is as cheap as forwards.

Its drawing is `stepper_drawing`, the text it draws `stepper_text`, the program chooser `stepper_chooser`.
"""

from __future__ import annotations

import gc
import os

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Static

from irscope.analysis.recording import Recording, Value, launch_grid, normalize_program_id
from irscope.analysis.recording.stepper import Stepper
from irscope.tui.asker import Asker
from irscope.tui.messages import Failed, ProgramRecorded, Request
from irscope.tui.screens import HelpScreen
from irscope.tui.stepper_chooser import ProgramChooser
from irscope.tui.stepper_drawing import StepperDrawing
from irscope.tui.stepper_text import STEPPER_HELP, program_text
from irscope.tui.widgets.key_footer import KeyFooter
from irscope.tui.widgets.line_list import LineList
from irscope.tui.widgets.stepper_views import LocalsView, SourceView
from irscope.tui.widgets.value_grid import ValueGrid

INTERNAL = "internal error: "  # how loader.describe_open_error starts what is not an IrscopeError


def _record(request: Request, comp, program_id: tuple[int, int, int]) -> ProgramRecorded:
    rec = comp.call("record_program", program_id)
    failure = (
        None
        if rec.steps
        else f"the interpreter cannot run {rec.kernel}: {rec.error or 'no line ran'}"
    )
    return ProgramRecorded(request, program_id, rec, failure)


class StepperScreen(StepperDrawing, Asker, Screen):
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
        Binding(
            "s",
            "step_into",
            "Step",
            tooltip="Next recorded line, into @triton.jit helpers",
            id="stepper.step",
        ),
        Binding(
            "n",
            "step_over",
            "Next",
            tooltip="Next line of this function; helpers run through",
            id="stepper.next",
        ),
        Binding(
            "o", "finish", "Finish", tooltip="Run until this function returns", id="stepper.finish"
        ),
        Binding(
            "c",
            "cont",
            "Continue",
            tooltip="Run to the next breakpoint (or the end)",
            id="stepper.continue",
        ),
        Binding("b", "back", "Back", tooltip="One step back", id="stepper.back"),
        Binding("r", "restart", "Restart", tooltip="Back to the first line", id="stepper.restart"),
        Binding(
            "e",
            "end",
            "End",
            tooltip="The last step (the end, or where it failed)",
            id="stepper.end",
        ),
        Binding(
            "space",
            "toggle_breakpoint",
            "Breakpoint",
            tooltip="Toggle a breakpoint on the source cursor line",
            id="stepper.breakpoint",
        ),
        Binding(
            "p",
            "choose_program",
            "Program",
            tooltip="Choose the program id within the grid",
            id="stepper.program",
        ),
        Binding(
            "i",
            "next_stage",
            "IR stage",
            tooltip="Cycle the IR stage linked to the current line",
            id="stepper.stage",
        ),
        Binding("escape", "leave", "Leave", tooltip="Back to the main view", id="stepper.leave"),
        Binding(
            "question_mark",
            "help",
            "Help",
            key_display="?",
            tooltip="The stepper's keys",
            id="stepper.help",
        ),
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
        self.ir_stage = (
            "ttgir"
            if "ttgir" in self.ir_stages
            else (self.ir_stages[0] if self.ir_stages else None)
        )
        self._ir_links: dict[str, dict[int, list[int]]] = {}
        self._shown_line: int | None = None
        self._selected: str | None = None  # the local shown in the value view
        self._pinned: str | None = None  # the local the user picked (else: the newest one)
        self.breakpoints: set[int] = set()  # source lines; kept when another program is recorded
        self._debugger_lines_placed = (
            False  # the kernel's breakpoint() lines: made breakpoints once
        )
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
        self._set_status(
            f"recording program ({program_text(self.program_id)}) of {self.comp.kernel.name} "
            f"in Triton's interpreter…"
        )
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
            why = f"the interpreter cannot run {self.comp.kernel.name}: {why[len(INTERNAL) :]}"
        self._recorded(message.request.about, None, why)

    def _recorded(self, program_id, rec: Recording | None, failure: str | None) -> None:
        if not self.is_mounted:
            return  # the screen is gone
        self.program_id = program_id
        self.failure = failure
        self.stepper = (
            Stepper(rec, breakpoints=self.breakpoints)
            if rec is not None and failure is None
            else None
        )
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
        self._stop_at_debugger_call(rec)
        self._refresh_all()

    def _stop_at_debugger_call(self, rec: Recording) -> None:
        """A program that calls breakpoint() (or pdb.set_trace()) opens stopped there, as a debugger would
        stop it; those lines become breakpoints (once: the user may take them away), so `c` goes on to the
        next time the program reaches one."""
        if self.stepper.to_debugger_call() is None or self._debugger_lines_placed:
            return
        self._debugger_lines_placed = True
        source = self.query_one("#stepper-source", SourceView)
        for line in rec.debugger_lines:
            self.breakpoints.add(line)
            source.breakpoint_changed(line)

    @on(LineList.CursorMoved, "#stepper-locals")
    def _local_picked(self, event: LineList.CursorMoved) -> None:
        if self.stepper is None or not event.by_user:
            return
        view = self.query_one("#stepper-locals", LocalsView)
        name = view.names[event.index] if event.index < len(view.names) else None
        if name in self.stepper.step.locals:
            self._pinned = name  # the user picked this local: keep showing it while stepping
            self._show_value(name)

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
                self._set_status(f"recording program ({program_text(pid)})…")
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
    linked = getattr(main, "linked", None)  # the main screen's LinkedPanes
    if linked is None:
        return
    try:
        linked.move_source_cursor(line)
    except Exception:  # the main view changed shape: leaving must still work
        pass


def _shown_path(path: str) -> str:
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path
