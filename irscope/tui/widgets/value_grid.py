"""A scrollable grid of a tensor's numbers that formats only the rows on screen (Line API), so showing
a new 64×64 tile costs the same as showing a scalar."""

from __future__ import annotations

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

ROW_1D = 8  # 1-D values: elements per row, until the pane's width is known

_LABEL = Style(dim=True)
_HEADER = Style(bold=True)
_FLAG = Style(bold=True, color="yellow")


class ValueGrid(ScrollView):
    """Rows and columns of a 1-D (wrapped every ROW_1D elements) or 2-D array; row 0 is a fixed header."""

    # Scrollbars always shown: the content region never changes size, so a new value repaints this
    # widget alone instead of relaying out the whole screen.
    DEFAULT_CSS = """
    ValueGrid { height: 1fr; overflow: scroll scroll; scrollbar-size: 1 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._rows: np.ndarray | None = None
        self._starts: list[int] = []
        self._label_width = 0
        self._cell_width = 0
        self._header = ""
        self._float = False

    def show(self, data: np.ndarray | None) -> None:
        """Show an array (None or a scalar: nothing)."""
        if data is None or data.ndim == 0 or data.size == 0:
            self._rows = None
            self._set_virtual_size(Size(0, 0))
            self.refresh()
            return
        self._float = data.dtype.kind == "f"
        if data.ndim == 1:
            width = min(self._lanes_per_row(data), data.size)
            pad = (-data.size) % width
            flat = np.concatenate([data, np.zeros(pad, dtype=data.dtype)]) if pad else data
            self._rows = flat.reshape(-1, width)
            self._starts = list(range(0, data.size, width))
            self._count = data.size
            headers = [f"+{c}" for c in range(width)]
        else:
            self._rows = data.reshape(data.shape[0], -1)
            self._starts = list(range(self._rows.shape[0]))
            self._count = None
            headers = [str(c) for c in range(self._rows.shape[1])]
        sample = (
            np.concatenate([self._rows.reshape(-1)[:64], [self._rows.min(), self._rows.max()]])
            if not self._float
            else None
        )
        widest = (
            max((len(self._format(x)) for x in sample), default=1) if sample is not None else 10
        )
        self._cell_width = max(widest, max(len(h) for h in headers)) + 2
        self._label_width = len(str(self._starts[-1])) + 2
        self._header = " " * self._label_width + "".join(h.rjust(self._cell_width) for h in headers)
        width = self._label_width + self._cell_width * self._rows.shape[1]
        self._set_virtual_size(Size(width, self._rows.shape[0] + 1))
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def _lanes_per_row(self, data: np.ndarray) -> int:
        """As many elements per row as fit the pane (a power of two, so rows start at round indices)."""
        room = self.scrollable_content_region.width
        if room <= 0:
            return ROW_1D
        cell = 12 if self._float else max(len(str(int(data.min()))), len(str(int(data.max())))) + 2
        label = len(str(data.size)) + 2
        fit = max(1, (room - label) // cell)
        return 1 << (fit.bit_length() - 1)

    def _set_virtual_size(self, size: Size) -> None:
        """virtual_size without the relayout its reactive asks for (see DEFAULT_CSS)."""
        if size == self.virtual_size:
            return
        self.set_reactive(ScrollView.virtual_size, size)
        self.vertical_scrollbar.window_virtual_size = size.height
        self.horizontal_scrollbar.window_virtual_size = size.width

    def _format(self, x) -> str:
        if self._float:
            return f"{float(x):.4g}"
        if isinstance(x, (bool, np.bool_)):
            return "1" if x else "0"
        return str(int(x))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        if self._rows is None:
            return Strip.blank(width)
        if y == 0:
            return (
                Strip([Segment(self._header, _HEADER)])
                .crop(scroll_x, scroll_x + width)
                .extend_cell_length(width)
            )
        index = y - 1 + scroll_y
        if index >= self._rows.shape[0]:
            return Strip.blank(width)
        row = self._rows[index]
        if self._count is not None:  # the last 1-D row may be padded
            row = row[: max(0, min(len(row), self._count - self._starts[index]))]
        segments = [Segment(str(self._starts[index]).ljust(self._label_width), _LABEL)]
        for x in row:
            text = self._format(x).rjust(self._cell_width)
            flagged = self._float and not np.isfinite(x)
            segments.append(Segment(text, _FLAG if flagged else None))
        return Strip(segments).crop(scroll_x, scroll_x + width).extend_cell_length(width)
