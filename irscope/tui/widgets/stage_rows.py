"""How a StageView draws its rows: each a gutter (line number, memory marks, link bar or finding glyph)
and the highlighted code, on a background that carries the links (a faint tint in the colour of the
source line a row came from, a stronger one for the rows of the source line under the cursor, and the
cursor row). Rendered rows are kept in two bounded caches (as styled, and as cropped to the view) that
any change of content, options or theme empties.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.color import Color
from textual.geometry import Region
from textual.strip import Strip

from irscope.analysis.marks import MARK_LEGEND
from irscope.tui.highlight import token_styles
from irscope.tui.linking import LINK_PALETTE

PLAIN, LINKED, CURSOR = 0, 1, 2

# The memory-mark column of the gutter: [width: V vector / S scalar][m masked][memory: ! spill, L local,
# c convert_layout, s shared]. Glyphs and meanings come from core.analysis.marks.MARK_LEGEND.
MARK_COLUMN = 3
# On 256 colours a faint tint snaps to a saturated block (#5f0000, #00005f): rows take greys from the
# palette's grey ramp instead, and the gutter bar alone carries the source line's colour.
_GREY_ROWS = {
    ("tint", True, True): "color(235)",
    ("linked", True, True): "color(239)",
    ("linked", False, True): "color(238)",
    ("tint", True, False): "color(254)",
    ("linked", True, False): "color(251)",
    ("linked", False, False): "color(252)",
}
MARK_COLOURS = {
    "vector": "#009E73",
    "scalar": "#E69F00",
    "masked": "#999999",
    "shared": "#56B4E9",
    "convert_layout": "#CC79A7",
    "local": "#D55E00",
    "spill": "#D55E00",
}
# The gutter glyph of a line with a finding, the same in the Findings view's list: one per severity, in
# Okabe-Ito colours as the memory marks; an error is the compile error's cross.
FINDING_GLYPHS = {"error": "✗", "warning": "▲", "info": "●"}
FINDING_COLOURS = {"error": "#D55E00", "warning": "#E69F00", "info": "#56B4E9"}
# The gutter glyph of a source line a save changed (after a reload), where no finding is marked.
CHANGED_GLYPH, CHANGED_COLOUR = "◆", "#009E73"
_MARK_SLOTS = (("vector", "scalar"), ("masked",), ("spill", "local", "convert_layout", "shared"))


def mark_segments(marks, base: Style) -> list[Segment]:
    """Three one-character cells for a line's memory marks (blank where a slot has none)."""

    cells = []
    for slot in _MARK_SLOTS:
        name = next((n for n in slot if n in marks), None)
        if name is None:
            cells.append(Segment(" ", base))
        else:
            glyph = MARK_LEGEND[name][0][0]
            cells.append(Segment(glyph, base + Style(color=MARK_COLOURS[name], bold=True)))
    return cells


class RowPainter:
    """Mixed into StageView: its rows as Strips, straight to the compositor (the Line API)."""

    def _init_rows(self) -> None:
        self._gutter_width = 0
        # gutter, code, cells
        self._strips: LRUCache[tuple[int, int], tuple[Strip, Strip, int]] = LRUCache(4096)
        # as shown: cropped
        self._lines: LRUCache[tuple[int, int, int, int], Strip] = LRUCache(1024)
        self._palette: dict[str, Style] = {}

    def restyle(self) -> None:
        """Forget rendered rows (the theme changed)."""
        self._palette.clear()
        self._forget_rendered()
        self.refresh()

    def _forget_rendered(self) -> None:
        self._strips.clear()
        self._lines.clear()

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
        # text without a token colour needs one
        if kind in (
            "base",
            "tint",
            "linked",
            "cursor",
            "error",
        ):
            foreground = theme.foreground or ("#e0e0e0" if dark else "#1e1e1e")
            style = Style(color=Color.parse(foreground).rich_color) + style
        return style

    def _make_background(self, kind: str, arg: str, base: Color, theme, dark: bool) -> Style:
        if kind == "base":
            return Style(bgcolor=base.rich_color)
        if kind == "gutter":
            return Style(
                color=base.blend(Color.parse("#ffffff" if dark else "#000000"), 0.40).rich_color
            )
        if kind == "bar":
            return Style(color=Color.parse(LINK_PALETTE[int(arg)]).rich_color)
        if kind in ("tint", "linked") and self._eight_bit():
            return Style(bgcolor=_GREY_ROWS[kind, bool(arg), dark])
        if kind == "tint":  # a row that came from a source line, faint
            return Style(
                bgcolor=base.blend(
                    Color.parse(LINK_PALETTE[int(arg)]), 0.13 if dark else 0.18
                ).rich_color
            )
        if kind == "linked":  # every row of the source line under the cursor
            colour = (
                Color.parse(LINK_PALETTE[int(arg)])
                if arg
                else Color.parse("#ffffff" if dark else "#000000")
            )
            return Style(
                bgcolor=base.blend(colour, (0.38 if arg else 0.20) if dark else 0.42).rich_color
            )
        if kind == "cursor":
            accent = Color.parse(theme.primary)
            return Style(bgcolor=base.blend(accent, 0.62 if dark else 0.45).rich_color, bold=True)
        if kind == "error":
            return Style(bgcolor=base.blend(Color.parse("#D55E00"), 0.45).rich_color)
        raise KeyError(kind)

    def _eight_bit(self) -> bool:
        """A terminal of 256 colours or fewer (tmux's default): no faint tinted colour exists there."""
        return getattr(self.app.console, "color_system", "truecolor") in (
            "256",
            "standard",
            "windows",
        )

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
        return (
            not any(edge for edge, _ in styles.border)
            and not any(edge for edge, _ in styles.outline)
            and styles.padding == (0, 0, 0, 0)
            and not styles.tint.a
            and self.opacity == 1.0
            and styles.text_opacity == 1.0
            and (not styles.has_rule("hatch") or styles.hatch == "none")
            and self.region.size == self.size
        )

    def render_line(self, y: int) -> Strip:
        offset = self.scroll_offset
        return self._line(int(offset.y) + y, int(offset.x), self.size.width, self.has_focus)

    def _line(self, row: int, left: int, width: int, focused: bool) -> Strip:
        """Row `row` as shown from column `left`, `width` cells wide."""
        if self.text is None or row >= len(self.rows):
            return Strip.blank(width, self._style("base"))
        index = self.rows[row]
        state = (
            CURSOR
            if row == self.cursor_row and focused
            else (LINKED if index in self.linked or row == self.cursor_row else PLAIN)
        )
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
        label = self.line_labels[index] if index < len(self.line_labels) else str(index + 1)
        number = f"{label:>{self._gutter_width - 3 - (MARK_COLUMN if self.memory_marks else 0)}} "
        if index in self.marks:
            bar = Segment("✗ ", self._style("base") + Style(color="#D55E00", bold=True))
        elif state == CURSOR:
            bar = Segment("▶ ", self._style("base") + Style(bold=True))
        elif index in self.finding_marks:
            severity = self.finding_marks[index]
            bar = Segment(
                FINDING_GLYPHS.get(severity, "?") + " ",
                self._style("base") + Style(color=FINDING_COLOURS.get(severity), bold=True),
            )
        elif index in self.changed_lines:
            bar = Segment(
                CHANGED_GLYPH + " ", self._style("base") + Style(color=CHANGED_COLOUR, bold=True)
            )
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
