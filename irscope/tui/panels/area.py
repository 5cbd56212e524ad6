"""The panel area (`#panels`, the tabs of info panels under the panes) as a place the focus goes.

Tab and Shift+Tab go round the visible panes, then the panel shown and the Findings view; `m` on a focused panel
maximises the area (the panes and the Findings view step aside; again, Tab away or Esc: they come
back). The app keeps its own state; these functions read and change the widgets only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App
    from textual.widgets import TabbedContent

    from irscope.tui.panels.base import InfoPanel

MAXIMISED = "-max"  # the class #panels carries while maximised (app.tcss gives it the height)


def panel_area(app: App) -> TabbedContent:
    return app.query_one("#panels")


def shown_panel(app: App) -> InfoPanel | None:
    """The panel of the active tab, when the area is shown. Found by its type's name, which Textual's type
    selector matches on subclasses too: panels/base.py imports this module, not the other way round."""
    area = panel_area(app)
    if not area.display or area.active_pane is None:
        return None
    return next(iter(area.active_pane.query("InfoPanel")), None)


def has_focus_inside(app: App) -> bool:
    focused = app.focused
    area = panel_area(app)
    while focused is not None:
        if focused is area:
            return True
        focused = focused.parent
    return False


def is_maximised(app: App) -> bool:
    return panel_area(app).has_class(MAXIMISED)


def toggle_maximised(app: App) -> None:
    if is_maximised(app):
        restore(app)
        return
    area = panel_area(app)
    findings = app.query_one("#findings")
    area.add_class(MAXIMISED)
    area.findings_were_shown = bool(findings.display)  # (findings hides #panels the same way)
    findings.display = False
    app.query_one("#panes").display = False
    area.refresh(layout=True)


def restore(app: App) -> None:
    """The panes (and the Findings view, when it was shown) back beside a maximised area."""
    area = panel_area(app)
    if not area.has_class(MAXIMISED):
        return
    area.remove_class(MAXIMISED)
    app.query_one("#panes").display = True
    app.query_one("#findings").display = getattr(area, "findings_were_shown", False)
    reveal = getattr(app, "_reveal_cursors", None)
    if reveal is not None:
        app.call_after_refresh(reveal)  # the panes have their height again


def restore_unless_focused(app: App) -> None:
    if is_maximised(app) and not has_focus_inside(app):
        restore(app)


def leave(app: App) -> None:
    """Esc on a panel: the panes again, the focus on the one the panels describe."""
    restore(app)
    linked = getattr(app, "linked", None)  # the main screen's panes (tui/main/linked_panes.py)
    if linked is not None and linked.panes:
        linked.focus_active()


def cycle_focus(app, linked, delta: int) -> None:
    """Tab / Shift+Tab: the next of the visible panes (of `linked`, the main screen's LinkedPanes), then,
    where they are shown, the panel and the Findings view."""
    pane_count = linked.visible_count()
    ring: list[int | str] = list(range(pane_count))
    panel = shown_panel(app)
    if panel is not None:
        ring.append("panel")
    findings = shown_findings(app)
    if findings is not None:
        ring.append("findings")
    if findings is not None and findings.has_focus:
        here: int | str = "findings"
    elif panel is not None and has_focus_inside(app):
        here = "panel"
    else:
        here = min(linked.active_pane, pane_count - 1)
    target = ring[(ring.index(here) + delta) % len(ring)]
    if target == "panel":
        panel.focus()
        return
    if target == "findings":
        restore(app)
        findings.focus()
        return
    restore(app)
    linked.focus_pane(target)


def shown_findings(app: App):
    """The Findings view, when its list is open on screen (collapsed to its title line, it takes no keys)."""
    try:
        view = app.query_one("#findings")
    except Exception:  # noqa: BLE001 - a screen without one
        return None
    return view if view.display and getattr(view, "mode", "") == "open" else None


def after_toggle(app, was_inside: bool) -> None:
    """`i` pressed on a focused panel: the focus goes with it to the next panel, or back to the panes
    when the area is hidden."""
    if not was_inside:
        return
    panel = shown_panel(app)
    if panel is not None:
        app.call_after_refresh(panel.focus)  # once the tab's content is shown
    else:
        leave(app)
