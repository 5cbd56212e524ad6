"""The main screen's panes: a title line over a StageView each, how many of them a terminal size shows
in each layout, and what a pane's title says (its stage, its line, the source line linked to it).
The panes live in a `LinkedPanes` (main/linked_panes.py), which links them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Size
from textual.widget import Widget

from irscope.tui.widgets.stage_view import StageView

if TYPE_CHECKING:
    from irscope.tui.highlight import StageText
    from irscope.tui.linking import StageLinks
    from irscope.tui.main.linked_panes import LinkedPanes

MAX_PANES = 5
NVIDIA_PANES = ("source", "ttgir", "ptx", "sass", "llir")
AMD_PANES = ("source", "ttgir", "amdgcn", "llir", "ttir")
LAYOUTS = ("auto", "columns", "rows", "tabs")
STAGE_TITLES = {
    "source": "Source",
    "ttir": "TTIR",
    "ttgir": "TTGIR",
    "llir": "LLVM IR",
    "ptx": "PTX",
    "sass": "SASS",
    "amdgcn": "AMDGCN",
    "error": "Error",
}


class PaneTitle(Widget):
    """One line of text; changing it repaints the line only (a Static would ask for a new layout)."""

    DEFAULT_CSS = "PaneTitle { height: 1; }"

    def __init__(self, classes: str) -> None:
        super().__init__(classes=classes)
        self._text = Text()

    def set_text(self, text: Text) -> None:
        if text != self._text:
            self._text = text
            self.refresh()

    def render(self) -> Text:
        return self._text


class StagePane(Vertical):
    """A title line and a StageView."""

    def __init__(
        self, number: int, on_cursor_moved: Callable[[StageView, int], None] | None = None
    ) -> None:
        super().__init__(id=f"pane-{number}", classes="pane")
        self.number = number
        self.stage = ""
        self._on_cursor_moved = (
            on_cursor_moved  # the linker, told of each cursor move the user makes
        )

    def compose(self) -> ComposeResult:
        yield PaneTitle(classes="pane-title")
        yield StageView(id=f"view-{self.number}", on_cursor_moved=self._on_cursor_moved)

    @property
    def view(self) -> StageView:
        return self.query_one(StageView)

    def show(
        self, stage: str, text: StageText, links: StageLinks | None, colour_slot, **options
    ) -> None:
        """This pane on `stage` (options: StageView.show's)."""
        self.stage = stage
        self.view.show(stage, text, links, colour_slot, **options)

    def set_title(self, text: Text) -> None:
        self.query_one(PaneTitle).set_text(text)


def visible_count(mode: str, size: Size) -> int:
    """How many panes a layout shows at a terminal size."""
    width, height = size
    if mode == "rows":
        return 2 if height < 40 else 3
    if mode == "tabs":
        return 3 if width < 200 else 4
    if width < 120:
        return 2
    if width < 200:
        return 3
    return 4 if width < 260 else 5


def effective_layout(mode: str, size: Size) -> str:
    """The layout `auto` stands for at a terminal size (rows when narrow); any other mode is itself."""
    if mode != "auto":
        return mode
    return "rows" if size.width < 100 else "columns"


def pane_title(linked: LinkedPanes, pane: StagePane) -> Text:
    """The stage, and with a cursor: its line, the source line it came from (or the IR lines a source
    line made); in a maximised pane or the tabs layout, the panes Tab reaches."""
    title = Text()
    active = pane.number == linked.active_pane
    title.append(
        f" {STAGE_TITLES.get(pane.stage, pane.stage)} ", style="bold reverse" if active else "bold"
    )
    mode = linked.effective_layout()
    if linked.pane_maximized or mode == "tabs":
        count = linked.visible_count(mode)
        others = [
            STAGE_TITLES.get(p.stage, p.stage)
            for p in linked.panes[:count]
            if p.number != pane.number
        ]
        title.append(f"  ({pane.number + 1}/{count}; Tab: {', '.join(others)})", style="dim")
    shown = linked.shown
    if shown is None or pane.stage not in shown.texts:
        return title
    title.append(f" {len(shown.texts[pane.stage])} lines", style="dim")
    index = pane.view.cursor_index
    if index is None or not shown.comp.ok:
        return title
    src = shown.links.source_line(pane.stage, index)
    labels = shown.comp.kernel.line_labels  # a notebook: its lines as cell:line

    def source_name(line: int) -> str:
        return (labels[line - 1] if 0 < line <= len(labels) else "") or str(line)

    title.append(
        f"  line {source_name(index + 1) if pane.stage == 'source' else index + 1}", style=""
    )
    if pane.stage == "source":
        count = sum(
            len(shown.links.ir_lines(s, src)) for s in shown.stages if s not in ("source", "sass")
        )
        if count:
            title.append(f" → {count} IR lines", style="dim")
        return title
    if src is not None:
        title.append(f" ← source {source_name(src)}", style="bold")
    wanted = linked.source_line
    if wanted is not None and wanted != src and not shown.links.ir_lines(pane.stage, wanted):
        title.append(f"  (source {source_name(wanted)}: no lines here)", style="dim")
    return title
