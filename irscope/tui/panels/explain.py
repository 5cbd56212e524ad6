"""The "Explain" panel: the line under the cursor in plain words, and the lowering story of its source line."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.widgets import Static

from ...core.explain import Explanation, explain_line, lowering_story
from ..context import CursorContext
from .base import InfoPanel


def render_explanation(e: Explanation, line: str) -> Text:
    text = Text()
    text.append(e.title or "—", style="bold")
    text.append(f"   {' '.join(line.split())[:100]}\n", style="dim italic")
    if e.text:
        text.append(e.text + "\n")
    for detail in e.details:
        text.append("  • ", style="dim")
        text.append(detail + "\n", style="dim" if detail.startswith(".") else "")
    if e.unknown:
        text.append(f"  (no notes yet for: {', '.join(e.unknown)})\n", style="yellow")
    return text


class ExplainPanel(InfoPanel):
    """Explains the cursor's line; the story is cached per compilation and source line, and both are
    computed in a thread worker (the first SASS line runs nvdisasm once for the control fields)."""

    panel_title = "Explain"

    DEFAULT_CSS = """
    ExplainPanel #explain-line { margin-bottom: 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._stories: dict[int, str] = {}   # source line -> story, for the compilation below
        self._stories_of = None               # held, not an id(): a freed compilation's id is reused
        self.last_explanation: Explanation | None = None
        self.last_story: str | None = None
        self._asked = 0  # the newest request: a slower, older thread's answer must not overwrite it

    def compose(self) -> ComposeResult:
        yield Static("Move the cursor to a line to see it explained.", id="explain-line")
        yield Static("", id="explain-story")

    def show_context(self, ctx: CursorContext) -> None:
        self._asked += 1
        self._explain(ctx, self._asked)

    @work(thread=True, exclusive=True, group="explain")
    def _explain(self, ctx: CursorContext, asked: int) -> None:
        try:
            self._explain_in_thread(ctx, asked)
        except Exception as exc:  # an exception in a worker would end the app
            self.app.call_from_thread(self.show_failure, exc)

    def _explain_in_thread(self, ctx: CursorContext, asked: int) -> None:
        comp = ctx.comp
        try:
            lines = comp.stage(ctx.stage).splitlines()
        except Exception as exc:   # a failed compile has only its source
            self.app.call_from_thread(self._update, asked, None, "", f"Nothing to explain: {exc}")
            return
        line = lines[ctx.index] if 0 <= ctx.index < len(lines) else ""
        explanation = explain_line(ctx.stage, line, comp)
        story = ""
        if ctx.source_line is not None and comp.ok:
            if self._stories_of is not comp:
                self._stories_of, self._stories = comp, {}
            if ctx.source_line not in self._stories:
                self._stories[ctx.source_line] = lowering_story(comp, ctx.source_line)
            story = self._stories[ctx.source_line]
        self.app.call_from_thread(self._update, asked, explanation, line, story)

    def _update(self, asked: int, explanation: Explanation | None, line: str, story: str) -> None:
        if asked != self._asked:
            return  # the cursor moved on; a newer answer is coming
        self.last_explanation, self.last_story = explanation, story
        if explanation is not None:
            self.query_one("#explain-line", Static).update(render_explanation(explanation, line))
        body = Group(Text("How this source line is lowered", style="bold underline"), Text(story)) if story else \
            Text("No source line for this line (code the compiler added, or metadata).", style="dim")
        self.query_one("#explain-story", Static).update(body)
