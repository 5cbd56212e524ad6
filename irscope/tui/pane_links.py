"""What a cursor move in one pane does to the others: the source line under the cursor (through the
`LinkIndex`) lights up, with all of its IR, in every other pane, which scrolls to it; and `]` / `[`,
which move between the blocks of lines one source line made."""

from __future__ import annotations

from typing import TYPE_CHECKING

from irscope.tui.context import CursorContext

if TYPE_CHECKING:
    from irscope.tui.main_screen import MainScreen
    from irscope.tui.widgets.stage_view import StageView


def link_from(main: MainScreen, view: StageView, index: int) -> None:
    """Highlight, in every pane, the lines that share the source line of `view`'s line `index`."""
    shown = main.shown
    if shown is None or not shown.comp.ok or view.stage not in shown.texts:
        return
    links = shown.links
    src = links.source_line(view.stage, index)
    chain = links.chain(view.stage, index)
    same = src == main.source_line and chain == main.linked_chain
    main.source_line, main.linked_chain = src, chain
    for pane in main.panes:
        other = pane.view
        if not pane.display or other.text is None or pane.stage not in shown.texts:
            continue
        if same and other is not view:
            continue  # moving inside the lines of one source line: the other panes stay as they are
        if pane.stage == "source":
            lines = frozenset(n - 1 for n in chain) if src is not None else frozenset()
            other.set_linked(lines)
            if other is not view and src is not None and other.cursor_index != src - 1:
                other.move_cursor_to_index(src - 1, center=True)
        else:
            hits = links.ir_line_set(pane.stage, src)
            other.set_linked(hits)
            if other is not view and hits and other.cursor_index not in hits:
                other.move_cursor_to_index(links.ir_lines(pane.stage, src)[0], center=True)
        main.update_pane_title(pane)
    main.refresh_panels()
    main.links_done += 1


def cursor_context(main: MainScreen) -> CursorContext | None:
    """The line under the active pane's cursor, as the info panels see it."""
    shown = main.shown
    if shown is None:
        return None
    view = main.panes[main.active_pane].view
    index = view.cursor_index
    if index is None or view.stage not in shown.texts:
        return None
    src = (
        shown.links.source_line(view.stage, index)
        if shown.comp.ok or view.stage == "source"
        else None
    )
    return CursorContext(shown.comp, view.stage, index, src)


def jump_block(main: MainScreen, view: StageView, direction: int) -> None:
    """`]` / `[`: the next / previous block of lines of the cursor's source line (in the source pane:
    the next / previous source line that produced IR)."""
    shown = main.shown
    index = view.cursor_index
    if shown is None or not shown.comp.ok or index is None:
        return
    links = shown.links
    if view.stage == "source":
        line = index + 1
        candidates = sorted(n for n in links.stage("source").source_of if links.produced_ir(n))
        after = [n for n in candidates if (n > line if direction > 0 else n < line)]
        if not after:
            main.notify("no more source lines that produced IR", timeout=2)
            return
        view.move_cursor_to_index((after[0] if direction > 0 else after[-1]) - 1)
        return
    src = links.source_line(view.stage, index)
    if src is None:
        main.notify("this line has no source line", timeout=2)
        return
    blocks = view.block_rows(links.ir_lines(view.stage, src))
    row = view.cursor_row
    if direction > 0:
        nxt = [b for b in blocks if b[0] > row]
        target = nxt[0][0] if nxt else blocks[0][0]
    else:
        current = [b for b in blocks if b[0] <= row < b[1]]
        start = current[0][0] if current else row
        prev = [b for b in blocks if b[0] < start]
        target = prev[-1][0] if prev else blocks[-1][0]
    view.move_cursor_to_row(target, center=True)
