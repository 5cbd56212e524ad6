"""The base class of info panels: widgets shown in the main view's panel area (toggled with `i`).

A panel is a scrolling container that takes focus (Tab reaches it, a click focuses it): its text is
never cut, however little room the terminal leaves it. On a focused panel, the arrows, PgUp / PgDn,
Home / End and the mouse wheel scroll it, `m` maximises the panel area (again: restores) and Esc goes
back to the panes.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from irscope.tui.context import CursorContext
from irscope.tui.panels.area import panel_area_of


class InfoPanel(VerticalScroll, can_focus=True):
    """Subclass this, set `panel_title`, implement `show_context`, and list the class in
    `irscope.tui.panels.PANELS`. The main view calls `show_context` on the visible panel whenever the
    cursor moves or the compilation changes, so keep it cheap: cache per compilation (bounded, dropped on a
    new load: tui/asker.py), or ask the worker in a thread (`Asker.ask`)."""

    DEFAULT_CSS = """
    InfoPanel {
        height: auto;
        max-height: 100%;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    InfoPanel > Static {
        height: auto;
    }
    """

    BINDINGS = [
        Binding(
            "m", "maximize_panels", "Max panel", tooltip="Maximise the info panels (again: restore)"
        ),
        Binding("escape", "leave", "Panes", tooltip="Back to the panes"),
    ]

    panel_title: ClassVar[str] = "Panel"

    def show_context(self, ctx: CursorContext) -> None:  # pragma: no cover - the base does nothing
        """Show what the panel knows about the line under the cursor."""

    def show_failure(self, exc: BaseException) -> None:
        """`show_context` (or its worker) raised: say so in the panel instead of ending the app."""
        self.say_failed(f"{type(exc).__name__}: {exc}")

    def say_failed(self, why: str) -> None:
        """The panel cannot show the line: it says why, in its first text."""
        message = Text(f"{self.panel_title}: cannot show this line ({why})", style="red")
        for n, static in enumerate(self.query(Static)):
            static.update(message if n == 0 else "")

    def action_maximize_panels(self) -> None:
        area = panel_area_of(self)
        if area is not None:
            area.toggle_maximised()

    def action_leave(self) -> None:
        area = panel_area_of(self)
        if area is not None:
            area.leave()

    def on_blur(self) -> None:
        # Tab or a click elsewhere: once the new focus is known, a maximised area gives the panes back
        area = panel_area_of(self)
        if area is not None:
            self.call_after_refresh(area.restore_unless_focused)
