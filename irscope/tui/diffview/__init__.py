"""Diff mode: two compilations of one kernel, aligned by source line (`D` in the main view)."""

from irscope.tui.diffview.screen import DiffScreen

__all__ = ["DiffScreen", "open_diff"]


def open_diff(main) -> None:
    if main.shown is None or main.session is None:
        main.notify("open a kernel first", timeout=2)
        return
    main.app.push_screen(DiffScreen(main))
