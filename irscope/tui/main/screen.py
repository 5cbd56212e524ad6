"""The main screen: the kernel's source and its compiled stages side by side, linked line by line.

The panes, their layout and the links between their lines are a `LinkedPanes` widget (main/
linked_panes.py). The screen composes it with the header, the status line, the Findings view, the info
panels and the prompt bar; it owns the main view's keys and actions (a dialog or the stepper in front
of it has its own), what the file opened to (the worker, the compilations, the values set with `e`)
and the requests to the worker process. Requests run as thread workers (tui/jobs.py) that answer with
typed messages (tui/messages.py), applied here on the UI thread; `busy` is whether one of them runs.
Requests are numbered: an answer to any but the newest is dropped. While one runs, no other starts (it
would race it for the compilation shown and the picker's rows).
"""

from __future__ import annotations

import gc
import os
import threading
from functools import partial
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.geometry import Size
from textual.screen import Screen
from textual.widgets import Label, ProgressBar, Static, TabPane

from irscope.analysis.changes import changes
from irscope.base.names import ALL_STAGES
from irscope.base.textsafe import safe_text
from irscope.tui import edit, jobs
from irscope.tui.asker import Asker, bounded, deliver_failure, new_request
from irscope.tui.findings import FindingsView
from irscope.tui.loader import OpenFailure, Shown, describe_open_error
from irscope.tui.main.heap import COLLECT, YOUNG_ONLY, spare_the_heap
from irscope.tui.main.linked_panes import LinkedPanes
from irscope.tui.main.panes import STAGE_TITLES
from irscope.tui.main.texts import header_text, missing_lines, named_left, picker_rows, read_source
from irscope.tui.main.watch import INTERVAL_S, SaveWatch
from irscope.tui.messages import (
    Analysed,
    Compiled,
    Failed,
    Loaded,
    PickWanted,
    Progress,
    Request,
    SessionOpened,
)
from irscope.tui.panels import PANELS, InfoPanel
from irscope.tui.panels.area import PanelArea
from irscope.tui.prompt_bar import PromptBar
from irscope.tui.screens import EditScreen, PickerScreen, TargetScreen
from irscope.tui.widgets.key_footer import KeyFooter
from irscope.tui.widgets.stage_view import StageView

# The requests whose answer replaces the compilations: what the views kept of the old ones is dropped.
NEW_COMPILATIONS = frozenset({"load", "recompile", "config"})


