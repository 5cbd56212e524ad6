"""The "Explain" panel: the line under the cursor in plain words, and the lowering story of its source line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from irscope.tui.asker import Asker, bounded
from irscope.tui.context import CursorContext
from irscope.tui.messages import Explained, Failed, Request
from irscope.tui.panels.base import InfoPanel

# the explainer's tables are imported by the first explanation: the app paints sooner
if TYPE_CHECKING:
    from irscope.ir.explain import Explanation

STORIES = 256  # lowering stories kept (a few compilations' worth of source lines)


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


def _explain(request: Request, ctx: CursorContext, story: str | None) -> Explained:
    """The words for the cursor's line (and its source line's story, unless known)."""
    # deferred: the explanation tables load with the first explanation asked for, not before the first paint
    from irscope.ir.explain import explain_line, lowering_story

    comp = ctx.comp
    try:
        lines = comp.stage(ctx.stage).splitlines()
    except Exception as exc:  # a failed compile has only its source
        return Explained(request, None, "", f"Nothing to explain: {exc}")
    line = lines[ctx.index] if 0 <= ctx.index < len(lines) else ""
    explanation = explain_line(ctx.stage, line, comp)
    if story is None:
        story = (
            lowering_story(comp, ctx.source_line) if ctx.source_line is not None and comp.ok else ""
        )
    return Explained(request, explanation, line, story)


class ExplainPanel(Asker, InfoPanel):
    """Explains the cursor's line in a thread worker (the first SASS line runs nvdisasm once for the
    control fields); the stories are kept per compilation and source line."""

    panel_title = "Explain"

    DEFAULT_CSS = """
    ExplainPanel #explain-line { margin-bottom: 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._stories = bounded(STORIES)  # (comp.key, source line) -> story
        self.last_explanation: Explanation | None = None
        self.last_story: str | None = None

    def caches(self) -> dict:
        return {"stories": self._stories}

    def compose(self) -> ComposeResult:
        yield Static("Move the cursor to a line to see it explained.", id="explain-line")
        yield Static("", id="explain-story")

    def show_context(self, ctx: CursorContext) -> None:
        key = (ctx.comp.key, ctx.source_line)
        self.ask("explain", _explain, ctx, self._stories.get(key), about=key)

    def on_explained(self, message: Explained) -> None:
        if not self.answered(message):
            return  # the cursor moved on; a newer answer is coming
        comp_key, source_line = message.request.about
        if message.explanation is not None and source_line is not None:
            self._stories[comp_key, source_line] = message.story
        self._update(message.explanation, message.line, message.story)

    def request_failed(self, message: Failed) -> None:
        self.say_failed(message.failure.message)

    def _update(self, explanation: Explanation | None, line: str, story: str) -> None:
        self.last_explanation, self.last_story = explanation, story
        if explanation is not None:
            self.query_one("#explain-line", Static).update(render_explanation(explanation, line))
        body = (
            Group(Text("How this source line is lowered", style="bold underline"), Text(story))
            if story
            else Text(
                "No source line for this line (code the compiler added, or metadata).", style="dim"
            )
        )
        self.query_one("#explain-story", Static).update(body)
