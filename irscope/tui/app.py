"""The irscope app: a kernel's source and its compiled stages side by side, linked line by line.

The screen paints at once; opening the file (which runs its `__main__`), compiling and the analyses
that need the launch happen in a worker process (irscope/worker), waited on from thread workers; this
process never imports torch or Triton. Every pane is a `StageView` (Line API). A cursor move in one pane
is turned into a source line (through `LinkIndex`), and every other pane highlights and reveals the
lines that came from it.
"""

from __future__ import annotations

import gc
import threading
import os
import textwrap
from typing import TYPE_CHECKING, Any, Iterable

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Container, Horizontal, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Label, ProgressBar, Static, TabbedContent, TabPane

from ..core.names import ALL_STAGES, TARGETS
from ..worker.textsafe import safe_text
from .context import CursorContext
from .findings import FindingsView
from . import edit, keep_line
from .highlight import StageText
from .panels import PANELS, InfoPanel
from .panels import area as panel_area
from .screens import EditScreen, HelpScreen, PickerScreen, TargetScreen
from .widgets.key_footer import KeyFooter
from .widgets.stage_view import StageView

if TYPE_CHECKING:
    from .loader import OpenFailure, Shown

MAX_PANES = 5
NVIDIA_PANES = ("source", "ttgir", "ptx", "sass", "llir")
AMD_PANES = ("source", "ttgir", "amdgcn", "llir", "ttir")
LAYOUTS = ("auto", "columns", "rows", "tabs")
STAGE_TITLES = {"source": "Source", "ttir": "TTIR", "ttgir": "TTGIR", "llir": "LLVM IR", "ptx": "PTX",
                "sass": "SASS", "amdgcn": "AMDGCN", "error": "Error"}


def _read_registers(session, comps) -> None:
    """Registers for the picker's rows (cuobjdump runs in the worker; this waits in a thread worker)."""
    wanted = [comp for comp in comps if comp.ok and comp.resources is None]
    if wanted:
        found = session.request("registers", keys=[comp.key for comp in wanted])
        for comp in wanted:
            comp.resources = found.get(comp.key)


