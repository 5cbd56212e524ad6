"""The stepper's source pane and locals list, on LineList (rows cached, one-row redraws)."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message

from irscope.tui.widgets.line_list import LineList

GUTTER = 7  # "●▶ 1234 " before the code


class SourceView(LineList):
    """The user's file with line numbers, the executing line (▶, green) and breakpoints (●)."""

    BINDINGS = [Binding("enter", "toggle", "Breakpoint", show=False)]

    class GutterClicked(Message):
        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    def __init__(self, lines: list[str], breakpoints: set[int], **kwargs) -> None:
        super().__init__(**kwargs)
        self.lines = [line.expandtabs(4) for line in lines]
        self.breakpoints = breakpoints
        self.current: int | None = None  # 1-based executing line

    def on_mount(self) -> None:
        self.reset(len(self.lines), GUTTER + max((len(line) for line in self.lines), default=0) + 1)

    def row_text(self, index: int) -> Text:
        line = index + 1
        text = Text.assemble(
            ("●" if line in self.breakpoints else " ", "bold red"),
            ("▶" if line == self.current else " ", "bold green"),
            (f"{line:>4} ", "dim"),
            self.lines[index],
            no_wrap=True,
        )
        if line == self.current:
            text.stylize("on #2a4a2a")
        return text

    def set_current(self, line: int) -> None:
        """Mark the executing line; the cursor follows it unless the user moved the cursor elsewhere."""
        previous = self.current
        self.current = line
        follow = previous is None or self.cursor == previous - 1
        self.changed(*(n - 1 for n in {previous, line} if n is not None))
        if follow:
            self.move_to(line - 1, center=True)
        height = self.scrollable_content_region.height or 1
        if not self.scroll_offset.y <= line - 1 < self.scroll_offset.y + height:
            self.scroll_to(y=max(0, line - 1 - height // 2), animate=False)

    def breakpoint_changed(self, line: int) -> None:
        self.changed(line - 1)

    def action_toggle(self) -> None:
        self.post_message(self.GutterClicked(self.cursor + 1))

    def clicked(self, index: int, x: int) -> None:
        if x < GUTTER:
            self.post_message(self.GutterClicked(index + 1))


class LocalsView(LineList):
    """name, kind and a one-line summary of each local of the current function."""

    NAME = 14
    KIND = 10

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.names: list[str] = []
        self._rows: list[tuple[str, Text]] = []

    def set_names(self, names: list[str]) -> None:
        self.names = list(names)
        self._rows = [("", Text("")) for _ in names]
        self.cursor = min(self.cursor, max(0, len(names) - 1))
        self.reset(len(names), self.NAME + self.KIND + 120)

    def set_row(self, index: int, kind: str, summary: Text) -> None:
        self._rows[index] = (kind, summary)
        self.changed(index)

    def row_text(self, index: int) -> Text:
        kind, summary = self._rows[index]
        name = self.names[index]
        shown = name if len(name) < self.NAME else name[: self.NAME - 2] + "…"
        return Text.assemble(
            (shown.ljust(self.NAME), "bold"),
            (kind.ljust(self.KIND), "italic"),
            summary,
            no_wrap=True,
        )