class MainScreen(Screen):
    """The main view of `irscope FILE` (the app's default screen)."""

    BINDINGS = [
        Binding("q", "app.quit", "Quit", id="quit"),
        Binding("question_mark", "app.help", "Help", key_display="?", id="help"),
        Binding("tab", "pane(1)", "Next pane", show=False, priority=True),
        Binding("shift+tab", "pane(-1)", "Prev pane", show=False, priority=True),
        Binding("s", "stage(1)", "Stage", id="stage", tooltip="Show the next stage in this pane"),
        Binding("S", "stage(-1)", "Prev stage", show=False),
        Binding("right_square_bracket", "block(1)", "Next block", key_display="]", id="next-block"),
        Binding("left_square_bracket", "block(-1)", "Prev block", key_display="[", show=False),
        Binding(
            "m",
            "maximize_pane",
            "Max",
            id="maximize",
            tooltip="Maximise this pane (again: restore)",
        ),
        Binding("l", "cycle_layout", "Layout", id="layout"),
        Binding("c", "toggle_colour", "Colours", id="colour", tooltip="Colour links on/off"),
        Binding("d", "toggle_debug", "Debug", id="debug", tooltip="Show or hide debug metadata"),
        Binding("slash", "search", "Search", key_display="/", id="search"),
        Binding("n", "search_next(1)", "Next match", show=False),
        Binding("N", "search_next(-1)", "Prev match", show=False),
        Binding("g", "goto", "Go to", id="goto", show=False),
        Binding("t", "target", "Target", id="target"),
        Binding(
            "e", "edit", "Edit", id="edit", tooltip="Edit constexprs and launch options, recompile"
        ),
        Binding("r", "reload", "Reload", id="reload"),
        Binding(
            "w",
            "toggle_watch",
            "Watch",
            show=False,
            tooltip="Reload by itself when the file or a module of its folder is saved (on; again: off)",
        ),
        Binding(
            "i",
            "toggle_panels",
            "Info",
            id="panels",
            tooltip="Info panels; again: the next one, then none",
        ),
        Binding(
            "f",
            "toggle_findings",
            "Findings",
            id="findings",
            tooltip="What costs this kernel time, ranked; Enter shows a finding's line in every pane",
        ),
        Binding("p", "pick", "Kernels", id="pick", show=False),
        Binding(
            "M",
            "measure",
            "Measure",
            id="measure",
            show=False,
            tooltip="With a GPU: time this compilation and run Nsight Compute on it (the Measured panel)",
        ),
        Binding("ctrl+t", "stepper", "Stepper", id="stepper", show=False),
        Binding(
            "D",
            "open_view('diff')",
            "Diff",
            id="diff",
            show=False,
            tooltip="Two compilations, by source line",
        ),
        Binding(
            "P",
            "open_view('passes')",
            "Passes",
            id="passes",
            show=False,
            tooltip="The compiler pass by pass",
        ),
        Binding(
            "x",
            "stop_capture",
            "Go on",
            id="stop-capture",
            show=False,
            tooltip="While the file runs: stop it and go on with the launches captured so far",
        ),
        *[
            Binding(str(n + 1), f"set_stage('{stage}')", stage, show=False)
            for n, stage in enumerate(ALL_STAGES)
        ],
    ]

    # The footer, when the full one does not fit the terminal: shorter descriptions, then without the
    # keys for looks (`?` lists every key).
    FOOTER_SHORT = {"block(1)": "Block", "toggle_colour": "Colour"}
    FOOTER_MINOR = frozenset(
        {"block(1)", "maximize_pane", "cycle_layout", "toggle_colour", "toggle_debug"}
    )

    def __init__(self, path: str, open_args: dict[str, Any]) -> None:
        super().__init__()
        self.path = path
        # target, kernel, config, run_main, defines, arg_types: what `open` is asked
        self.open_args = open_args
        self.ws = None  # the opened file (a WorkspaceInfo from the worker)
        self.session = None  # the worker process that runs the file and answers for it
        self.sessions = jobs.Sessions()  # every worker process started here, closed with the screen
        self.capturing = False  # the file is running in the worker (x: go on with what is captured)
        self.comps: list = []  # the file's compilations for the target shown (the picker's rows)
        # which of them is shown (an edited one stands in for its row)
        self.shown_index: int | None = None
        # values set with `e` for the one shown; `r` applies them again
        self.edits: dict[str, Any] = {}
        # the launch's own compilation before the first edit, with its worker and row: a reset (ctrl+r in
        # the dialog) shows it again without compiling
        self.unedited: tuple = (None, None, None)
        self.failure: OpenFailure | None = None  # why nothing is shown
        # the compilation shown before the last change (diff mode's other side)
        self.previous_comp = None
        self.search_term = ""
        self._serial = 0  # the newest request's number: answers to older ones are dropped
        # compilation key -> {source line: Nsight Compute's counters} (M)
        self.measured_lines = bounded()
        # compilation key -> the compiler's passes, one step each (P)
        self.pass_captures = bounded()
        self.linked = LinkedPanes(id="panes")  # the panes, their layout and links
        self.panel_area = PanelArea(id="panels")  # the info panels under the panes
        # `w`: a save of the file, or of a module of its folder its run imported, reloads it
        self.watch = SaveWatch()
        # the compilation shown when a reload began: the next one shown is compared with it
        self._reloaded_from = None

    # ---- building the screen

    def compose(self) -> ComposeResult:
        yield Static(Text(f"irscope  {safe_text(self.path)}", style="bold"), id="header")
        with Horizontal(id="status"):
            yield Label("", id="status-text", markup=False)  # a message is never markup
            yield ProgressBar(total=1.0, show_eta=False, show_percentage=False, id="progress")
        yield self.linked
        yield FindingsView()
        with self.panel_area:
            for panel_cls in PANELS:
                with TabPane(panel_cls.panel_title):
                    yield panel_cls()
        yield PromptBar(id="prompt")
        yield KeyFooter(self.FOOTER_SHORT, self.FOOTER_MINOR)

    def on_mount(self) -> None:
        self.panel_area.display = False
        self.linked.apply_layout()
        self.set_progress(f"opening {self.path}…", 0.0)
        text = read_source(self.path)
        if text is not None:
            self.linked.show_loading(text)
        self.call_after_refresh(self.load)  # paint first: the worker's imports compete for the GIL
        self.set_interval(INTERVAL_S, self._reload_if_saved)

    @property
    def shown(self) -> Shown | None:
        """The compilation on the panes (None until one is)."""
        return self.linked.shown

    def caches(self) -> dict:
        return {"measured_lines": self.measured_lines, "pass_captures": self.pass_captures}

    def keep_measured_lines(self, key: int, lines: dict) -> None:
        """Nsight Compute's counters of each source line of compilation `key` (the Measured panel's
        answer), for the Memory and Coalescing panels to show beside their predictions."""
        self.measured_lines[key] = lines
        self.refresh_panels()

    def keep_passes(self, key: int, steps: list[dict]) -> None:
        """The compiler's passes for compilation `key` (the pipeline view's capture), for `P` again."""
        self.pass_captures[key] = steps

    def askers(self) -> list[Asker]:
        """The views on this screen that ask the worker (and keep its answers)."""
        return [node for node in self.walk_children() if isinstance(node, Asker)]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The main view's own keys are off (and out of its footer) while another screen is in front:
        they would act unseen on the panes behind it. Quit and help are the app's and stay."""
        return self.is_active

    def close_session(self) -> None:
        """The worker, its compile children and its files: gone (with any a load has just started)."""
        self.session = None
        self.sessions.close_all()

    def terminal_resized(self, size: Size) -> None:
        """The app's Resize, told even while a dialog is in front of this screen."""
        self.linked.resized(size)

    def set_progress(
        self, message: str, fraction: float | None = None, *, error: bool = False
    ) -> None:
        message = safe_text(message)
        status = self.query_one("#status")
        status.display = bool(message)
        status.set_class(error, "-error")
        self.query_one("#status-text", Label).update(message)
        bar = self.query_one("#progress", ProgressBar)
        bar.display = fraction is not None and not error
        if fraction is not None:
            bar.update(progress=fraction)

    def update_header(self) -> None:
        if self.shown is not None:
            self.query_one("#header", Static).update(
                header_text(self.shown.comp, self.comps, self.ws)
            )

    # ---- showing a compilation, or why there is none

    def _show_compilation(self, shown: Shown) -> None:
        previous = self.linked.shown
        self.failure = None
        # diff mode (D) compares with it
        if previous is not None and previous.comp.key != shown.comp.key:
            self.previous_comp = previous.comp
        self.linked.show_compilation(shown)
        if self._reloaded_from is not None:
            self._say_what_changed(shown)
        self.update_header()
        comp = shown.comp
        if comp.failure is not None:
            f = comp.failure
            where = f"line {f.line}: " if f.line else ""
            self.set_progress(
                f"✗ {comp.kernel.name} did not compile — {where}{f.message}  (fix the file, press r)",
                error=True,
            )
        else:
            self.set_progress("")
        # asks the worker; marks the gutter when it answers
        self.query_one(FindingsView).show_compilation(shown)
        self.refresh_panels()

    def _show_open_failure(self, failure: OpenFailure) -> None:
        """The file could not be opened or compiled: say why, show its text, mark the line."""
        self.failure = failure
        # the message says the fix
        self.set_progress(f"✗ {failure.message.splitlines()[0]}  (r reloads)", error=True)
        self.query_one(FindingsView).show_no_compilation()
        self.linked.show_failure(failure, read_source(self.path) or "")

    # ---- the info panels

    def refresh_panels(self) -> None:
        panels = self.panel_area
        if not panels.display:
            return
        ctx = self.linked.cursor_context()
        if ctx is None or panels.active_pane is None:
            return
        for panel in panels.active_pane.query(InfoPanel):
            try:
                panel.show_context(ctx)
            except Exception as exc:  # an analysis bug must not end the app
                panel.show_failure(exc)
            break

    def on_linked_panes_linked(self, message: LinkedPanes.Linked) -> None:
        self.refresh_panels()

    def on_descendant_focus(self, event) -> None:
        if isinstance(event.widget, StageView):  # (the linked panes made it the active pane)
            self.refresh_panels()  # the panels describe the focused pane's line, never the one before

    def on_tabbed_content_tab_activated(self, event) -> None:
        self.refresh_panels()

    def on_panel_area_restored(self, message: PanelArea.Restored) -> None:
        self.call_after_refresh(self.linked.reveal_cursors)  # the panes have their height again

    def on_panel_area_left(self, message: PanelArea.Left) -> None:
        if self.linked.panes:
            self.linked.focus_active()

    # ---- actions: what the keys do

    def action_pane(self, delta: int) -> None:
        """Tab / Shift+Tab: the next of the visible panes, then, where they are shown, the panel and the
        Findings view."""
        linked, area = self.linked, self.panel_area
        pane_count = linked.visible_count()
        ring: list[int | str] = list(range(pane_count))
        panel = area.shown_panel()
        if panel is not None:
            ring.append("panel")
        findings = self.query_one(FindingsView)
        if (
            findings.display and findings.mode == "open"
        ):  # collapsed to its title line, it takes no keys
            ring.append("findings")
        if "findings" in ring and findings.has_focus:
            here: int | str = "findings"
        elif panel is not None and area.has_focus_inside():
            here = "panel"
        else:
            here = min(linked.active_pane, pane_count - 1)
        target = ring[(ring.index(here) + delta) % len(ring)]
        if target == "panel":
            panel.focus()
            return
        area.restore()
        if target == "findings":
            findings.focus()
        else:
            linked.focus_pane(target)

    def action_stage(self, delta: int) -> None:
        self.linked.step_stage(delta)

    def action_set_stage(self, stage: str) -> None:
        self.linked.set_stage(stage)

    def action_block(self, direction: int) -> None:
        self.linked.jump_block(direction)

    def action_maximize_pane(self) -> None:
        self.linked.toggle_maximized()

    def action_cycle_layout(self) -> None:
        self.linked.cycle_layout()

    def action_toggle_colour(self) -> None:
        self.linked.toggle_colour()

    def action_toggle_debug(self) -> None:
        self.linked.toggle_debug()

    def action_toggle_panels(self) -> None:
        """Show the panels; again: the next panel (Tab belongs to the panes), after the last: hide them."""
        self.panel_area.step()
        self.refresh_panels()
        self.call_after_refresh(self.linked.reveal_cursors)  # the panes changed height

    def action_measure(self) -> None:
        """Open the Measured panel and measure the shown compilation (with no GPU it says why not)."""
        # deferred: a screen's modules load when it first opens, not before the first paint
        from irscope.tui.panels.measured import MeasuredPanel

        panels = self.panel_area
        panel = self.query_one(MeasuredPanel)
        pane = next(p for p in panels.query(TabPane) if panel in p.query(MeasuredPanel))
        panels.display = True
        panels.active = pane.id
        self.refresh_panels()
        panel.measure()

    def action_toggle_findings(self) -> None:
        self.query_one(FindingsView).toggle()

    def action_stop_capture(self) -> None:
        session = self.session
        if session is not None and self.capturing:
            threading.Thread(target=session.request, args=("stop_capture",), daemon=True).start()

    def action_reload(self) -> None:
        if not self.still_working():
            self.load()

    def action_toggle_watch(self) -> None:
        self.watch.on = not self.watch.on
        state = "on: a save reloads" if self.watch.on else "off: r reloads"
        self.notify(f"watching {os.path.basename(self.path)} for saves {state}", timeout=3)

    def _reload_if_saved(self) -> None:
        saved = [] if self.busy else self.watch.saved()
        if saved:
            self.notify(f"{os.path.basename(saved[0])} saved: reloading", timeout=2)
            self.load()

    def _say_what_changed(self, shown: Shown) -> None:
        """After a reload: mark the source lines the save changed, and say in one line what moved in the
        compiled code since the compilation shown before it."""
        before, self._reloaded_from = self._reloaded_from, None
        if before is None or before.kernel.name != shown.comp.kernel.name:
            return
        try:
            found = changes(before, shown.comp)
        except Exception as exc:  # noqa: BLE001 - an analysis bug must not end the app
            self.notify(f"what the save changed could not be worked out: {exc}", severity="warning")
            return
        self.linked.mark_changed(shown, frozenset(line - 1 for line in found.edited))
        if found.edited or found.lines:
            self.notify(f"since the last load: {found.summary()}", timeout=8)

    def action_pick(self) -> None:
        if self.still_working():
            return
        # the picker says what was not reached, and lists the specializations not compiled yet
        if len(self.comps) > 1 or (
            self.ws is not None and (self.ws.missing or named_left(self.ws))
        ):
            self.pick(True)
        else:
            self.notify("this file has one compilation", timeout=2)

    def action_target(self) -> None:
        if self.shown is None or self.still_working():
            return

        def chosen(target: str | None) -> None:
            if target and target != str(self.shown.comp.target):
                self.recompile_in_background(target=target)

        self.app.push_screen(TargetScreen(str(self.shown.comp.target)), chosen)

    def action_edit(self) -> None:
        """The dialog for the compilation shown; on Enter, the changed values recompile in the background."""
        if self.shown is None or self.still_working():
            return
        comp = self.shown.comp
        values, kinds = edit.fields(comp)
        if not self.edits:  # the launch's own compilation: kept, so that a reset needs no recompile
            self.unedited = (self.session, self.shown_index, comp)

        def chosen(changed: dict | str | None) -> None:
            if changed == edit.RESET:
                self.reset_edits()
            elif changed:
                self.recompile_in_background(defines=changed)

        self.app.push_screen(EditScreen(values, kinds, edited=dict(self.edits)), chosen)

    def reset_edits(self) -> None:
        """Back to the launch's own values: its compilation when this worker still holds it, else a reload
        without the edits (the file runs again, the same compilation is shown)."""
        if self.still_working():
            return
        session, index, comp = self.unedited
        self.edits = {}
        if (
            comp is not None
            and session is self.session
            and index == self.shown_index
            and index is not None
        ):
            self.comps[index] = comp
            self.notify("back to the launch's own values", timeout=3)
            self.prepare_in_background(comp)
        else:
            self.load()

    def action_stepper(self) -> None:
        if self.shown is None or self.ws is None:
            self.notify("open a kernel first", timeout=2)
            return
        # deferred: a screen's modules load when it first opens, not before the first paint
        from irscope.tui.stepper import StepperScreen

        self.app.push_screen(StepperScreen(self.shown.comp))

    # D: diff mode (tui/diffview), P: passes (tui/pipeline)
    def action_open_view(self, name: str) -> None:
        # deferred: a screen's modules load when it first opens, not before the first paint
        from irscope.tui import diffview, pipeline

        (diffview.open_diff if name == "diff" else pipeline.open_pipeline)(self)

    # ---- search and go-to (the prompt bar asks; its answer comes as a message)

    def action_search(self) -> None:
        self.query_one(PromptBar).ask(
            "search",
            f"search {STAGE_TITLES.get(self.linked.current_view().stage, '')} "
            "(Enter; then n / N; Esc cancels)",
        )

    def action_goto(self) -> None:
        self.query_one(PromptBar).ask(
            "goto",
            f"go to line in {STAGE_TITLES.get(self.linked.current_view().stage, '')} "
            "(Enter; Esc cancels)",
        )

    def on_prompt_bar_cancelled(self, message: PromptBar.Cancelled) -> None:
        self.linked.focus_active()

    def on_prompt_bar_answered(self, message: PromptBar.Answered) -> None:
        view = self.linked.active_view()
        view.focus()
        value = message.value
        if message.kind == "search" and value:
            self.search_term = value
            self._search(view, 1, start_row=view.cursor_row - 1)
        elif message.kind == "goto" and value:
            try:
                line = int(value.lstrip(":"))
            except ValueError:
                self.notify(f"'{value}' is not a line number", severity="warning")
                return
            view.move_cursor_to_index(max(0, line - 1), center=True, notify=True)

    def on_key(self, event) -> None:
        prompt = self.query_one(PromptBar)
        if event.key == "escape" and prompt.display:  # Esc closes the prompt wherever the focus is
            prompt.cancel()
            event.stop()

    def action_search_next(self, direction: int) -> None:
        if not self.search_term:
            self.action_search()
            return
        self._search(self.linked.current_view(), direction)

    def _search(self, view: StageView, direction: int, start_row: int | None = None) -> None:
        row = view.find(self.search_term, forward=direction > 0, start_row=start_row)
        if row is None:
            self.notify(
                f"'{self.search_term}' not found in {STAGE_TITLES.get(view.stage, view.stage)}",
                severity="warning",
                timeout=3,
            )
            return
        view.move_cursor_to_row(row, center=True)

    # ---- requests to the worker

    @property
    def busy(self) -> bool:
        """A request runs (its answer would race another one for the compilation shown)."""
        return any(
            w.group == "load" and w.node is self and not w.is_finished for w in self.app.workers
        )

    def still_working(self) -> bool:
        """True (and said on screen) while a request runs."""
        busy = self.busy
        if busy:
            self.notify("still working; try again in a moment", timeout=2)
        return busy

    def _start(self, kind: str, job, *args) -> None:
        request = new_request(kind)
        self._serial = request.serial
        # until the request's worker has finished (on_worker_state_changed)
        gc.set_threshold(*YOUNG_ONLY)
        self.run_worker(
            partial(self._run_job, request, job, *args),
            thread=True,
            group="load",
            exit_on_error=False,
            description=kind,
        )

    def _run_job(self, request: Request, job, *args) -> None:
        try:
            job(request, self.post_message, *args)
        except BaseException as exc:  # shown on the screen (on_failed); `r` tries again
            self.post_message(Failed(request, describe_open_error(exc)))

    def _snapshot(self) -> jobs.Snapshot:
        return jobs.Snapshot(
            self.path,
            self.session,
            list(self.comps),
            self.shown_index,
            dict(self.edits),
            self.shown.comp if self.shown is not None else None,
        )

    def load(self) -> None:
        """Open the file afresh in a new worker (it runs the file's __main__)."""
        # None: the first load
        before = self.shown.comp.kernel.name if self.shown is not None else None
        self._reloaded_from = self.shown.comp if self.shown is not None else None
        # (taken now: a save while the file runs is seen once this load is done)
        self.watch.loading([self.path, *(self.ws.sources if self.ws else [])])
        old, self.session = self.session, None
        self._start(
            "load", jobs.load, self._snapshot(), self.sessions, old, dict(self.open_args), before
        )

    def prepare_in_background(self, comp) -> None:
        if not self.still_working():
            self._start("prepare", jobs.prepare_comp, self.session, comp, self.path)

    def recompile_in_background(
        self, target: str | None = None, defines: dict | None = None
    ) -> None:
        if not self.still_working() and self.shown is not None:
            self._start("recompile", jobs.recompile, self._snapshot(), target, defines)

    def compile_named_in_background(self, row: dict) -> None:
        """Compile a specialization named, not compiled yet (a picker row marked so)."""
        if not self.still_working() and self.ws is not None:
            self._start("named", jobs.compile_named, self._snapshot(), row)

    def compile_config_in_background(self, index: int) -> None:
        if not self.still_working() and self.shown is not None and self.ws is not None:
            self._start("config", jobs.compile_config, self._snapshot(), index)

    def _current(self, message) -> bool:
        return message.request.serial == self._serial

    def on_progress(self, message: Progress) -> None:
        if self._current(message):
            self.set_progress(message.text, message.fraction)

    def on_session_opened(self, message: SessionOpened) -> None:
        if not self._current(message):  # a newer load has its own worker: this one is not needed
            threading.Thread(
                target=self.sessions.close, args=(message.session,), daemon=True
            ).start()
            return
        self.session, self.capturing = message.session, True
        # the file may run for minutes (a training loop): every generation
        gc.set_threshold(*COLLECT)

    def on_loaded(self, message: Loaded) -> None:
        if self._current(message):
            self.capturing = False
            gc.set_threshold(*YOUNG_ONLY)  # the compile and the panes' texts, then spare_the_heap
            self.ws, self.comps = message.ws, message.comps
            self.watch.loaded(message.ws.sources)
            for said in (
                [message.ws.run_warning] if message.ws.run_warning else []
            ) + message.ws.notes:
                self.notify(said, severity="warning", timeout=10)

    def on_compiled(self, message: Compiled) -> None:
        if self._current(message):
            self.comps, self.shown_index, self.edits = (
                message.comps,
                message.shown_index,
                message.edits,
            )
            if message.target:
                self.open_args["target"] = message.target
            if message.config is not None:
                self.open_args["config"] = message.config
            # now a compilation: off the named list
            if message.named_done is not None and self.ws is not None:
                self.ws.named[message.named_done]["compiled"] = True

    def on_pick_wanted(self, message: PickWanted) -> None:
        if self._current(message):
            self.pick(False)

    def on_analysed(self, message: Analysed) -> None:
        if not self._current(message):
            return
        comp = message.shown.comp
        if message.completes:
            self._complete_compilation(message)
            return
        if message.request.kind in NEW_COMPILATIONS:
            self.drop_caches()
        self.comps = [comp if c.key == comp.key else c for c in self.comps]
        self._show_compilation(message.shown)
        if message.note:
            self.notify(message.note, severity=message.severity, timeout=6)

    def _complete_compilation(self, message: Analysed) -> None:
        """The SASS of the compilation on the panes arrived (prepare's second answer): the panes that show it
        are filled, the others stay where the user has them."""
        shown_before, comp = self.shown, message.shown.comp
        if shown_before is None or shown_before.comp.key != comp.key:
            return  # the user moved on to another compilation meanwhile
        self.comps = [comp if c.key == comp.key else c for c in self.comps]
        self.linked.complete_compilation(message.shown, shown_before.comp.pending)
        self.update_header()
        self.query_one(FindingsView).show_compilation(message.shown)  # its marks on the SASS too
        self.refresh_panels()

    def on_worker_state_changed(self, event) -> None:
        if event.worker.group == "load" and event.worker.is_finished and not self.busy:
            # after the paint of what it answered, not before it
            self.call_after_refresh(spare_the_heap)

    def on_failed(self, message: Failed) -> None:
        """Every request's failure, the views' too: shown on the screen, never the end of the app."""
        # a view's request: the view says it, if it still waits for it
        if message.asker is not None:
            deliver_failure(message)
            return
        if not self._current(message):
            return
        self.capturing = False
        if message.fatal:
            if message.request.kind in NEW_COMPILATIONS:
                self.drop_caches()
            self._show_open_failure(message.failure)
        else:
            self.set_progress(f"✗ {message.failure.message}", error=True)

    def drop_caches(self) -> None:
        """Forget what the views kept of the compilations shown until now (bounded caches, tui/asker.py)
        and their questions not yet answered."""
        for cache in self.caches().values():
            cache.clear()
        for asker in self.askers():
            asker.drop_caches()

    def cache_sizes(self) -> dict[str, int]:
        """How many entries each cache of the screen and its views holds, by "View.cache" (tests)."""
        sizes = {f"MainScreen.{name}": len(cache) for name, cache in self.caches().items()}
        for asker in self.askers():
            sizes.update(
                {f"{type(asker).__name__}.{name}": len(c) for name, c in asker.caches().items()}
            )
        return sizes

    def pick(self, cancellable: bool = True) -> None:
        named = named_left(self.ws)
        if self.shown is not None:
            shown_target = str(self.shown.comp.target)
        else:
            shown_target = str(self.comps[0].target) if self.comps else ""
        rows = picker_rows(self.comps, named, shown_target)
        compiled = len(self.comps)  # the rows after these are named (texts.picker_rows)
        more = f" and {len(named)} more not compiled" if named else ""
        self.set_progress(f"{os.path.basename(self.path)}: {compiled} compilations{more}", None)

        def chosen(index: int | None) -> None:
            if index is not None and compiled <= index < len(rows):  # named: compile it now
                self.set_progress(f"compiling {rows[index]['name']}…", 0.3)
                self.compile_named_in_background(
                    {**rows[index]["named"], "shown": rows[index]["constexprs"]}
                )
                return
            if index is not None and index >= 0:
                if index != self.shown_index:
                    self.edits = {}  # they belong to the compilation shown until now
                self.shown_index = index
                self.set_progress(f"preparing {self.comps[index].kernel.name}…", 0.6)
                self.prepare_in_background(self.comps[index])

        missing = (
            missing_lines(self.ws.missing) if self.ws is not None and self.ws.missing else None
        )
        self.app.push_screen(
            PickerScreen(rows, cancellable, start=self.shown_index or 0, missing=missing), chosen
        )
