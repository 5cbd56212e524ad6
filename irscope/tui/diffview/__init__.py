"""Diff mode: two compilations of one kernel, aligned by source line (`D` in the main view)."""

from .screen import DiffScreen

__all__ = ["DiffScreen", "open_diff"]


def open_diff(app) -> None:
    if app.shown is None or app.session is None:
        app.notify("open a kernel first", timeout=2)
        return
    app.push_screen(DiffScreen(app))
