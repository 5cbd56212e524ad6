"""The base class of info panels: widgets shown in the main view's panel area (toggled with `i`)."""

from __future__ import annotations

from typing import ClassVar

from textual.widget import Widget

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
