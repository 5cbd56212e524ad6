"""A Line-API viewer for one stage's text: renders only the rows on screen, caches rendered rows.

Each row is a gutter (line number, link bar) and the highlighted code. Backgrounds carry the links:
a faint tint in the colour of the source line a row came from, a stronger one for every row of the
source line under the cursor, and the cursor row itself. Debug metadata rows can be hidden; the
view then shows a subset of the stage's lines (`rows`) but always speaks in stage line indices.
"""

from __future__ import annotations

from bisect import bisect_left

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.cache import LRUCache
from textual.color import Color
from textual.events import Click
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core.sourcemap import consecutive_runs
from ..highlight import StageText, token_styles
from ..linking import LINK_PALETTE, StageLinks

PLAIN, LINKED, CURSOR = 0, 1, 2

# The memory-mark column of the gutter: [width: V vector / S scalar][m masked][memory: ! spill, L local,
# c convert_layout, s shared]. Glyphs and meanings come from core.analysis.marks.MARK_LEGEND.
MARK_COLUMN = 3
# On 256 colours a faint tint snaps to a saturated block (#5f0000, #00005f): rows take greys from the
# palette's grey ramp instead, and the gutter bar alone carries the source line's colour.
_GREY_ROWS = {("tint", True, True): "color(235)", ("linked", True, True): "color(239)",
              ("linked", False, True): "color(238)", ("tint", True, False): "color(254)",
              ("linked", True, False): "color(251)", ("linked", False, False): "color(252)"}
MARK_COLOURS = {"vector": "#009E73", "scalar": "#E69F00", "masked": "#999999", "shared": "#56B4E9",
                 "convert_layout": "#CC79A7", "local": "#D55E00", "spill": "#D55E00"}
# The gutter glyph of a line with a finding, the same in the Findings view's list: one per severity, in
# Okabe-Ito colours as the memory marks; an error is the compile error's cross.
FINDING_GLYPHS = {"error": "✗", "warning": "▲", "info": "●"}
FINDING_COLOURS = {"error": "#D55E00", "warning": "#E69F00", "info": "#56B4E9"}
_MARK_SLOTS = (("vector", "scalar"), ("masked",), ("spill", "local", "convert_layout", "shared"))


def mark_segments(marks, base: Style) -> list[Segment]:
    """Three one-character cells for a line's memory marks (blank where a slot has none)."""
    from ...core.analysis.marks import MARK_LEGEND

    cells = []
    for slot in _MARK_SLOTS:
        name = next((n for n in slot if n in marks), None)
        if name is None:
            cells.append(Segment(" ", base))
        else:
            glyph = MARK_LEGEND[name][0][0]
            cells.append(Segment(glyph, base + Style(color=MARK_COLOURS[name], bold=True)))
    return cells


