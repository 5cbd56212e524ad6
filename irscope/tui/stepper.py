"""Stepper mode: walk one program of a kernel line by line, with its locals, masks and memory accesses,
next to the IR the current line became.

The program is recorded once (in a worker thread, on copies of the launch's tensors); every move is
then a lookup in the recording, so stepping backwards is as cheap as forwards.
"""

from __future__ import annotations

import os
import re

import numpy as np
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, Label, OptionList, Static

from ..core.errors import IrscopeError
from ..core.interp import Recording, Value, launch_grid, normalize_program_id, record_program
from ..core.interp.stepper import Stepper

GRID_ROW = 8           # 1-D values: elements per grid row
GRID_MAX_ROWS = 256    # rows shown in the value grid (the rest is summarized)
GRID_MAX_COLS = 128
MASK_ROW = 64          # 1-D masks: lanes per drawn row


def _program_text(pid) -> str:
    return ",".join(str(p) for p in pid)


class ProgramChooser(ModalScreen[tuple[int, int, int] | None]):
    """Ask for a program id within the launch's grid."""

    DEFAULT_CSS = """
    ProgramChooser { align: center middle; }
    ProgramChooser > Vertical { width: 60; height: auto; border: round $accent; background: $surface;
                                padding: 1 2; }
    ProgramChooser #chooser-error { color: $error; }
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


class LocalsTable(DataTable):
    """The locals table; remembers whether the user (not a redraw) moved its cursor."""

    user_moved = False

    def _user(self, action) -> None:
        self.user_moved = True
        action()

    def action_cursor_up(self) -> None:
        self._user(super().action_cursor_up)

    def action_cursor_down(self) -> None:
        self._user(super().action_cursor_down)

    def action_page_up(self) -> None:
        self._user(super().action_page_up)

    def action_page_down(self) -> None:
        self._user(super().action_page_down)

    def action_scroll_top(self) -> None:
        self._user(super().action_scroll_top)

    def action_scroll_bottom(self) -> None:
        self._user(super().action_scroll_bottom)

    async def _on_click(self, event) -> None:
        self.user_moved = True
        await super()._on_click(event)


class StepperScreen(Screen):
    """One program of `comp`'s launch, recorded in the interpreter and stepped through."""

    DEFAULT_CSS = """
    StepperScreen { layout: vertical; }
    StepperScreen #stepper-status { height: 2; padding: 0 1; background: $panel; }
    StepperScreen #stepper-body { height: 1fr; }
    StepperScreen #stepper-left { width: 1fr; }
    StepperScreen #stepper-right { width: 1fr; }
    StepperScreen #stepper-source { height: 2fr; border: round $primary-darken-2; text-wrap: nowrap;
                                    text-overflow: ellipsis; }
    StepperScreen #stepper-ir { height: 1fr; border: round $primary-darken-2; }
    StepperScreen #stepper-locals { height: 1fr; border: round $primary-darken-2; }
    StepperScreen #stepper-value-box { height: 1fr; border: round $primary-darken-2; }
    StepperScreen #stepper-value-stats { height: auto; }
    StepperScreen #stepper-value-grid { height: 1fr; }
    StepperScreen #stepper-mask { height: auto; }
    StepperScreen #stepper-accesses { height: auto; max-height: 8; border: round $primary-darken-2; }
    StepperScreen .stepper-error { color: $error; }
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
    ]

    def __init__(self, workspace, comp, program_id: tuple[int, ...] = (0,), **kwargs):
        super().__init__(**kwargs)
        self.workspace = workspace
        self.comp = comp
        self.grid = launch_grid(comp.launch)
        self.program_id = normalize_program_id(program_id, self.grid)
        self.stepper: Stepper | None = None
        self.failure: str | None = None
        self.source_lines = workspace.user_file.text.splitlines()
        self.ir_stages = [s for s in comp.stage_names if s != "source"] if comp.ok else []
        self.ir_stage = "ttgir" if "ttgir" in self.ir_stages else (self.ir_stages[0] if self.ir_stages else None)
        self._ir_links: dict[str, dict[int, list[int]]] = {}
        self._shown_line: int | None = None
        self._selected: str | None = None      # the local shown in the value view
        self._pinned: str | None = None        # the local the user picked (else: the newest one)
        self._auto_pick: str | None = None     # the local a redraw put the cursor on
        self._value_shown: Value | None = None

    # ---- layout

    def compose(self) -> ComposeResult:
        yield Static("", id="stepper-status")
        with Horizontal(id="stepper-body"):
            with Vertical(id="stepper-left"):
                source = OptionList(*self._source_prompts(), id="stepper-source")
                source.border_title = _shown_path(self.workspace.user_file.path)
                yield source
                ir = VerticalScroll(Static("", id="stepper-ir-text"), id="stepper-ir")
                ir.border_title = self.ir_stage or "IR"
                yield ir
            with Vertical(id="stepper-right"):
                table = LocalsTable(id="stepper-locals", cursor_type="row", zebra_stripes=True)
                table.border_title = "locals"
                yield table
                with Vertical(id="stepper-value-box") as box:
                    box.border_title = "value"
                    yield Static("", id="stepper-value-stats")
                    yield Static("", id="stepper-mask")
                    yield DataTable(id="stepper-value-grid", cursor_type="cell", show_cursor=False)
                accesses = Static("", id="stepper-accesses")
                accesses.border_title = "memory at this line"
                yield accesses
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#stepper-locals", DataTable)
        table.add_columns("name", "kind", "value")
        self._set_status(f"recording program ({_program_text(self.program_id)}) of {self.comp.kernel.name} "
                         f"in Triton's interpreter…")
        self.record(self.program_id)

    # ---- recording (in a thread)

    @work(thread=True, exclusive=True, group="stepper-record")
    def record(self, program_id: tuple[int, int, int]) -> None:
        try:
            rec = record_program(self.comp.launch, program_id)
            failure = None if rec.steps else f"the interpreter cannot run {rec.kernel}: {rec.error or 'no line ran'}"
        except IrscopeError as exc:
            rec, failure = None, str(exc)
        except Exception as exc:  # the interpreter itself broke: say so in one line
            rec, failure = None, f"the interpreter cannot run {self.comp.kernel.name}: {type(exc).__name__}: {exc}"
        self.app.call_from_thread(self._recorded, program_id, rec, failure)

    def _recorded(self, program_id, rec: Recording | None, failure: str | None) -> None:
        breakpoints = self.stepper.breakpoints if self.stepper else set()
        self.program_id = program_id
        self.failure = failure
        self.stepper = Stepper(rec, breakpoints=breakpoints) if rec is not None and failure is None else None
        if self.stepper is None:
            self._set_status(failure or "nothing recorded", error=True)
            return
        self._refresh_all(first=True)

    # ---- drawing

    def _set_status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#stepper-status", Static)
        status.update(Text(text, style="bold red" if error else ""))

    def _source_prompts(self, current: int | None = None) -> list[Text]:
        return [self._source_prompt(i + 1, current) for i in range(len(self.source_lines))]

    def _source_prompt(self, line: int, current: int | None) -> Text:
        breakpoints = self.stepper.breakpoints if self.stepper else set()
        mark = "●" if line in breakpoints else " "
        here = "▶" if line == current else " "
        text = Text.assemble((mark, "bold red"), (here, "bold green"), (f"{line:>4} ", "dim"),
                             self.source_lines[line - 1].expandtabs(4))
        if line == current:
            text.stylize("on #2a4a2a")
        text.no_wrap = True
        text.overflow = "ellipsis"
        return text

    def _refresh_all(self, first: bool = False) -> None:
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
        status = Text.assemble((rec.kernel, "bold"), " · ", " · ".join(parts))
        if rec.error:
            status.append("\n")
            status.append(("⚠ " if step.event == "exception" else "(ends with) ") + rec.error,
                          style="bold red" if step.event == "exception" else "red")
        self.query_one("#stepper-status", Static).update(status)
        self._draw_source(step.line, first)
        self._draw_ir(step.line)
        self._draw_locals()
        self._draw_accesses()

    def _draw_source(self, line: int, first: bool) -> None:
        source = self.query_one("#stepper-source", OptionList)
        previous = self._shown_line
        self._shown_line = line
        for changed in {previous, line} - {None}:
            source.replace_option_prompt_at_index(changed - 1, self._source_prompt(changed, line))
        if first or source.highlighted is None or source.highlighted == (previous or 1) - 1:
            source.highlighted = line - 1  # the cursor follows execution unless the user moved it away
        # keep the executing line in the middle of the pane
        source.scroll_to(y=max(0, line - 1 - source.scrollable_content_region.height // 2), animate=False)

    def _ir_index(self, stage: str) -> dict[int, list[int]]:
        """Source line → IR line indices of a stage: from irscope's source map when present, else from
        the MLIR `loc(...)` attributes (TTIR, TTGIR)."""
        if stage not in self._ir_links:
            self._ir_links[stage] = _ir_lines_by_source(self.comp, stage, self.workspace.user_file.path)
        return self._ir_links[stage]

    def _draw_ir(self, line: int) -> None:
        box = self.query_one("#stepper-ir", VerticalScroll)
        target = self.query_one("#stepper-ir-text", Static)
        if self.ir_stage is None:
            target.update(Text(f"{self.comp.kernel.name} did not compile for {self.comp.target}: no IR to show",
                               style="dim"))
            return
        box.border_title = f"{self.ir_stage} of line {line}"
        text = self.comp.stage(self.ir_stage).splitlines()
        indices = self._ir_index(self.ir_stage).get(line, [])
        if not indices:
            target.update(Text(f"line {line} produced no {self.ir_stage} (or it is not linked)", style="dim"))
            return
        out = Text()
        for i in indices[:200]:
            out.append(f"{i + 1:>5} ", style="dim")
            out.append(_strip_loc(text[i]).strip()[:200] + "\n")
        target.update(out)

    def _newest_local(self) -> str | None:
        """The local the previous step changed (what the line just run assigned), else the last one."""
        step = self.stepper.step
        steps = self.stepper.recording.steps
        before = steps[step.index - 1].locals if step.index > 0 else {}
        changed = [n for n, v in step.locals.items() if before.get(n) is not v and not n.startswith("(")]
        names = list(step.locals)
        return changed[-1] if changed else (names[-1] if names else None)

    def _draw_locals(self) -> None:
        step = self.stepper.step
        table = self.query_one("#stepper-locals", DataTable)
        keep = self._pinned if self._pinned in step.locals else self._newest_local()
        self._auto_pick = keep
        table.clear()
        names = list(step.locals)
        for name in names:
            value = step.locals[name]
            kind = "mask" if value.is_mask else value.kind
            summary = Text(value.summary())
            st = value.stats() if value.kind == "tensor" else {}
            if st.get("nan") or st.get("inf"):
                summary.stylize("bold yellow")
            table.add_row(name, kind, summary, key=name)
        if keep in names:
            table.move_cursor(row=names.index(keep), animate=False)
        self._show_value(keep)

    @on(DataTable.RowHighlighted, "#stepper-locals")
    def _local_highlighted(self, event: DataTable.RowHighlighted) -> None:
        name = event.row_key.value if event.row_key is not None else None
        if name is None or self.stepper is None or name not in self.stepper.step.locals:
            return
        table = self.query_one("#stepper-locals", LocalsTable)
        if table.user_moved:  # the user picked this local: keep showing it while stepping
            table.user_moved = False
            self._pinned = name
        elif name != self._auto_pick:
            return  # a redraw moving the cursor on its way
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
        grid = self.query_one("#stepper-value-grid", DataTable)
        box = self.query_one("#stepper-value-box")
        grid.clear(columns=True)
        mask.update("")
        if value is None:
            stats.update("")
            return
        box.border_title = f"value of {name}"
        stats.update(_stats_text(value))
        if value.is_mask:
            mask.update(draw_mask(value.data))
            return
        if value.data is None or not value.is_block:
            return
        _fill_grid(grid, value)

    def _draw_accesses(self) -> None:
        step = self.stepper.step
        rec = self.stepper.recording
        widget = self.query_one("#stepper-accesses", Static)
        if not step.accesses:
            widget.update(Text("no load or store at this line", style="dim"))
            return
        out = Text()
        for index in step.accesses[:4]:
            access = rec.accesses[index]
            out.append(access.summary() + f"  shape {list(access.shape)}\n")
            if access.mask is not None:
                out.append_text(draw_mask(access.mask, max_rows=2))
                out.append("\n")
        widget.update(out)

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

    def action_toggle_breakpoint(self) -> None:
        source = self.query_one("#stepper-source", OptionList)
        if self.stepper is None or source.highlighted is None:
            return
        line = source.highlighted + 1
        self.stepper.toggle_breakpoint(line)
        source.replace_option_prompt_at_index(line - 1, self._source_prompt(line, self._shown_line))

    @on(OptionList.OptionSelected, "#stepper-source")
    def _source_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_toggle_breakpoint()

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
        if self._shown_line is not None:
            self._draw_ir(self._shown_line)

    def action_leave(self) -> None:
        self.app.pop_screen()


# ---- helpers (pure functions: easy to test)


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


def draw_mask(mask: np.ndarray, max_rows: int = 16) -> Text:
    """A mask as rows of cells: █ for an active lane, · for a masked-off one."""
    data = np.asarray(mask, dtype=bool)
    rows = data.reshape(-1, min(MASK_ROW, data.size)) if data.ndim <= 1 else data.reshape(data.shape[0], -1)
    out = Text()
    for r, row in enumerate(rows[:max_rows]):
        start = r * rows.shape[1] if data.ndim <= 1 else r
        out.append(f"{start:>5} ", style="dim")
        for lane in row[:MASK_ROW * 2]:
            out.append("█" if lane else "·", style="green" if lane else "red")
        out.append("\n")
    if len(rows) > max_rows:
        out.append(f"      … {len(rows) - max_rows} more rows\n", style="dim")
    out.rstrip()
    return out


def _cell(x) -> Text | str:
    if isinstance(x, (float, np.floating)):
        f = float(x)
        if np.isnan(f) or np.isinf(f):
            return Text(f"{f}", style="bold yellow")
        return f"{f:.4g}"
    return str(x)


def _fill_grid(grid: DataTable, value: Value) -> None:
    data = value.data
    if data.ndim == 1:
        width = min(GRID_ROW, data.size)
        grid.add_columns("", *[f"+{c}" for c in range(width)])
        for r in range(min((data.size + width - 1) // width, GRID_MAX_ROWS)):
            chunk = data[r * width:(r + 1) * width]
            grid.add_row(Text(str(r * width), style="dim"), *[_cell(x) for x in chunk])
    else:
        view = data.reshape(data.shape[0], -1)
        cols = min(view.shape[1], GRID_MAX_COLS)
        grid.add_columns("", *[str(c) for c in range(cols)])
        for r in range(min(view.shape[0], GRID_MAX_ROWS)):
            grid.add_row(Text(str(r), style="dim"), *[_cell(x) for x in view[r, :cols]])


_LOC_DEF = re.compile(r"^#(loc\d*)\s*=\s*loc\((.*)\)\s*$")
_LOC_TAIL = re.compile(r"\bloc\((#loc\d*|\"[^\"]*\"\(#loc\d*\)|\"[^\"]*\":\d+:\d+)\)\s*$")
_FILE_LINE = re.compile(r'^"([^"]*)":(\d+):\d+$')
_NAMED = re.compile(r'^"[^"]*"\((#loc\d*)\)$')
_CALLSITE = re.compile(r"^callsite\((#loc\d*) at (#loc\d*)\)$")


def _strip_loc(line: str) -> str:
    return _LOC_TAIL.sub("", line).rstrip()


class _MlirLocations:
    """MLIR `loc(...)` attributes resolved to a line of the user's file (the innermost frame in it)."""

    def __init__(self, text: list[str], path: str):
        self.base = os.path.basename(path)  # Triton's cache may hold another checkout's path: match the name
        self.defs = {}
        for line in text:
            match = _LOC_DEF.match(line)
            if match:
                self.defs["#" + match.group(1)] = match.group(2)
        self.memo: dict[str, int | None] = {}

    def resolve(self, expr: str, depth: int = 0) -> int | None:
        if depth > 50:
            return None
        if expr.startswith("#loc"):
            if expr not in self.memo:
                self.memo[expr] = None
                self.memo[expr] = self.resolve(self.defs.get(expr, "unknown"), depth + 1)
            return self.memo[expr]
        match = _FILE_LINE.match(expr)
        if match:
            return int(match.group(2)) if os.path.basename(match.group(1)) == self.base else None
        match = _NAMED.match(expr)
        if match:
            return self.resolve(match.group(1), depth + 1)
        match = _CALLSITE.match(expr)
        if match:
            callee = self.resolve(match.group(1), depth + 1)
            return callee if callee is not None else self.resolve(match.group(2), depth + 1)
        return None


def _ir_lines_by_source(comp, stage: str, path: str) -> dict[int, list[int]]:
    """Source line → IR line indices. Prefers the TUI's link index (irscope's source map); falls back
    to reading MLIR locations directly, which covers TTIR and TTGIR."""
    try:
        from .linking import LinkIndex  # the main TUI's index over comp.source_map, when both exist
        if hasattr(comp, "source_map"):
            links = LinkIndex(comp).stage(stage)
            return {line: list(indices) for line, indices in links.by_source.items()}
    except Exception:  # no source map in this build: read the locations ourselves
        pass
    text = comp.stage(stage).splitlines()
    locations = _MlirLocations(text, path)
    out: dict[int, list[int]] = {}
    for index, line in enumerate(text):
        if line.startswith("#loc"):
            continue
        match = _LOC_TAIL.search(line)
        source = locations.resolve(match.group(1)) if match else None
        if source is not None:
            out.setdefault(source, []).append(index)
    return out
