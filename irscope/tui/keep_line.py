"""A recompile (`t`, `e`), another compilation (`p`) or a reload (`r`) keeps the source line the user
was on: every pane's cursor goes back to it in the new compilation.

The IR of the new compilation is not the old one, so a cursor kept by its index would land on another
source line; the source line is what the user was looking at. It is kept when it still produced code
in the new compilation, or when the kernel is the same one (a line of it that made no code here is
still the line the user was reading); another kernel starts at its own body instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from irscope.tui.main_screen import MainScreen


def keeps_line(main: MainScreen, line: int | None, previous) -> bool:
    """Whether the new compilation shown should open on `line` (the source line before it came)."""
    shown = main.shown
    if line is None or previous is None or shown is None or not shown.comp.ok:
        return False
    source = shown.texts.get("source")
    if source is None or line > len(source):
        return False  # the reloaded file is shorter now
    old, new = previous.comp.kernel, shown.comp.kernel
    return (old.name, old.file) == (new.name, new.file) or shown.links.produced_ir(line)


def put_every_pane_on(main: MainScreen, line: int) -> None:
    """Every pane's cursor on source line `line` (the source pane) or its first line of IR, linked."""
    shown = main.shown
    links = shown.links
    visible = [pane for pane in main.panes if pane.display and pane.view.text is not None]
    source = next((pane for pane in visible if pane.stage == "source"), None)
    main.source_line, main.linked_chain = None, ()  # so that the linker moves every other pane too
    if source is not None:
        source.view.move_cursor_to_index(line - 1, center=True)
        main.link_from(source.view, line - 1)
        return
    for pane in visible:  # no pane shows the source: each IR pane on the line's first IR line
        hits = links.ir_lines(pane.stage, line) if pane.stage in shown.texts else []
        if hits:
            pane.view.move_cursor_to_index(hits[0], center=True)
    active = main.panes[main.active_pane].view
    if active.cursor_index is not None:
        main.link_from(active, active.cursor_index)
