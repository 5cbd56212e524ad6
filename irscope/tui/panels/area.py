"""The panel area (`#panels`, the tabs of info panels under the panes) as a place the focus goes.

`i` shows the area, then the next panel, then hides it. Tab and Shift+Tab go round the visible panes, then
the panel shown and the Findings view (the main screen's ring); `m` on a focused panel maximises the area:
the panes and the Findings view step aside, and come back when it is pressed again, on Tab away or Esc.
The area keeps whether the Findings view was shown before it stepped aside; what the panes do once they
are back (keep their cursor lines in sight, take the focus) is theirs to do, told by a message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message
from textual.widgets import TabbedContent, TabPane

if TYPE_CHECKING:
    from irscope.tui.panels.base import InfoPanel

MAXIMISED = "-max"  # the class #panels carries while maximised (app.tcss gives it the height)


class PanelArea(TabbedContent):
    class Restored(Message):
        """The panes are beside the area again, at their own height: their cursor lines may be out of sight."""

    class Left(Message):
        """Esc on a panel: the focus goes back to the pane the panels describe."""

    def __init__(self, *titles, **kwargs) -> None:
        super().__init__(*titles, **kwargs)
        # whether the Findings view was on screen before a maximised area hid it (it comes back so)
        self._findings_were_shown = False

    def shown_panel(self) -> InfoPanel | None:
        """The panel of the active tab, when the area is shown. Found by its type's name, which Textual's type
        selector matches on subclasses too: panels/base.py imports this module, not the other way round."""
        if not self.display or self.active_pane is None:
            return None
        return next(iter(self.active_pane.query("InfoPanel")), None)

    def has_focus_inside(self) -> bool:
        focused = self.app.focused
        while focused is not None:
            if focused is self:
                return True
            focused = focused.parent
        return False

    @property
    def is_maximised(self) -> bool:
        return self.has_class(MAXIMISED)

    def toggle_maximised(self) -> None:
        if self.is_maximised:
            self.restore()
            return
        findings = self.screen.query_one("#findings")
        self._findings_were_shown = bool(findings.display)
        self.add_class(MAXIMISED)
        findings.display = False
        self.screen.query_one("#panes").display = False
        self.refresh(layout=True)

    def restore(self) -> None:
        """The panes (and the Findings view, when it was shown) back beside a maximised area."""
        if not self.is_maximised:
            return
        self.remove_class(MAXIMISED)
        self.screen.query_one("#panes").display = True
        self.screen.query_one("#findings").display = self._findings_were_shown
        self.post_message(self.Restored())

    def restore_unless_focused(self) -> None:
        if self.is_maximised and not self.has_focus_inside():
            self.restore()

    def leave(self) -> None:
        self.restore()
        self.post_message(self.Left())

    def step(self) -> None:
        """`i`: show the area at its first panel; again: the next panel; after the last: hide it. Pressed on a
        focused panel, the focus goes along to the next panel, or back to the panes when the area hides."""
        tabs = [pane.id for pane in self.query(TabPane)]
        was_inside = self.has_focus_inside()
        if not self.display:
            self.display = True
            self.active = tabs[0]
        elif self.active in tabs and self.active != tabs[-1]:
            self.active = tabs[tabs.index(self.active) + 1]
        else:
            self.restore()
            self.display = False
        if not was_inside:
            return
        panel = self.shown_panel()
        if panel is not None:
            self.call_after_refresh(panel.focus)  # once the tab's content is shown
        else:
            self.leave()


def panel_area_of(widget) -> PanelArea | None:
    """The panel area a panel sits in (None for a panel shown on its own, as in a test's harness)."""
    return next((a for a in widget.ancestors if isinstance(a, PanelArea)), None)
