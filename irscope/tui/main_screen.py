"""The main screen: the kernel's source and its compiled stages side by side, linked line by line.

It owns the main view's keys and actions (a dialog or the stepper in front of it has its own), the
view's state and the requests to the worker process. Requests run as thread workers (tui/jobs.py) that
answer with typed messages (tui/messages.py), applied here on the UI thread; `busy` is whether one of
them runs. The layout, the maximised pane, the active pane, colouring and the debug view are reactive
variables with one watcher each, which brings the panes in line with them.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Horizontal
from textual.geometry import Size
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Label, ProgressBar, Static, TabbedContent, TabPane

from irscope.base.names import ALL_STAGES
from irscope.base.textsafe import safe_text
from irscope.tui import jobs, pane_links, showing
from irscope.tui import panes as panes_mod
from irscope.tui.asker import Asker, bounded
from irscope.tui.findings import FindingsView
from irscope.tui.main_actions import MainActions
from irscope.tui.main_requests import MainRequests
from irscope.tui.panels import PANELS, InfoPanel
from irscope.tui.panes import MAX_PANES, NVIDIA_PANES, StagePane
from irscope.tui.prompt_bar import PromptBar
from irscope.tui.widgets.key_footer import KeyFooter
from irscope.tui.widgets.stage_view import StageView


class MainScreen(MainRequests, MainActions, Screen):
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

    layout_mode = var("auto", init=False)  # auto, columns, rows, tabs (l)
    pane_maximized = var(False, init=False)  # the active pane alone (m)
    active_pane = var(0, init=False)  # the pane focused last: the panels describe its line
    colouring = var(True, init=False)  # colour links (c)
    show_debug = var(False, init=False)  # debug metadata in the IR (d)
    terminal_size = var(
        Size(0, 0), init=False
    )  # set by the app's Resize (the screen may be behind a dialog)

    def __init__(self, path: str, open_args: dict[str, Any]) -> None:
        super().__init__()
        self.path = path
        self.open_args = (
            open_args  # target, kernel, config, run_main, defines, arg_types: what `open` is asked
        )
        self.ws = None  # the opened file (a WorkspaceInfo from the worker)
        self.session = None  # the worker process that runs the file and answers for it
        self.sessions = jobs.Sessions()  # every worker process started here, closed with the screen
        self.capturing = False  # the file is running in the worker (x: go on with what is captured)
        self.comps: list = []  # the file's compilations for the target shown (the picker's rows)
        self.shown_index: int | None = (
            None  # which of them is shown (an edited one stands in for its row)
        )
        self.edits: dict[
            str, Any
        ] = {}  # values set with `e` for the one shown; `r` applies them again
        self.shown = None  # a loader.Shown: the compilation on the panes
        self.failure = None  # a loader.OpenFailure: why nothing is shown
        self.previous_comp = (
            None  # the compilation shown before the last change (diff mode's other side)
        )
        self.pane_stages: list[str] = list(NVIDIA_PANES)
        self.search_term = ""
        self.source_line: int | None = None
        self.linked_chain: tuple[int, ...] = ()
        self.links_done = (
            0  # how many cursor moves have been linked across panes (tests, benchmarks)
        )
        self._serial = 0  # the newest request's number: answers to older ones are dropped
        self.measured_lines = (
            bounded()
        )  # compilation key -> {source line: Nsight Compute's counters} (M)
        self.pass_captures = (
            bounded()
        )  # compilation key -> the compiler's passes, one step each (P)
        self._panes: list[StagePane] = []
        self._panel_area: TabbedContent | None = None

    # ---- building the screen

    def compose(self) -> ComposeResult:
        yield Static(Text(f"irscope  {safe_text(self.path)}", style="bold"), id="header")
        with Horizontal(id="status"):
            yield Label("", id="status-text", markup=False)  # a message is never markup
            yield ProgressBar(total=1.0, show_eta=False, show_percentage=False, id="progress")
        with Container(id="panes"):
            for n in range(MAX_PANES):
                yield StagePane(n)
        yield FindingsView()
        with TabbedContent(id="panels"):
            for panel_cls in PANELS:
                with TabPane(panel_cls.panel_title):
                    yield panel_cls()
        yield PromptBar(id="prompt")
        yield KeyFooter(self.FOOTER_SHORT, self.FOOTER_MINOR)

    def on_mount(self) -> None:
        self.query_one("#panels").display = False
        for pane in self.panes:
            pane.view.on_cursor_moved = self.link_from
        self.app.theme_changed_signal.subscribe(self, self._restyle_panes)
        self.apply_layout()
        self.set_progress(f"opening {self.path}…", 0.0)
        showing.show_source_while_loading(self)
        self.call_after_refresh(self.load)  # paint first: the worker's imports compete for the GIL

    def caches(self) -> dict:
        return {"measured_lines": self.measured_lines, "pass_captures": self.pass_captures}

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

    # ---- the panes

    @property
    def panes(self) -> list[StagePane]:
        if not self._panes:
            self._panes = list(self.query(StagePane))
        return self._panes

    def update_header(self) -> None:
        if self.shown is not None:
            self.query_one("#header", Static).update(showing.header_text(self))

    def update_pane_title(self, pane: StagePane) -> None:
        if pane.stage:
            pane.set_title(panes_mod.pane_title(self, pane))

    def _terminal_size(self) -> Size:
        """The size the last Resize named: the app's `size` may still be the old one while it is handled."""
        return self.terminal_size if self.terminal_size.width else self.app.size

    def visible_count(self, mode: str) -> int:
        return panes_mod.visible_count(mode, self._terminal_size())

    def effective_layout(self) -> str:
        return panes_mod.effective_layout(self.layout_mode, self._terminal_size())

    def apply_layout(self) -> None:
        mode = self.effective_layout()
        count = self.visible_count(mode)
        self.active_pane = min(self.active_pane, count - 1)
        container = self.query_one("#panes")
        container.set_class(mode == "rows", "-rows")
        container.set_class(mode != "rows", "-columns")
        solo = self.pane_maximized or mode == "tabs"
        for pane in self.panes:
            pane.display = pane.number < count and (not solo or pane.number == self.active_pane)
        for pane in self.panes:
            self.update_pane_title(pane)

    def _relayout(self, _value=None) -> None:
        if self.panes:  # (a Resize may come before the screen is composed)
            self.apply_layout()
            self.call_after_refresh(self.reveal_cursors)

    watch_layout_mode = watch_pane_maximized = watch_terminal_size = _relayout

    def watch_active_pane(self) -> None:
        if self.panes:
            self.apply_layout()

    def watch_colouring(self, colouring: bool) -> None:
        for pane in self.panes:
            pane.view.set_options(colouring=colouring)

    def watch_show_debug(self, show_debug: bool) -> None:
        for pane in self.panes:
            pane.view.set_options(show_debug=show_debug)

    def set_layout(self, mode: str) -> None:
        self.layout_mode = mode
        self.pane_maximized = False

    def reveal_cursors(self) -> None:
        for pane in self.panes:
            if pane.display and pane.view.rows:
                pane.view.scroll_to_row(pane.view.cursor_row, center=True)

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
            self.active_pane = int(widget.id.split("-")[1])
            self.refresh_panels()  # the panels describe the focused pane's line, never the one before

    def _restyle_panes(self, _theme) -> None:
        for pane in self.panes:
            pane.view.restyle()

    # ---- linking

    def on_stage_view_cursor_moved(self, message: StageView.CursorMoved) -> None:
        if self.shown is not None and message.view.text is not None:
            self.link_from(message.view, message.index)

    def link_from(self, view: StageView, index: int) -> None:
        pane_links.link_from(self, view, index)

    def cursor_context(self):
        return pane_links.cursor_context(self)

    def refresh_panels(self) -> None:
        panels = self._panel_area or self.query_one("#panels", TabbedContent)
        self._panel_area = panels
        if not panels.display:
            return
        ctx = self.cursor_context()
        if ctx is None or panels.active_pane is None:
            return
        for panel in panels.active_pane.query(InfoPanel):
            try:
                panel.show_context(ctx)
            except Exception as exc:  # an analysis bug must not end the app
                panel.show_failure(exc)
            break

    def on_tabbed_content_tab_activated(self, event) -> None:
        self.refresh_panels()
