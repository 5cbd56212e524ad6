"""A focusable list with a cursor that draws through the Line API and caches each rendered row, so a
redraw after one row changed costs one row, not the whole list (Textual's OptionList and DataTable
re-render every row on any change)."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from irscope.tui.highlight import TAB_SIZE

_CURSOR = Style(bgcolor="#264f78")


class LineList(ScrollView, can_focus=True):
    """Rows of rich Text; subclasses say what row i looks like with `row_text` and when it changed by
    calling `changed(i)` (or `reset(count)` for a new list)."""

    DEFAULT_CSS = """
    LineList { overflow: scroll auto; scrollbar-size-vertical: 1; }
    """
    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
    ]

    class CursorMoved(Message):
        def __init__(self, widget: "LineList", index: int, by_user: bool) -> None:
            super().__init__()
            self.widget = widget
            self.index = index
            self.by_user = by_user

        @property
        def control(self) -> "LineList":
            return self.widget

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._count = 0
        self._width = 0
        self._strips: dict[tuple[int, bool], Strip] = {}
        self.cursor = 0

    # ---- what subclasses provide

    def row_text(self, index: int) -> Text:
        raise NotImplementedError

    # ---- content

    def reset(self, count: int, width: int) -> None:
        self._count = count
        self._width = width
        self._strips.clear()
        size = Size(width, count)
        if size != self.virtual_size:
            self.virtual_size = size
        self.refresh()

    def changed(self, *indices: int) -> None:
        for index in indices:
            self._strips.pop((index, True), None)
            self._strips.pop((index, False), None)
        self.refresh()

    def move_to(self, index: int, *, by_user: bool = False, center: bool = False) -> None:
        if not self._count:
            return
        index = max(0, min(index, self._count - 1))
        old = self.cursor
        self.cursor = index
        if old != index:
            self.changed(old, index)
            self.post_message(self.CursorMoved(self, index, by_user))
        height = self.scrollable_content_region.height or 1
        if center:
            self.scroll_to(y=max(0, index - height // 2), animate=False)
        elif index < self.scroll_offset.y:
            self.scroll_to(y=index, animate=False)
        elif index >= self.scroll_offset.y + height:
            self.scroll_to(y=index - height + 1, animate=False)

    # ---- drawing

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        index = scroll_y + y
        if index >= self._count:
            return Strip.blank(width)
        selected = index == self.cursor
        key = (index, selected)
        strip = self._strips.get(key)
        if strip is None:
            text = self.row_text(index)
            # a terminal would jump to its own tab stop over what is drawn there
            if "\t" in text.plain:
                text = text.copy()
                text.expand_tabs(TAB_SIZE)
            segments = list(text.render(self.app.console))
            strip = Strip(segments).extend_cell_length(self._width)
            if selected:
                strip = strip.apply_style(_CURSOR)
            if len(self._strips) > 4096:
                self._strips.clear()
            self._strips[key] = strip
        return strip.crop(scroll_x, scroll_x + width).extend_cell_length(width)

    # ---- keys and mouse

    def action_cursor(self, delta: int) -> None:
        self.move_to(self.cursor + delta, by_user=True)

    def action_page(self, direction: int) -> None:
        self.move_to(
            self.cursor + direction * max(1, self.scrollable_content_region.height - 1),
            by_user=True,
        )

    def action_jump(self, where: int) -> None:
        self.move_to(self._count - 1 if where < 0 else where, by_user=True)

    def on_click(self, event: Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < self._count:
            self.move_to(index, by_user=True)
            self.clicked(index, event.x + self.scroll_offset.x)

    def clicked(self, index: int, x: int) -> None:
        """A click on row `index` at content column `x` (after the cursor moved there)."""
