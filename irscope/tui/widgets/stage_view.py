"""A Line-API viewer for one stage's text: renders only the rows on screen, caches rendered rows
(how a row is drawn: stage_rows.py).

The view holds the stage's text and links, the cursor (a row) and which lines are linked to it, and
scrolls. Debug metadata rows can be hidden; the view then shows a subset of the stage's lines (`rows`)
but always speaks in stage line indices.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Callable

from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView

from irscope.ir.sourcemap import consecutive_runs
from irscope.tui.highlight import StageText
from irscope.tui.linking import StageLinks
from irscope.tui.widgets.stage_rows import MARK_COLUMN, RowPainter


class StageView(RowPainter, ScrollView, can_focus=True):
    """Shows one stage; the cursor is a row, reported as a stage line index."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(-1)", "Top", show=False),
        Binding("end", "edge(1)", "Bottom", show=False),
    ]

    DEFAULT_CSS = """
    StageView {
        background: $surface;
        scrollbar-size-vertical: 1;
        scrollbar-size-horizontal: 0;
        scrollbar-background: $surface;
        scrollbar-background-hover: $surface;
        scrollbar-background-active: $surface;
        scrollbar-color: $panel-lighten-2;
        scrollbar-color-hover: $panel-lighten-3;
        scrollbar-color-active: $primary;
    }
    """

    class CursorMoved(Message):
        """The user moved the cursor of `view` to stage line `index`."""

        def __init__(self, view: "StageView", index: int) -> None:
            super().__init__()
            self.view = view
            self.index = index

    def __init__(
        self,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        on_cursor_moved: Callable[[StageView, int], None] | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.stage = ""
        self.text: StageText | None = None
        self._clean_text: StageText | None = None
        self._full_text: StageText | None = None
        self.links: StageLinks | None = None
        self.colour_slot = lambda line: None
        self.rows: list[int] = []  # stage line indices shown, in order
        self.cursor_row = 0
        self.linked: frozenset[int] = frozenset()
        self.marks: dict[int, str] = {}  # stage line index -> "error"
        self.memory_marks: dict[
            int, set[str]
        ] = {}  # stage line index -> memory marks (core.analysis.marks)
        # stage line index -> severity of its severest finding
        self.finding_marks: dict[int, str] = {}
        # source lines a save changed (the source stage only)
        self.changed_lines: frozenset[int] = frozenset()
        self.colouring = True
        self.show_debug = False
        self.line_labels: tuple[str, ...] = ()  # set_line_labels
        self.on_cursor_moved = (
            on_cursor_moved  # callable(view, index): the app's linker (else a message)
        )
        self._init_rows()

    # ---- content

    def show(
        self,
        stage: str,
        text: StageText,
        links: StageLinks | None,
        colour_slot,
        *,
        cursor_index: int | None = None,
        full_text: StageText | None = None,
    ) -> None:
        """Show a stage; keep the cursor near where it was when the stage is the same. `full_text` is
        the same stage with its inline debug annotations, shown while debug metadata is on."""
        self.stage = stage
        self._clean_text = text
        self._full_text = full_text or text
        self.text = self._full_text if self.show_debug else text
        self.links = links
        self.colour_slot = colour_slot
        self.marks = {}
        self.finding_marks = {}
        self.changed_lines = frozenset()
        self.linked = frozenset()
        self._layout_rows(keep_index=cursor_index)

    def _layout_rows(self, keep_index: int | None = None) -> None:
        if self.text is None:
            self.rows = []
        elif self.show_debug or self.links is None:
            self.rows = list(range(len(self.text)))
        else:
            debug = self.links.debug
            self.rows = [i for i in range(len(self.text)) if not debug[i]]
        numbers = len(str(len(self.text) if self.text else 0))
        self._gutter_width = max([numbers, *map(len, self.line_labels)]) + 3
        if self.memory_marks:
            self._gutter_width += MARK_COLUMN
        width = self._gutter_width + (self.text.width if self.text else 0) + 1
        self.virtual_size = Size(width, len(self.rows))
        self.cursor_row = self.row_of(keep_index) if keep_index is not None else 0
        self._forget_rendered()
        self.scroll_to(
            y=max(0, self.cursor_row - max(1, self.scrollable_content_region.height) // 3),
            animate=False,
            immediate=True,
        )
        self.refresh()

    def set_options(self, *, colouring: bool | None = None, show_debug: bool | None = None) -> None:
        if colouring is not None and colouring != self.colouring:
            self.colouring = colouring
            self._forget_rendered()
            self.refresh()
        if show_debug is not None and show_debug != self.show_debug:
            index = self.cursor_index
            self.show_debug = show_debug
            if self.text is not None:
                self.text = self._full_text if show_debug else self._clean_text
            self._layout_rows(keep_index=index)
            self.scroll_to_row(self.cursor_row, center=True)

    def set_line_labels(self, labels: tuple[str, ...]) -> None:
        """What the gutter numbers the stage shown next's lines with, in place of 1, 2, 3 (a notebook's source:
        `cell:line`); empty for the plain numbers."""
        self.line_labels = labels

    def set_memory_marks(self, marks: dict[int, set[str]]) -> None:
        """The memory marks of the stage shown next (`show` lays out the gutter for them)."""
        self.memory_marks = marks

    def mark_error(self, index: int) -> None:
        """Line `index` is where the compiler or the file failed (shown when its row is drawn next)."""
        self.marks = {index: "error"}

    def set_finding_marks(self, marks: dict[int, str]) -> None:
        """Lines with findings: their severity's glyph takes the place of the link bar in the gutter."""
        if marks != self.finding_marks:
            self.finding_marks = marks
            self._forget_rendered()
            self.refresh()

    def set_changed_lines(self, lines: frozenset[int]) -> None:
        """Lines a save changed: a mark in the gutter where neither a finding nor the cursor has one."""
        if lines != self.changed_lines:
            self.changed_lines = lines
            self._forget_rendered()
            self.refresh()

    # ---- cursor and links

    @property
    def cursor_index(self) -> int | None:
        return self.rows[self.cursor_row] if self.rows else None

    def row_of(self, index: int) -> int:
        """The row showing stage line `index`, or the nearest shown row after it."""
        if not self.rows:
            return 0
        return min(bisect_left(self.rows, index), len(self.rows) - 1)

    def move_cursor_to_index(
        self, index: int, *, center: bool = False, notify: bool = False
    ) -> None:
        self.move_cursor_to_row(self.row_of(index), center=center, notify=notify)

    def move_cursor_to_row(self, row: int, *, center: bool = False, notify: bool = True) -> None:
        if not self.rows:
            return
        row = max(0, min(row, len(self.rows) - 1))
        old = self.cursor_row
        self.cursor_row = row
        self._refresh_row(old)
        self._refresh_row(row)
        self.scroll_to_row(row, center=center)
        if notify:
            if self.on_cursor_moved is not None:
                # at once: a message would take several hops
                self.on_cursor_moved(self, self.rows[row])
            else:
                self.post_message(self.CursorMoved(self, self.rows[row]))

    def set_linked(self, indices: frozenset[int]) -> None:
        """Highlight these stage lines (the lines of the source line under the cursor)."""
        if indices is self.linked or indices == self.linked:
            return
        old, self.linked = self.linked, indices
        top, bottom = self.visible_rows()
        changed = [
            row
            for row in range(top, bottom)
            if (self.rows[row] in old) != (self.rows[row] in indices)
        ]
        # Repaint only the shown rows whose state changed, one region per run of them: a whole-pane
        # refresh re-renders every row through Textual's per-line styling, which costs more than the
        # regions do to track (a relink changes a few runs of rows, not the pane).
        width = self.size.width
        for start, end in consecutive_runs(changed):
            self.refresh(Region(0, start - top, width, end - start))

    def reveal_index(self, index: int) -> None:
        """Scroll so that stage line `index` is on screen (a third from the top when it was not)."""
        self.scroll_to_row(self.row_of(index), center=True)

    def scroll_to_row(self, row: int, *, center: bool = False) -> None:
        height = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_offset.y)
        margin = min(2, height // 4) if center else 0  # "reveal": not at the very edge either
        if top + (margin if top else 0) <= row < top + height - margin:
            return
        if center:
            target = max(0, row - height // 3)
        elif row < top:
            target = row
        else:
            target = row - height + 1
        self.scroll_to(y=target, animate=False, immediate=True)

    # ---- actions

    def action_cursor(self, delta: int) -> None:
        self.move_cursor_to_row(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        self.move_cursor_to_row(self.cursor_row + direction * height)

    def action_edge(self, direction: int) -> None:
        self.move_cursor_to_row(0 if direction < 0 else len(self.rows) - 1)

    def on_resize(self) -> None:
        """A pane made shorter (the Findings view or a panel opened or grew under it) keeps its cursor
        in sight."""
        if self.rows:
            self.scroll_to_row(self.cursor_row, center=True)

    def on_focus(self) -> None:
        self._refresh_row(self.cursor_row)

    def on_blur(self) -> None:
        self._refresh_row(self.cursor_row)

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        self.focus()
        row = int(self.scroll_offset.y) + offset.y
        if 0 <= row < len(self.rows):
            self.move_cursor_to_row(row)

    # ---- rendering

    def _refresh_row(self, row: int) -> None:
        top = int(self.scroll_offset.y)
        if top <= row < top + self.size.height:
            self.refresh(Region(0, row - top, self.size.width, 1))

    # ---- search

    def find(
        self, needle: str, *, forward: bool = True, start_row: int | None = None
    ) -> int | None:
        """The next row (wrapping) whose line contains `needle`, ignoring case; None when none does."""
        if not needle or self.text is None or not self.rows:
            return None
        needle = needle.lower()
        count = len(self.rows)
        start = self.cursor_row if start_row is None else start_row
        step = 1 if forward else -1
        for n in range(1, count + 1):
            row = (start + step * n) % count
            if needle in self.text.lines[self.rows[row]].lower():
                return row
        return None

    def count_matches(self, needle: str) -> int:
        if not needle or self.text is None:
            return 0
        needle = needle.lower()
        return sum(needle in self.text.lines[i].lower() for i in self.rows)

    def block_rows(self, indices: list[int]) -> list[tuple[int, int]]:
        """Runs of consecutive shown rows among the rows of `indices`, as [start, end) row ranges."""
        return consecutive_runs(
            sorted({bisect_left(self.rows, i) for i in indices if self._shown(i)})
        )

    def _shown(self, index: int) -> bool:
        row = bisect_left(self.rows, index)
        return row < len(self.rows) and self.rows[row] == index

    def visible_rows(self) -> tuple[int, int]:
        top = int(self.scroll_offset.y)
        return top, min(len(self.rows), top + self.size.height)
