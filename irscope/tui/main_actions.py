"""The main screen's actions: what its keys do (a part of `MainScreen`, kept in its own module for
size; the state they read and change is the screen's)."""

from __future__ import annotations

import threading

from textual.widgets import TabbedContent, TabPane

from irscope.tui import edit, pane_links
from irscope.tui.findings import FindingsView
from irscope.tui.panels import area as panel_area
from irscope.tui.panes import LAYOUTS, STAGE_TITLES
from irscope.tui.prompt_bar import PromptBar
from irscope.tui.screens import TargetScreen


class MainActions:
    """Mixed into MainScreen: `action_*` for its bindings, the prompt bar's answers, search."""

    def action_pane(self, delta: int) -> None:
        panel_area.cycle_focus(self, delta, self.visible_count(self.effective_layout()))

    def action_stage(self, delta: int) -> None:
        if self.shown is None:
            return
        stages = list(self.shown.stages)
        pane = self.panes[self.active_pane]
        current = stages.index(pane.stage) if pane.stage in stages else 0
        self.action_set_stage(stages[(current + delta) % len(stages)])

    def action_set_stage(self, stage: str) -> None:
        from irscope.tui.showing import fill_pane

        if self.shown is None:
            return
        if stage not in self.shown.stages:
            self.notify(f"{stage} does not exist for {self.shown.comp.target}", severity="warning")
            return
        pane = self.panes[self.active_pane]
        self.pane_stages[pane.number] = stage
        fill_pane(self, pane, stage)
        if self.source_line is not None and self.shown.comp.ok:
            hits = (
                self.shown.links.ir_lines(stage, self.source_line)
                if stage != "source"
                else [self.source_line - 1]
            )
            if hits:
                pane.view.move_cursor_to_index(hits[0], center=True)
                pane.view.set_linked(frozenset(hits))
        self.update_pane_title(pane)

    def action_block(self, direction: int) -> None:
        pane_links.jump_block(self, self.current_view(), direction)

    def action_maximize_pane(self) -> None:
        self.pane_maximized = not self.pane_maximized
        self.panes[self.active_pane].view.focus()

    def action_cycle_layout(self) -> None:
        self.set_layout(LAYOUTS[(LAYOUTS.index(self.layout_mode) + 1) % len(LAYOUTS)])
        self.notify(
            f"layout: {self.layout_mode}"
            + (f" ({self.effective_layout()})" if self.layout_mode == "auto" else ""),
            timeout=2,
        )
        view = self.panes[self.active_pane].view
        if view.cursor_index is not None:
            self.link_from(view, view.cursor_index)

    def action_toggle_colour(self) -> None:
        self.colouring = not self.colouring

    def action_toggle_debug(self) -> None:
        self.show_debug = not self.show_debug
        self.notify(
            "debug metadata shown" if self.show_debug else "debug metadata hidden", timeout=2
        )

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
        self.call_after_refresh(self.reveal_cursors)  # the panes changed height

    def action_measure(self) -> None:
        """Open the Measured panel and measure the shown compilation (with no GPU it says why not)."""
        from irscope.tui.panels.measured import MeasuredPanel

        panels = self.query_one("#panels", TabbedContent)
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

    def action_pick(self) -> None:
        if self.still_working():
            return
        if len(self.comps) > 1 or (
            self.ws is not None and self.ws.missing
        ):  # the picker says what was not reached
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
        if self.shown is not None and not self.still_working():
            edit.open_edit(self)

    def action_stepper(self) -> None:
        if self.shown is None or self.ws is None:
            self.notify("open a kernel first", timeout=2)
            return
        from irscope.tui.stepper import (
            StepperScreen,  # imported on first use: it pulls in the interpreter's recorder
        )

        self.app.push_screen(StepperScreen(self.shown.comp))

    def action_open_view(
        self, name: str
    ) -> None:  # D: diff mode (tui/diffview), P: passes (tui/pipeline)
        from irscope.tui import diffview, pipeline

        (diffview.open_diff if name == "diff" else pipeline.open_pipeline)(self)

    # ---- search and go-to (the prompt bar asks; its answer comes as a message)

    def action_search(self) -> None:
        self.query_one(PromptBar).ask(
            "search",
            f"search {STAGE_TITLES.get(self.current_view().stage, '')} "
            "(Enter; then n / N; Esc cancels)",
        )

    def action_goto(self) -> None:
        self.query_one(PromptBar).ask(
            "goto",
            f"go to line in {STAGE_TITLES.get(self.current_view().stage, '')} (Enter; Esc cancels)",
        )

    def on_prompt_bar_cancelled(self, message: PromptBar.Cancelled) -> None:
        self.panes[self.active_pane].view.focus()

    def on_prompt_bar_answered(self, message: PromptBar.Answered) -> None:
        view = self.panes[self.active_pane].view
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
        self._search(self.current_view(), direction)

    def _search(self, view, direction: int, start_row: int | None = None) -> None:
        row = view.find(self.search_term, forward=direction > 0, start_row=start_row)
        if row is None:
            self.notify(
                f"'{self.search_term}' not found in {STAGE_TITLES.get(view.stage, view.stage)}",
                severity="warning",
                timeout=3,
            )
            return
        view.move_cursor_to_row(row, center=True)

    def jump_source(self, line: int | None) -> None:
        for pane in self.panes:
            if pane.stage == "source" and line:
                self.focus_pane(pane.number)
                pane.view.move_cursor_to_index(line - 1, center=True, notify=True)
                return