def _spare_the_heap() -> None:
    """torch, Triton and the compiled stages make a heap of millions of objects; a full garbage
    collection walking it stalls a keypress by 100-300 ms. They live for the whole session, so move
    them out of the collector's sight (`gc.freeze`) and collect young objects less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 100)


class PaneTitle(Widget):
    """One line of text; changing it repaints the line only (a Static would ask for a new layout)."""

    DEFAULT_CSS = "PaneTitle { height: 1; }"

    def __init__(self, classes: str) -> None:
        super().__init__(classes=classes)
        self._text = Text()

    def set_text(self, text: Text) -> None:
        if text != self._text:
            self._text = text
            self.refresh()

    def render(self) -> Text:
        return self._text


class StagePane(Vertical):
    """A title line and a StageView."""

    def __init__(self, number: int) -> None:
        super().__init__(id=f"pane-{number}", classes="pane")
        self.number = number
        self.stage = ""

    def compose(self) -> ComposeResult:
        yield PaneTitle(classes="pane-title")
        yield StageView(id=f"view-{self.number}")

    @property
    def view(self) -> StageView:
        return self.query_one(StageView)

    def set_title(self, text: Text) -> None:
        self.query_one(PaneTitle).set_text(text)


class IrscopeApp(App):
    """`irscope FILE`."""

    CSS_PATH = "app.tcss"
    TITLE = "irscope"

    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="help"),
        Binding("tab", "pane(1)", "Next pane", show=False, priority=True),
        Binding("shift+tab", "pane(-1)", "Prev pane", show=False, priority=True),
        Binding("s", "stage(1)", "Stage", id="stage", tooltip="Show the next stage in this pane"),
        Binding("S", "stage(-1)", "Prev stage", show=False),
        Binding("right_square_bracket", "block(1)", "Next block", key_display="]", id="next-block"),
        Binding("left_square_bracket", "block(-1)", "Prev block", key_display="[", show=False),
        Binding("m", "maximize_pane", "Max", id="maximize", tooltip="Maximise this pane (again: restore)"),
        Binding("l", "cycle_layout", "Layout", id="layout"),
        Binding("c", "toggle_colour", "Colours", id="colour", tooltip="Colour links on/off"),
        Binding("d", "toggle_debug", "Debug", id="debug", tooltip="Show or hide debug metadata"),
        Binding("slash", "search", "Search", key_display="/", id="search"),
        Binding("n", "search_next(1)", "Next match", show=False),
        Binding("N", "search_next(-1)", "Prev match", show=False),
        Binding("g", "goto", "Go to", id="goto", show=False),
        Binding("t", "target", "Target", id="target"),
        Binding("e", "edit", "Edit", id="edit", tooltip="Edit constexprs and launch options, recompile"),
        Binding("r", "reload", "Reload", id="reload"),
        Binding("i", "toggle_panels", "Info", id="panels", tooltip="Info panels; again: the next one, then none"),
        Binding("f", "toggle_findings", "Findings", id="findings",
                tooltip="What costs this kernel time, ranked; Enter shows a finding's line in every pane"),
        Binding("p", "pick", "Kernels", id="pick", show=False),
        Binding("M", "measure", "Measure", id="measure", show=False,
                tooltip="With a GPU: time this compilation and run Nsight Compute on it (the Measured panel)"),
        Binding("ctrl+t", "stepper", "Stepper", id="stepper", show=False),
        Binding("D", "open_view('diff')", "Diff", id="diff", show=False, tooltip="Two compilations, by source line"),
        Binding("P", "open_view('passes')", "Passes", id="passes", show=False, tooltip="The compiler pass by pass"),
        Binding("x", "stop_capture", "Go on", id="stop-capture", show=False,
                tooltip="While the file runs: stop it and go on with the launches captured so far"),
        *[Binding(str(n + 1), f"set_stage('{stage}')", stage, show=False) for n, stage in enumerate(ALL_STAGES)],
    ]

    # The footer, when the full one does not fit the terminal: shorter descriptions, then without the
    # keys for looks (`?` lists every key).
    FOOTER_SHORT = {"block(1)": "Block", "toggle_colour": "Colour"}
    FOOTER_MINOR = frozenset({"block(1)", "maximize_pane", "cycle_layout", "toggle_colour", "toggle_debug"})

    # Actions on the panes: off (and out of the footer) while the stepper or a dialog is in front, where
    # they would act unseen on the main view behind it.
    MAIN_VIEW_ACTIONS = frozenset({"stage", "set_stage", "block", "maximize_pane", "cycle_layout", "toggle_colour",
                                   "toggle_debug", "search", "search_next", "goto", "target", "edit", "reload",
                                   "toggle_panels", "toggle_findings", "pick", "stepper", "measure", "open_view"})

    def __init__(self, path: str, *, target: str | None = None, kernel: str | None = None,
                 config: int | None = None, run_main: bool = True, defines: list[str] | None = None,
                 arg_types: list[str] | None = None) -> None:
        super().__init__()
        self.path = path
        self.target_name = target
        self.kernel_name = kernel
        self.config = config
        self.run_main = run_main
        self.defines = list(defines or [])    # -D NAME=VALUE, parsed in the worker (with the engine)
        self.arg_types = list(arg_types or [])
        self.ws = None        # the opened file (a WorkspaceInfo from the worker)
        self.session = None   # the worker process that runs the file and answers for it
        self.capturing = False  # the file is running in the worker (x: go on with what is captured)
        self.comps: list = []           # the file's compilations for the target shown (the picker's rows)
        self.shown_index: int | None = None  # which of them is shown (an edited one stands in for its row)
        self.edits: dict[str, Any] = {}  # values set with `e` for the one shown; `r` applies them again
        self.shown: Shown | None = None
        self.failure: OpenFailure | None = None
        self.pane_stages: list[str] = list(NVIDIA_PANES)
        self.layout_mode = "auto"
        self.maximized = False
        self.colouring = True
        self.show_debug = False
        self.active_pane = 0
        self.search_term = ""
        self.prompt_kind = ""
        self.source_line: int | None = None
        self._linked_chain: tuple[int, ...] = ()
        self.busy = False
        self._panel_area: TabbedContent | None = None
        self._resized_to = None  # the newest terminal size (see _terminal_size)
        self.links_done = 0  # how many cursor moves have been linked across panes (tests, benchmarks)

    # ---- building the screen

    def compose(self) -> ComposeResult:
        yield Static(Text(f"irscope  {safe_text(self.path)}", style="bold"), id="header")
        with Horizontal(id="status"):
            yield Label("", id="status-text")
            yield ProgressBar(total=1.0, show_eta=False, show_percentage=False, id="progress")
        with Container(id="panes"):
            for n in range(MAX_PANES):
                yield StagePane(n)
        yield FindingsView()
        with TabbedContent(id="panels"):
            for panel_cls in PANELS:
                with TabPane(panel_cls.panel_title):
                    yield panel_cls()
        yield Input(id="prompt")
        yield KeyFooter(self.FOOTER_SHORT, self.FOOTER_MINOR)

    def on_unmount(self) -> None:
        gc.unfreeze()  # let the interpreter's shutdown free everything, as it expects
        self.close_session()

    def close_session(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            session.close()  # the worker, its compile children and its files: gone

    def on_mount(self) -> None:
        self.query_one("#panels").display = False
        self.query_one("#prompt").display = False
        self.on_mount_panes()
        self.theme_changed_signal.subscribe(self, self._restyle_panes)
        self.apply_layout()
        self.set_progress(f"opening {self.path}…", 0.0)
        self._show_source_while_loading()
        self.call_after_refresh(self.load)  # paint first: the worker's imports compete for the GIL

    # ---- loading

    def _show_source_while_loading(self) -> None:
        """The user's file in the source pane at once; the other panes wait for the compiler."""
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                text = safe_text(f.read())
        except OSError:
            return
        pane = self.panes[0]
        pane.stage = "source"
        pane.view.show("source", StageText("source", text), None, lambda line: None)
        pane.set_title(Text(" Source ", style="bold reverse") + Text(f" {len(text.splitlines())} lines", style="dim"))
        for other in self.panes[1:]:
            other.set_title(Text(f" {STAGE_TITLES.get(self.pane_stages[other.number], '')} ", style="bold")
                            + Text("  compiling…", style="dim"))

    def notify(self, message: str, *, markup: bool = False, **kwargs) -> None:
        """Every message is plain text (a file's `x[i]` or `[M=64]` is shown as typed, never read as markup),
        with control characters written out."""
        super().notify(safe_text(str(message)), markup=markup, **kwargs)

    def set_progress(self, message: str, fraction: float | None = None, *, error: bool = False) -> None:
        message = safe_text(message)
        status = self.query_one("#status")
        status.display = bool(message)
        status.set_class(error, "-error")
        self.query_one("#status-text", Label).update(message)
        bar = self.query_one("#progress", ProgressBar)
        bar.display = fraction is not None and not error
        if fraction is not None:
            bar.update(progress=fraction)

    def _progress_from_thread(self, message: str, fraction: float) -> None:
        self.call_from_thread(self.set_progress, f"{os.path.basename(self.path)}: {message}…", fraction)

    def load(self) -> None:
        self.busy = True  # at once, so nothing sees the old state as the answer
        self._load_worker()

    @work(thread=True, exclusive=True, group="load")
    def _load_worker(self) -> None:
        """Open the file (runs its __main__), compile, and prepare the chosen compilation."""
        self.call_from_thread(self.set_progress, f"opening {self.path}: loading Triton…", 0.02)
        from ..worker.remote import open_session
        from .loader import describe_open_error

        before = self.shown.comp.kernel.name if self.shown is not None else None  # None: the first load
        self.close_session()  # a reload runs the file afresh, in a new worker
        self.capturing = True
        try:
            self.session = open_session(self.path)
            ws, comps = self.session.request(
                "open", self._progress_from_thread, path=os.path.abspath(self.path), target=self.target_name,
                run_main=self.run_main, defines=self.defines, arg_types=self.arg_types, kernel=self.kernel_name,
                config=self.config)
        except BaseException as exc:  # shown in the app; `r` tries again
            self.busy = False
            self.call_from_thread(self.show_open_failure, describe_open_error(exc))
            return
        finally:
            self.capturing = False
        self.ws, self.comps = ws, comps
        for said in ([ws.run_warning] if ws.run_warning else []) + ws.notes:
            self.call_from_thread(self.notify, said, severity="warning", timeout=10, markup=False)
        index = self._same_compilation(comps, before) if before is not None else None
        if index is not None:
            self._reload_with_edits(index)
            return
        self.shown_index, self.edits = None, {}
        if len(comps) > 1:
            try:
                _read_registers(self.session, comps)
            except Exception as exc:
                self.busy = False
                self.call_from_thread(self.show_open_failure, describe_open_error(exc))
                return
            self.busy = False
            self.call_from_thread(self.pick, False)
            return
        self.shown_index = 0
        self._prepare_and_show(comps[0])

    def _same_compilation(self, comps: list, kernel_name: str | None) -> int | None:
        """On reload: the row of the compilation shown before (same place, same kernel), else the
        kernel's first; None (the picker) when the file no longer has that kernel."""
        index = self.shown_index
        if index is not None and index < len(comps) and comps[index].kernel.name == kernel_name:
            return index
        return next((n for n, comp in enumerate(comps) if comp.kernel.name == kernel_name), None)

    def _reload_with_edits(self, index: int) -> None:
        """Show compilation `index` of the reloaded file with the values set with `e` applied again,
        and say what was kept."""
        from .loader import describe_open_error

        comp = self.comps[index]
        kept = f"{comp.kernel.name} for {comp.target}"
        if comp.kernel.is_autotuned:
            kept += f", autotune config {comp.launch.autotune_index or 0}"
        note, severity = f"reloaded {os.path.basename(self.path)}: {kept}", "information"
        if self.edits:
            asked = ", ".join(f"{k}={v!r}" for k, v in self.edits.items())
            try:
                comp = self.session.request("recompile", key=comp.key, defines=self.edits)
                note += f", with your edits {asked}"
            except BaseException as exc:
                note += f"; your edits {asked} no longer apply: {describe_open_error(exc).message}"
                severity = "warning"
                self.edits = {}
            self.comps[index] = comp
        if len(self.comps) > 1:
            try:
                _read_registers(self.session, self.comps)
            except Exception:  # the picker shows no registers for the rows that failed
                pass
        self.shown_index = index
        self._prepare_and_show(comp)
        self.call_from_thread(self.notify, note, severity=severity, timeout=6, markup=False)

    def _prepare_and_show(self, comp) -> None:
        from .loader import describe_open_error, prepare

        try:
            comp = self.session.request("prepare", self._progress_from_thread, key=comp.key)
            self.comps = [comp if c.key == comp.key else c for c in self.comps]
            shown = prepare(comp, self._progress_from_thread)
        except BaseException as exc:
            self.busy = False
            self.call_from_thread(self.show_open_failure, describe_open_error(exc))
            return
        self.busy = False
        self.call_from_thread(self.show_compilation, shown)

    def still_working(self) -> bool:
        """True (and said on screen) while a load or compile runs: starting another now would race it for
        the compilation shown and the picker's rows."""
        if self.busy:
            self.notify("still working; try again in a moment", timeout=2)
        return self.busy

    def _start_work(self, worker, *args) -> None:
        """Run a background worker unless one runs already; busy at once, so nothing sees the old state
        as the answer."""
        if not self.still_working():
            self.busy = True
            worker(*args)

    def prepare_in_background(self, comp) -> None:
        self._start_work(self._prepare_in_background_worker, comp)

    @work(thread=True, exclusive=True, group="load")
    def _prepare_in_background_worker(self, comp) -> None:
        self._prepare_and_show(comp)

    def recompile_in_background(self, target: str | None = None, defines: dict | None = None) -> None:
        self._start_work(self._recompile_in_background_worker, target, defines)

    @work(thread=True, exclusive=True, group="load")
    def _recompile_in_background_worker(self, target: str | None = None, defines: dict | None = None) -> None:
        if self.shown is None:
            self.busy = False
            return
        what = f"compiling for {target}" if target else "recompiling with " + ", ".join(
            f"{k}={v}" for k, v in (defines or {}).items())
        self.call_from_thread(self.set_progress, f"{what}…", 0.3)
        from .loader import describe_open_error

        try:
            comp = self.session.request("recompile", key=self.shown.comp.key, target=target, defines=defines)
            comps = self._other_rows_for(target, comp) if target else None
        except BaseException as exc:
            self.busy = False
            failure = describe_open_error(exc)
            self.call_from_thread(self.set_progress, f"✗ {failure.message}", error=True)
            return
        if target:
            self.target_name = target
        if defines:
            self.edits.update(defines)
        if comps is not None:
            self.comps = comps
        elif self.shown_index is not None and self.shown_index < len(self.comps):
            self.comps[self.shown_index] = comp
        self._prepare_and_show(comp)

    def _other_rows_for(self, target: str, shown) -> list | None:
        """The picker's rows compiled for a new target (the one shown is `shown`), or None when the
        file has one compilation. Registers are read here, off the UI thread."""
        if len(self.comps) < 2 or self.shown_index is None:
            return None
        rows = []
        for n, comp in enumerate(self.comps):
            if n != self.shown_index:
                self.call_from_thread(self.set_progress, f"compiling for {target}: {n + 1} of {len(self.comps)}…",
                                      0.3 + 0.3 * n / len(self.comps))
                comp = self.session.request("recompile", key=comp.key, target=target)
            else:
                comp = shown
            rows.append(comp)
        _read_registers(self.session, rows)
        return rows

    def compile_config_in_background(self, index: int) -> None:
        self._start_work(self._compile_config_in_background_worker, index)

    @work(thread=True, exclusive=True, group="load")
    def _compile_config_in_background_worker(self, index: int) -> None:
        """An autotuned kernel: compile another of its configs (the file's launch, that config's meta)."""
        if self.shown is None or self.ws is None:
            self.busy = False
            return
        kernel = self.shown.comp.kernel
        self.call_from_thread(self.set_progress, f"compiling autotune config {index} of {kernel.name}…", 0.3)
        from .loader import describe_open_error

        try:
            comps = self.session.request("compile_config", key=self.shown.comp.key, index=index)
            _read_registers(self.session, comps)
        except BaseException as exc:
            self.busy = False
            self.call_from_thread(self.set_progress, f"✗ {describe_open_error(exc).message}", error=True)
            return
        self.config = index
        self.edits = {}  # this config's compilation comes from the file's launch, without them
        self.comps, self.shown_index = _with_rows_replaced(self.comps, kernel, comps)
        self._prepare_and_show(comps[0])

    def pick(self, cancellable: bool = True) -> None:
        rows = []
        for comp in self.comps:
            try:
                res = comp.resources if comp.ok else None
            except Exception:  # cuobjdump failed: the row shows no registers rather than the app dying
                res = None
            spec = " ".join(f"{k}:{v}" for k, v in comp.specialization.items() if v) if comp.ok else "compile error"
            name = comp.label
            if comp.kernel.inductor:  # the ops it fuses, and where Inductor made it for the CPU
                name += f"  [{comp.kernel.inductor_ops}]" + ("  (CPU-generated)" if comp.kernel.generated_for_cpu else "")
            rows.append({"name": name, "line": comp.kernel.line, "target": str(comp.target),
                         "grid": "×".join(map(str, comp.launch.grid)) if comp.launch.grid else "?",
                         "warps": comp.num_warps, "regs": res.registers if res else "—",
                         "spills": res.spills if res else "—", "spec": spec or "—"})
        self.set_progress(f"{os.path.basename(self.path)}: {len(rows)} compilations", None)

        def chosen(index: int | None) -> None:
            if index is not None and index >= 0:
                if index != self.shown_index:
                    self.edits = {}  # they belong to the compilation shown until now
                self.shown_index = index
                self.set_progress(f"preparing {self.comps[index].kernel.name}…", 0.6)
                self.prepare_in_background(self.comps[index])

        self.push_screen(PickerScreen(rows, cancellable, start=self.shown_index or 0), chosen)

    # ---- showing a compilation

    def show_compilation(self, shown: Shown) -> None:
        previous, line_before = self.shown, self.source_line
        cursors = {}
        if previous is not None:
            cursors = {pane.number: (pane.stage, pane.view.cursor_index) for pane in self.panes}
        self.shown = shown
        self.failure = None
        comp = shown.comp
        if previous is not None and previous.comp.key != comp.key:  # diff mode (D) compares with it
            self.previous_comp = previous.comp
        defaults = NVIDIA_PANES if comp.target.is_nvidia else AMD_PANES
        stages = shown.stages
        self.pane_stages = [s if s in stages else defaults[n] for n, s in enumerate(self.pane_stages)]
        self.pane_stages = [s if s in stages else "llir" for s in self.pane_stages]
        for pane in self.panes:
            old_stage, old_index = cursors.get(pane.number, (None, None))
            self._fill_pane(pane, self.pane_stages[pane.number],
                            cursor_index=old_index if old_stage == self.pane_stages[pane.number] else None)
        self.update_header()
        if comp.failure is not None:
            f = comp.failure
            where = f"line {f.line}: " if f.line else ""
            self.set_progress(f"✗ {comp.kernel.name} did not compile — {where}{f.message}  (fix the file, press r)",
                              error=True)
            source = self.panes[0]
            if source.stage == "source" and f.line:
                source.view.marks = {f.line - 1: "error"}
                source.view.move_cursor_to_index(f.line - 1, center=True)
        else:
            self.set_progress("")
        self.query_one(FindingsView).show_compilation(shown)  # asks the worker; marks the gutter when it answers
        self.apply_layout()
        self.call_after_refresh(self._reveal_cursors)  # after layout, when panes know their height
        kept = keep_line.keeps_line(self, line_before, previous)  # t, e, p, r: the line the user was on
        if not kept and comp.ok and self.panes[0].stage == "source" and (
                previous is None or previous.comp.kernel.name != comp.kernel.name):
            self._start_at_kernel_body(self.panes[0].view)
        self.focus_pane(self.active_pane)
        view = self.panes[self.active_pane].view
        if kept:
            keep_line.put_every_pane_on(self, line_before)
        elif view.cursor_index is not None and comp.ok:
            self.link_from(view, view.cursor_index)
        self.refresh_panels()
        self.call_after_refresh(_spare_the_heap)  # after the paint, not before it

    def _reveal_cursors(self) -> None:
        for pane in self.panes:
            if pane.display and pane.view.rows:
                pane.view.scroll_to_row(pane.view.cursor_row, center=True)

    def _start_at_kernel_body(self, view: StageView) -> None:
        """First view of a kernel: the cursor on its first line that produced IR, so the links show."""
        assert self.shown is not None
        links, start = self.shown.links, self.shown.comp.kernel.line
        first = next((n for n in range(start + 1, start + 400) if links.produced_ir(n)), None)
        if first is not None:
            self.active_pane = 0
            view.move_cursor_to_index(first - 1, center=True)

    def _fill_pane(self, pane: StagePane, stage: str, cursor_index: int | None = None) -> None:
        assert self.shown is not None
        shown = self.shown
        text = shown.texts.get(stage)
        if text is None:  # a stage this target lacks
            text = StageText("error", f"{stage} does not exist for {shown.comp.target}\n")
        links = shown.links.stage(stage) if shown.comp.ok or stage == "source" else None
        pane.stage = stage
        pane.view.set_options(colouring=self.colouring, show_debug=self.show_debug)
        pane.view.memory_marks = shown.marks.get(stage, {})
        pane.view.show(stage, text, links, shown.links.colour_slot, cursor_index=cursor_index,
                       full_text=shown.full_texts.get(stage))
        pane.view.set_finding_marks(shown.finding_marks.get(stage, {}))
        self.update_pane_title(pane)

    def show_open_failure(self, failure: OpenFailure) -> None:
        """The file could not be opened or compiled: say why, show its text, mark the line."""
        self.failure = failure
        self.set_progress(f"✗ {failure.message.splitlines()[0]}  (r reloads)", error=True)  # the message says the fix
        self.query_one(FindingsView).show_no_compilation()
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                source = safe_text(f.read())
        except OSError:
            source = ""
        message = "\n".join(textwrap.fill(part, 34) for part in safe_text(failure.message).splitlines())
        detail = message + ("\n\n" + safe_text(failure.detail) if failure.detail else "")  # narrow panes
        for pane in self.panes:
            stage = "source" if pane.number == 0 else "error"
            pane.stage = stage
            text = StageText(stage, source if stage == "source" else detail)
            pane.view.show(stage, text, None, lambda line: None)
            pane.set_title(Text(f" {STAGE_TITLES[stage]}", style="bold"))
        if failure.line:
            view = self.panes[0].view
            view.marks = {failure.line - 1: "error"}
            view.move_cursor_to_index(failure.line - 1, center=True)
        self.apply_layout()

    def update_header(self) -> None:
        if self.shown is None:
            return
        comp = self.shown.comp
        res = comp.resources
        grid = "×".join(map(str, comp.launch.grid)) if comp.launch.grid else "?"
        head = Text()
        head.append(f" {comp.kernel.name} ", style="bold reverse")
        head.append(f" {os.path.basename(comp.kernel.file)}:{comp.kernel.line}", style="dim")
        if comp.kernel.inductor:
            head.append(f"  {comp.kernel.inductor_ops}", style="cyan")
            if comp.kernel.generated_for_cpu:
                head.append("  generated for CPU: a GPU run may choose other block sizes", style="yellow")

        def item(label: str, value: Any) -> None:
            head.append("  ")
            head.append(f"{label} ", style="dim")
            head.append(str(value), style="bold")

        item("target", comp.target)
        item("grid", grid)
        if comp.kernel.is_autotuned:
            item("config", f"{(comp.launch.autotune_index or 0)}/{len(comp.kernel.autotune_configs or [])}")
        item("warps", comp.num_warps)
        item("stages", comp.num_stages)
        if comp.ok:
            item("regs", res.registers)
            item("spills", res.spills)
            item("smem", f"{res.shared_bytes or 0} B")
        if len(self.comps) > 1:
            number = next((n + 1 for n, c in enumerate(self.comps) if c.key == comp.key), "·")
            head.append(f"  ({number}/{len(self.comps)}; p: pick)", style="dim")
        if self.ws is not None and self.ws.device.startswith("virtual"):
            # no GPU here: the file saw irscope's virtual one, and no timing it printed is a measurement
            head.append("  virtual GPU", style="yellow")
        if comp.launch.guesses:
            head.append("  guessed: ", style="bold yellow")
            head.append(", ".join(f"{n}={v.split()[1] if v.startswith('a *') else v.split()[0]}"
                                  for n, v in comp.launch.guesses.items()), style="yellow")
        if comp.launch.interp_error:
            head.append("  interpreter failed", style="bold yellow")
        self.query_one("#header", Static).update(head)

    # ---- panes and layout

    @property
    def panes(self) -> list[StagePane]:
        if not getattr(self, "_panes", None):
            self._panes = list(self.query(StagePane))
        return self._panes

    def _terminal_size(self):
        """The size the last Resize event named: `self.size` still holds the old one while it is handled."""
        return self._resized_to or self.size

    def visible_count(self, mode: str) -> int:
        width, height = self._terminal_size()
        if mode == "rows":
            return 2 if height < 40 else 3
        if mode == "tabs":
            return 3 if width < 200 else 4
        if width < 120:
            return 2
        if width < 200:
            return 3
        return 4 if width < 260 else 5

    def effective_layout(self) -> str:
        if self.layout_mode != "auto":
            return self.layout_mode
        return "rows" if self._terminal_size().width < 100 else "columns"

    def apply_layout(self) -> None:
        mode = self.effective_layout()
        count = self.visible_count(mode)
        self.active_pane = min(self.active_pane, count - 1)
        container = self.query_one("#panes")
        container.set_class(mode == "rows", "-rows")
        container.set_class(mode != "rows", "-columns")
        solo = self.maximized or mode == "tabs"
        for pane in self.panes:
            pane.display = pane.number < count and (not solo or pane.number == self.active_pane)
        for pane in self.panes:
            self.update_pane_title(pane)

    def on_resize(self, event) -> None:
        self._resized_to = event.size
        self.apply_layout()
        self.call_after_refresh(self._reveal_cursors)

    def focus_pane(self, number: int) -> None:
        self.active_pane = number
        self.apply_layout()
        self.panes[number].view.focus()

    def current_view(self) -> StageView:
        focused = self.focused
        if isinstance(focused, StageView):
            return focused
        return self.panes[self.active_pane].view

    def on_descendant_focus(self, event) -> None:
        widget = event.widget
        if isinstance(widget, StageView):
            number = int(widget.id.split("-")[1])
            if number != self.active_pane:
                self.active_pane = number
                for pane in self.panes:
                    self.update_pane_title(pane)
            self.refresh_panels()  # the panels describe the focused pane's line, never the one before

    def update_pane_title(self, pane: StagePane) -> None:
        if not pane.stage:
            return
        title = Text()
        active = pane.number == self.active_pane
        title.append(f" {STAGE_TITLES.get(pane.stage, pane.stage)} ", style="bold reverse" if active else "bold")
        mode = self.effective_layout()
        if self.maximized or mode == "tabs":
            count = self.visible_count(mode)
            others = [STAGE_TITLES.get(p.stage, p.stage) for p in self.panes[:count] if p.number != pane.number]
            title.append(f"  ({pane.number + 1}/{count}; Tab: {', '.join(others)})", style="dim")
        view = pane.view
        if self.shown is not None and pane.stage in self.shown.texts:
            lines = len(self.shown.texts[pane.stage])
            title.append(f" {lines} lines", style="dim")
            index = view.cursor_index
            if index is not None and self.shown.comp.ok:
                src = self.shown.links.source_line(pane.stage, index)
                if pane.stage == "source":
                    count = sum(len(self.shown.links.ir_lines(s, src)) for s in self.shown.stages
                                if s not in ("source", "sass"))
                    title.append(f"  line {index + 1}", style="")
                    if count:
                        title.append(f" → {count} IR lines", style="dim")
                else:
                    title.append(f"  line {index + 1}", style="")
                    if src is not None:
                        title.append(f" ← source {src}", style="bold")
                    wanted = self.source_line
                    if wanted is not None and wanted != src and not self.shown.links.ir_lines(pane.stage, wanted):
                        title.append(f"  (source {wanted}: no lines here)", style="dim")
        pane.set_title(title)

    # ---- linking

    def on_stage_view_cursor_moved(self, message: StageView.CursorMoved) -> None:
        if self.shown is None or message.view.text is None:
            return
        self.link_from(message.view, message.index)

    def _restyle_panes(self, _theme) -> None:
        for pane in self.panes:
            pane.view.restyle()

    def on_mount_panes(self) -> None:
        for pane in self.panes:
            pane.view.on_cursor_moved = self.link_from

    def link_from(self, view: StageView, index: int) -> None:
        """Highlight, in every pane, the lines that share the source line of `view`'s line `index`."""
        shown = self.shown
        if shown is None or not shown.comp.ok or view.stage not in shown.texts:
            return
        links = shown.links
        src = links.source_line(view.stage, index)
        chain = links.chain(view.stage, index)
        same = src == self.source_line and chain == self._linked_chain
        self.source_line, self._linked_chain = src, chain
        for pane in self.panes:
            other = pane.view
            if not pane.display or other.text is None or pane.stage not in shown.texts:
                continue
            if same and other is not view:
                continue  # moving inside the lines of one source line: the other panes stay as they are
            if pane.stage == "source":
                lines = frozenset(n - 1 for n in chain) if src is not None else frozenset()
                other.set_linked(lines)
                if other is not view and src is not None and other.cursor_index != src - 1:
                    other.move_cursor_to_index(src - 1, center=True)
            else:
                hits = links.ir_line_set(pane.stage, src)
                other.set_linked(hits)
                if other is not view and hits and other.cursor_index not in hits:
                    other.move_cursor_to_index(links.ir_lines(pane.stage, src)[0], center=True)
            self.update_pane_title(pane)
        self.refresh_panels()
        self.links_done += 1

    def cursor_context(self) -> CursorContext | None:
        if self.shown is None:
            return None
        view = self.panes[self.active_pane].view
        index = view.cursor_index
        if index is None or view.stage not in self.shown.texts:
            return None
        src = self.shown.links.source_line(view.stage, index) if self.shown.comp.ok or view.stage == "source" else None
        return CursorContext(self.shown.comp, view.stage, index, src)

    def refresh_panels(self) -> None:
        panels = self._panel_area or self.query_one("#panels", TabbedContent)
        self._panel_area = panels
        if not panels.display:
            return
        ctx = self.cursor_context()
        if ctx is None:
            return
        active = panels.active_pane
        if active is None:
            return
        for panel in active.query(InfoPanel):
            try:
                panel.show_context(ctx)
            except Exception as exc:  # an analysis bug must not end the app
                panel.show_failure(exc)
            break

    def on_tabbed_content_tab_activated(self, event) -> None:
        self.refresh_panels()

    # ---- actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.MAIN_VIEW_ACTIONS and self.screen is not self.screen_stack[0]:
            return False
        return True

    def action_pane(self, delta: int) -> None:
        if self.screen is not self.screen_stack[0]:  # a dialog: Tab moves between its fields
            if delta > 0:
                self.screen.focus_next()
            else:
                self.screen.focus_previous()
            return
        panel_area.cycle_focus(self, delta, self.visible_count(self.effective_layout()))

    def action_stage(self, delta: int) -> None:
        if self.shown is None:
            return
        stages = list(self.shown.stages)
        pane = self.panes[self.active_pane]
        current = stages.index(pane.stage) if pane.stage in stages else 0
        self.action_set_stage(stages[(current + delta) % len(stages)])

    def action_set_stage(self, stage: str) -> None:
        if self.shown is None:
            return
        if stage not in self.shown.stages:
            self.notify(f"{stage} does not exist for {self.shown.comp.target}", severity="warning")
            return
        pane = self.panes[self.active_pane]
        self.pane_stages[pane.number] = stage
        self._fill_pane(pane, stage)
        if self.source_line is not None and self.shown.comp.ok:
            hits = self.shown.links.ir_lines(stage, self.source_line) if stage != "source" else [self.source_line - 1]
            if hits:
                pane.view.move_cursor_to_index(hits[0], center=True)
                pane.view.set_linked(frozenset(hits))
        self.update_pane_title(pane)

    def action_block(self, direction: int) -> None:
        if self.shown is None or not self.shown.comp.ok:
            return
        view = self.current_view()
        index = view.cursor_index
        if index is None:
            return
        links = self.shown.links
        if view.stage == "source":
            line = index + 1
            candidates = sorted(n for n in links.stage("source").source_of if links.produced_ir(n))
            after = [n for n in candidates if (n > line if direction > 0 else n < line)]
            if not after:
                self.notify("no more source lines that produced IR", timeout=2)
                return
            view.move_cursor_to_index((after[0] if direction > 0 else after[-1]) - 1)
            return
        src = links.source_line(view.stage, index)
        if src is None:
            self.notify("this line has no source line", timeout=2)
            return
        blocks = view.block_rows(links.ir_lines(view.stage, src))
        row = view.cursor_row
        if direction > 0:
            nxt = [b for b in blocks if b[0] > row]
            target = nxt[0][0] if nxt else blocks[0][0]
        else:
            current = [b for b in blocks if b[0] <= row < b[1]]
            start = current[0][0] if current else row
            prev = [b for b in blocks if b[0] < start]
            target = prev[-1][0] if prev else blocks[-1][0]
        view.move_cursor_to_row(target, center=True)

    def action_maximize_pane(self) -> None:
        self.maximized = not self.maximized
        self.apply_layout()
        self.call_after_refresh(self._reveal_cursors)
        self.panes[self.active_pane].view.focus()

    def action_cycle_layout(self) -> None:
        self.layout_mode = LAYOUTS[(LAYOUTS.index(self.layout_mode) + 1) % len(LAYOUTS)]
        self.maximized = False
        self.apply_layout()
        self.call_after_refresh(self._reveal_cursors)
        self.notify(f"layout: {self.layout_mode}" + (f" ({self.effective_layout()})" if self.layout_mode == "auto" else ""),
                    timeout=2)
        view = self.panes[self.active_pane].view
        if view.cursor_index is not None:
            self.link_from(view, view.cursor_index)

    def action_toggle_colour(self) -> None:
        self.colouring = not self.colouring
        for pane in self.panes:
            pane.view.set_options(colouring=self.colouring)

    def action_toggle_debug(self) -> None:
        self.show_debug = not self.show_debug
        for pane in self.panes:
            pane.view.set_options(show_debug=self.show_debug)
        self.notify("debug metadata shown" if self.show_debug else "debug metadata hidden", timeout=2)

    def action_toggle_panels(self) -> None:
        """Show the panels; again: the next panel (Tab belongs to the panes), after the last: hide them."""
        panels = self.query_one("#panels", TabbedContent)
        tabs = [pane.id for pane in panels.query(TabPane)]
        inside = panel_area.has_focus_inside(self)
        if not panels.display:
            panels.display = True
            panels.active = tabs[0]
        elif panels.active in tabs and panels.active != tabs[-1]:
            panels.active = tabs[tabs.index(panels.active) + 1]
        else:
            panel_area.restore(self)
            panels.display = False
        self.refresh_panels()
        panel_area.after_toggle(self, inside)
        self.call_after_refresh(self._reveal_cursors)  # the panes changed height

    def action_measure(self) -> None:
        """Open the Measured panel and measure the shown compilation (with no GPU it says why not)."""
        from .panels.measured import MeasuredPanel
        panels = self.query_one("#panels", TabbedContent)
        panel = self.query_one(MeasuredPanel)
        pane = next(p for p in panels.query(TabPane) if panel in p.query(MeasuredPanel))
        panels.display = True
        panels.active = pane.id
        self.refresh_panels()
        panel.measure()

    def action_toggle_findings(self) -> None:
        self.query_one(FindingsView).toggle()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_stop_capture(self) -> None:
        session = self.session
        if session is not None and self.capturing:
            threading.Thread(target=session.request, args=("stop_capture",), daemon=True).start()

    def action_reload(self) -> None:
        if not self.still_working():
            self.load()

    def action_pick(self) -> None:
        if self.still_working():
            return
        if len(self.comps) > 1:
            self.pick(True)
        else:
            self.notify("this file has one compilation", timeout=2)

    def action_target(self) -> None:
        if self.shown is None or self.still_working():
            return

        def chosen(target: str | None) -> None:
            if target and target != str(self.shown.comp.target):
                self.recompile_in_background(target=target)

        self.push_screen(TargetScreen(str(self.shown.comp.target)), chosen)

    def action_edit(self) -> None:
        if self.shown is not None and not self.still_working():
            edit.open_edit(self)

    def action_stepper(self) -> None:
        if self.shown is None or self.ws is None:
            self.notify("open a kernel first", timeout=2)
            return
        from .stepper import StepperScreen  # imported on first use: it pulls in the interpreter's recorder

        self.push_screen(StepperScreen(self.shown.comp))

    def action_open_view(self, name: str) -> None:  # D: diff mode (tui/diffview), P: passes (tui/pipeline)
        from . import diffview, pipeline
        (diffview.open_diff if name == "diff" else pipeline.open_pipeline)(self)

    # ---- search and go-to

    def _open_prompt(self, kind: str, placeholder: str) -> None:
        prompt = self.query_one("#prompt", Input)
        self.prompt_kind = kind
        prompt.placeholder = placeholder
        prompt.value = ""
        prompt.display = True
        prompt.focus()

    def action_search(self) -> None:
        self._open_prompt("search", f"search {STAGE_TITLES.get(self.current_view().stage, '')} "
                                    "(Enter; then n / N; Esc cancels)")

    def action_goto(self) -> None:
        self._open_prompt("goto", f"go to line in {STAGE_TITLES.get(self.current_view().stage, '')} "
                                  "(Enter; Esc cancels)")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "prompt":
            return
        value = event.value.strip()
        kind = self.prompt_kind
        self._close_prompt()
        view = self.panes[self.active_pane].view
        if kind == "search" and value:
            self.search_term = value
            self._search(view, 1, start_row=view.cursor_row - 1)
        elif kind == "goto" and value:
            try:
                line = int(value.lstrip(":"))
            except ValueError:
                self.notify(f"'{value}' is not a line number", severity="warning")
                return
            view.move_cursor_to_index(max(0, line - 1), center=True, notify=True)

    def _close_prompt(self) -> None:
        prompt = self.query_one("#prompt", Input)
        prompt.display = False
        self.panes[self.active_pane].view.focus()

    def on_key(self, event) -> None:
        if event.key == "escape" and self.query_one("#prompt", Input).display:
            self._close_prompt()
            event.stop()

    def action_search_next(self, direction: int) -> None:
        if not self.search_term:
            self.action_search()
            return
        self._search(self.current_view(), direction)

    def _search(self, view: StageView, direction: int, start_row: int | None = None) -> None:
        row = view.find(self.search_term, forward=direction > 0, start_row=start_row)
        if row is None:
            self.notify(f"'{self.search_term}' not found in {STAGE_TITLES.get(view.stage, view.stage)}",
                        severity="warning", timeout=3)
            return
        view.move_cursor_to_row(row, center=True)

    # ---- command palette

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if self.shown is None:
            return
        for stage in self.shown.stages:
            yield SystemCommand(f"Show {STAGE_TITLES[stage]} in this pane", f"This pane shows the {stage} stage",
                                lambda s=stage: self.action_set_stage(s))
        current = str(self.shown.comp.target)
        for target in TARGETS:
            if target != current:
                yield SystemCommand(f"Compile for {target}", "Recompile this launch for another target",
                                    lambda t=target: self.recompile_in_background(target=t))
        yield SystemCommand("Edit constexprs and launch options", "num_warps, num_stages, BLOCK sizes…",
                            self.action_edit)
        kernel = self.shown.comp.kernel
        chosen = self.shown.comp.launch.autotune_index or 0
        for index, config in enumerate(kernel.autotune_configs or []):
            if index != chosen:
                yield SystemCommand(f"Autotune config {index}: {config}", f"Compile {kernel.name} with this config",
                                    lambda i=index: self.compile_config_in_background(i))
        yield SystemCommand("Toggle colour links", "Colour each source line's IR", self.action_toggle_colour)
        yield SystemCommand("Toggle debug metadata", "#loc, !DILocation, .loc, .file", self.action_toggle_debug)
        for mode in LAYOUTS:
            yield SystemCommand(f"Layout: {mode}", "Arrange the panes", lambda m=mode: self._set_layout(m))
        yield SystemCommand("Maximise or restore this pane", "", self.action_maximize_pane)
        yield SystemCommand("Reload the file", "After editing it", self.action_reload)
        yield SystemCommand("Info panels", "Show the panels, the next panel, or hide them (i)", self.action_toggle_panels)
        yield SystemCommand("Findings", "What costs this kernel time, ranked (f)", self.action_toggle_findings)
        yield SystemCommand("Step through the kernel", "The stepper (ctrl+t)", self.action_stepper)
        if len(self.comps) > 1:
            yield SystemCommand("Pick another kernel or compilation", "", self.action_pick)
        if self.source_line is not None:
            yield SystemCommand(f"Jump to source line {self.source_line}", "In the source pane",
                                lambda: self._jump_source(self.source_line))

    def _set_layout(self, mode: str) -> None:
        self.layout_mode = mode
        self.maximized = False
        self.apply_layout()

    def _jump_source(self, line: int | None) -> None:
        for pane in self.panes:
            if pane.stage == "source" and line:
                self.focus_pane(pane.number)
                pane.view.move_cursor_to_index(line - 1, center=True, notify=True)
                return


def _with_rows_replaced(rows: list, kernel, new_rows: list) -> tuple[list, int]:
    """The picker's rows with `kernel`'s replaced by `new_rows` (another autotune config's compilations),
    where its first row was; and the index of the first new row."""
    at = next((n for n, comp in enumerate(rows) if comp.kernel == kernel), len(rows))
    kept = [comp for comp in rows if comp.kernel != kernel]
    at = min(at, len(kept))
    return kept[:at] + list(new_rows) + kept[at:], at

