"""The base class of info panels: widgets shown in the main view's panel area (toggled with `i`)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from ..context import CursorContext


class InfoPanel(Widget):
    """Subclass this, set `panel_title`, implement `show_context`, and list the class in
    `irscope.tui.panels.PANELS`. The main view calls `show_context` on the visible panel whenever the
    cursor moves or the compilation changes, so keep it cheap: cache per compilation, or do heavy work
    in a thread worker (`@work(thread=True, exclusive=True)`)."""

    DEFAULT_CSS = """
    InfoPanel {
        height: auto;
        padding: 0 1;
    }
    """

    panel_title: ClassVar[str] = "Panel"

    def show_context(self, ctx: CursorContext) -> None:  # pragma: no cover - the base does nothing
        """Show what the panel knows about the line under the cursor."""

    def show_failure(self, exc: BaseException) -> None:
        """`show_context` (or its worker) raised: say so in the panel instead of ending the app."""
        message = Text(f"{self.panel_title}: cannot show this line ({type(exc).__name__}: {exc})", style="red")
        for n, static in enumerate(self.query(Static)):
            static.update(message if n == 0 else "")