class StageView(ScrollView, can_focus=True):
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

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.stage = ""
        self.text: StageText | None = None
        self._clean_text: StageText | None = None
        self._full_text: StageText | None = None
        self.links: StageLinks | None = None
        self.colour_slot = lambda line: None
        self.rows: list[int] = []              # stage line indices shown, in order
        self.cursor_row = 0
        self.linked: frozenset[int] = frozenset()
        self.marks: dict[int, str] = {}        # stage line index -> "error"
        self.memory_marks: dict[int, set[str]] = {}  # stage line index -> memory marks (core.analysis.marks)
        self.finding_marks: dict[int, str] = {}  # stage line index -> severity of its severest finding
        self.colouring = True
        self.show_debug = False
        self.on_cursor_moved = None            # callable(view, index): the app's linker
        self._gutter_width = 0
        self._strips: LRUCache[tuple[int, int], tuple[Strip, Strip, int]] = LRUCache(4096)  # gutter, code, cells
        self._lines: LRUCache[tuple[int, int, int, int], Strip] = LRUCache(1024)  # as shown: cropped
        self._palette: dict[str, Style] = {}

    # ---- content

    def show(self, stage: str, text: StageText, links: StageLinks | None, colour_slot, *,
             cursor_index: int | None = None, full_text: StageText | None = None) -> None:
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
        self._gutter_width = len(str(len(self.text) if self.text else 0)) + 3
        if self.memory_marks:
            self._gutter_width += MARK_COLUMN
        width = self._gutter_width + (self.text.width if self.text else 0) + 1
        self.virtual_size = Size(width, len(self.rows))
        self.cursor_row = self.row_of(keep_index) if keep_index is not None else 0
        self._forget_rendered()
        self.scroll_to(y=max(0, self.cursor_row - max(1, self.scrollable_content_region.height) // 3),
                       animate=False, immediate=True)
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

    def set_finding_marks(self, marks: dict[int, str]) -> None:
        """Lines with findings: their severity's glyph takes the place of the link bar in the gutter."""
        if marks != self.finding_marks:
            self.finding_marks = marks
            self._forget_rendered()
            self.refresh()

    def restyle(self) -> None:
        """Forget rendered rows (the theme changed)."""
        self._palette.clear()
        self._forget_rendered()
        self.refresh()

    def _forget_rendered(self) -> None:
        self._strips.clear()
        self._lines.clear()

    # ---- cursor and links

    @property
    def cursor_index(self) -> int | None:
        return self.rows[self.cursor_row] if self.rows else None

    def row_of(self, index: int) -> int:
        """The row showing stage line `index`, or the nearest shown row after it."""
        if not self.rows:
            return 0
        return min(bisect_left(self.rows, index), len(self.rows) - 1)

    def move_cursor_to_index(self, index: int, *, center: bool = False, notify: bool = False) -> None:
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
                self.on_cursor_moved(self, self.rows[row])  # at once: a message would take several hops
            else:
                self.post_message(self.CursorMoved(self, self.rows[row]))

    def set_linked(self, indices: frozenset[int]) -> None:
        """Highlight these stage lines (the lines of the source line under the cursor)."""
        if indices is self.linked or indices == self.linked:
            return
        old, self.linked = self.linked, indices
        top, bottom = self.visible_rows()
        changed = [row for row in range(top, bottom) if (self.rows[row] in old) != (self.rows[row] in indices)]
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

    def _style(self, key: str) -> Style:
        style = self._palette.get(key)
        if style is None:
            style = self._make_style(key)
            self._palette[key] = style
        return style

    def _make_style(self, key: str) -> Style:
        base = self.styles.background if self.styles.background.a > 0 else Color.parse("#1e1e1e")
        theme = self.app.current_theme
        dark = theme.dark
        kind, _, arg = key.partition(":")
        style = self._make_background(kind, arg, base, theme, dark)
        if kind in ("base", "tint", "linked", "cursor", "error"):  # text without a token colour needs one
            foreground = theme.foreground or ("#e0e0e0" if dark else "#1e1e1e")
            style = Style(color=Color.parse(foreground).rich_color) + style
        return style

    def _make_background(self, kind: str, arg: str, base: Color, theme, dark: bool) -> Style:
        if kind == "base":
            return Style(bgcolor=base.rich_color)
        if kind == "gutter":
            return Style(color=base.blend(Color.parse("#ffffff" if dark else "#000000"), 0.40).rich_color)
        if kind == "bar":
            return Style(color=Color.parse(LINK_PALETTE[int(arg)]).rich_color)
        if kind in ("tint", "linked") and self._eight_bit():
            return Style(bgcolor=_GREY_ROWS[kind, bool(arg), dark])
        if kind == "tint":  # a row that came from a source line, faint
            return Style(bgcolor=base.blend(Color.parse(LINK_PALETTE[int(arg)]), 0.13 if dark else 0.18).rich_color)
        if kind == "linked":  # every row of the source line under the cursor
            colour = Color.parse(LINK_PALETTE[int(arg)]) if arg else Color.parse("#ffffff" if dark else "#000000")
            return Style(bgcolor=base.blend(colour, (0.38 if arg else 0.20) if dark else 0.42).rich_color)
        if kind == "cursor":
            accent = Color.parse(theme.primary)
            return Style(bgcolor=base.blend(accent, 0.62 if dark else 0.45).rich_color, bold=True)
        if kind == "error":
            return Style(bgcolor=base.blend(Color.parse("#D55E00"), 0.45).rich_color)
        raise KeyError(kind)

    def _eight_bit(self) -> bool:
        """A terminal of 256 colours or fewer (tmux's default): no faint tinted colour exists there."""
        return getattr(self.app.console, "color_system", "truecolor") in ("256", "standard", "windows")

    def render_lines(self, crop: Region) -> list[Strip]:
        """The rows in `crop`, straight from the row cache. Textual's own path (its styles cache) re-wraps
        every row it repaints in a new Strip, so the terminal's colour filter runs again on each, and
        checks borders, padding, tint and opacity per row: most of a cursor move's time when a pane
        scrolls. This view has none of those, and its rows are exactly as wide as it is, so what that
        path makes of them is the rows themselves; the filter's answer is cached on each row's Strip."""
        width, height = self.size
        if not (self._plain_box() and crop.right <= width and crop.bottom <= height):
            return super().render_lines(crop)
        filters = self.get_line_filters()
        background = self.background_colors[1]
        offset = self.scroll_offset
        top, left, focused = int(offset.y), int(offset.x), self.has_focus
        line = self._line
        strips = []
        for y in crop.line_range:
            strip = line(top + y, left, width, focused)
            for line_filter in filters:
                strip = strip.apply_filter(line_filter, background)
            strips.append(strip)
        if crop.column_span != (0, width):
            strips = [strip.crop(crop.x, crop.right) for strip in strips]
        return strips

    def _plain_box(self) -> bool:
        """No border, outline, padding, hatch, tint or opacity: Textual's styling would leave rows as they are."""
        styles = self.styles
        return (not any(edge for edge, _ in styles.border) and not any(edge for edge, _ in styles.outline)
                and styles.padding == (0, 0, 0, 0) and not styles.tint.a and self.opacity == 1.0
                and styles.text_opacity == 1.0 and (not styles.has_rule("hatch") or styles.hatch == "none")
                and self.region.size == self.size)

    def render_line(self, y: int) -> Strip:
        offset = self.scroll_offset
        return self._line(int(offset.y) + y, int(offset.x), self.size.width, self.has_focus)

    def _line(self, row: int, left: int, width: int, focused: bool) -> Strip:
        """Row `row` as shown from column `left`, `width` cells wide."""
        if self.text is None or row >= len(self.rows):
            return Strip.blank(width, self._style("base"))
        index = self.rows[row]
        state = CURSOR if row == self.cursor_row and focused else (
            LINKED if index in self.linked or row == self.cursor_row else PLAIN)
        key = (index, state, left, width)
        line = self._lines.get(key)
        if line is None:
            code_width = max(0, width - self._gutter_width)
            gutter, code = self._row_strips(index, state, left + code_width)
            code = code.crop_extend(left, left + code_width, self._row_background(index, state))
            line = Strip.join([gutter, code]).crop(0, width)
            self._lines[key] = line
        return line

    def _row_background(self, index: int, state: int) -> Style:
        slot = self._slot(index)
        if index in self.marks:
            return self._style("error")
        if state == CURSOR:
            return self._style("cursor")
        if state == LINKED:
            return self._style(f"linked:{slot if self.colouring and slot is not None else ''}")
        if self.colouring and slot is not None:
            return self._style(f"tint:{slot}")
        return self._style("base")

    def _slot(self, index: int) -> int | None:
        if self.links is None:
            return None
        return self.colour_slot(self.links.source_of[index])

    def _row_strips(self, index: int, state: int, upto: int) -> tuple[Strip, Strip]:
        """The gutter and the highlighted code of a row; the code at least `upto` cells long (lines of
        thousands of characters, like LLVM's inline-asm calls, are only styled as far as is shown)."""
        key = (index, state)
        cached = self._strips.get(key)
        if cached is not None and (cached[2] >= upto or cached[2] < 0):
            return cached[0], cached[1]
        background = self._row_background(index, state)
        slot = self._slot(index)
        number = f"{index + 1:>{self._gutter_width - 3 - (MARK_COLUMN if self.memory_marks else 0)}} "
        if index in self.marks:
            bar = Segment("✗ ", self._style("base") + Style(color="#D55E00", bold=True))
        elif state == CURSOR:
            bar = Segment("▶ ", self._style("base") + Style(bold=True))
        elif index in self.finding_marks:
            severity = self.finding_marks[index]
            bar = Segment(FINDING_GLYPHS.get(severity, "?") + " ",
                          self._style("base") + Style(color=FINDING_COLOURS.get(severity), bold=True))
        elif slot is not None and self.colouring:
            bar = Segment("▌ ", self._style("base") + self._style(f"bar:{slot}"))
        elif state == LINKED:
            bar = Segment("▌ ", self._style("base") + self._style("gutter"))
        else:
            bar = Segment("  ", self._style("base"))
        gutter = [Segment(number, self._style("base") + self._style("gutter"))]
        if self.memory_marks:
            gutter.extend(mark_segments(self.memory_marks.get(index, ()), self._style("base")))
        gutter = Strip([*gutter, bar])
        styles = token_styles(self.app.current_theme.dark)
        limit = max(upto, 160) * 2  # room to scroll sideways before styling again
        segments, length = [], 0
        for token, value in self.text.tokens(index, limit):
            segments.append(Segment(value, background + styles(token)))
            length += len(value)
            if length >= limit:
                break
        code = Strip(segments)
        whole = length < limit and len(self.text.lines[index]) <= limit
        self._strips[key] = (gutter, code, -1 if whole else limit)
        return gutter, code

    # ---- search

    def find(self, needle: str, *, forward: bool = True, start_row: int | None = None) -> int | None:
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
        return consecutive_runs(sorted({bisect_left(self.rows, i) for i in indices if self._shown(i)}))

    def _shown(self, index: int) -> bool:
        row = bisect_left(self.rows, index)
        return row < len(self.rows) and self.rows[row] == index

    def visible_rows(self) -> tuple[int, int]:
        top = int(self.scroll_offset.y)
        return top, min(len(self.rows), top + self.size.height)

