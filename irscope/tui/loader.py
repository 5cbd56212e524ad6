"""Turn the worker's answers into what the panes show: stage texts, links, memory marks; and errors
into what the screen says. Runs in a thread worker; nothing here touches widgets."""

from __future__ import annotations

import re
import textwrap
import traceback
from dataclasses import dataclass, field
from typing import Callable

from irscope.analysis.marks import line_marks
from irscope.base.errors import IrscopeError, UserCodeError
from irscope.tui.highlight import StageText
from irscope.tui.linking import LinkIndex
from irscope.worker.views import CompilationView

Progress = Callable[[str, float], None]


@dataclass
class Shown:
    """One compilation, ready to show: its stages as text and its links."""

    comp: CompilationView
    links: LinkIndex
    texts: dict[str, StageText] = field(default_factory=dict)  # inline debug annotations left out
    # exactly as the compiler wrote them
    full_texts: dict[str, StageText] = field(default_factory=dict)
    # stage -> line -> memory marks
    marks: dict[str, dict[int, set[str]]] = field(default_factory=dict)
    # stage -> line -> severest finding
    finding_marks: dict[str, dict[int, str]] = field(default_factory=dict)
    # source lines (0-based) whose text a save changed, since the compilation shown before the reload
    changed_lines: frozenset[int] = frozenset()

    @property
    def stages(self) -> tuple[str, ...]:
        return self.comp.stage_names


@dataclass
class OpenFailure:
    """Opening the file failed: the message, and the user's traceback when their code raised."""

    message: str
    detail: str = ""
    line: int | None = None


def describe_open_error(exc: BaseException) -> OpenFailure:
    if isinstance(exc, UserCodeError):
        line = None
        for text in reversed(exc.user_traceback.splitlines()):
            text = text.strip()
            if text.startswith("File ") and ", line " in text:
                try:
                    line = int(text.split(", line ")[1].split(",")[0])
                except ValueError:
                    pass
                break
        return OpenFailure(str(exc), exc.user_traceback, line)
    if isinstance(exc, IrscopeError):
        found = re.search(r"\.py:(\d+):", str(exc))  # "file.py:12: has a syntax error: ..."
        # an internal error in the worker comes with its traceback as `detail`
        return OpenFailure(
            str(exc), getattr(exc, "detail", ""), int(found.group(1)) if found else None
        )
    return OpenFailure(f"internal error: {type(exc).__name__}: {exc}", traceback.format_exc())


def prepare(comp: CompilationView, progress: Progress) -> Shown:
    """Stage texts for the panes, the links between them and memory marks, from a prepared view."""
    shown = Shown(comp, LinkIndex(comp))
    stages = comp.stage_names
    for n, stage in enumerate(stages):
        progress(f"loading {stage}", 0.6 + 0.35 * n / len(stages))
        if stage == "source" or comp.ok:
            text = comp.stage(stage)
            shown.full_texts[stage] = StageText(stage, text)
            shown.texts[stage] = (
                StageText(stage, text, strip_debug=True)
                if stage in ("ttir", "ttgir", "llir", "sass")
                else shown.full_texts[stage]
            )
            shown.links.stage(stage)
        else:
            shown.texts[stage] = shown.full_texts[stage] = StageText("error", failure_text(comp))
    if comp.ok:
        for stage in stages:
            shown.marks[stage] = line_marks(comp, stage)
    shown.links.colour_slot(0)
    progress("ready", 1.0)
    return shown


def failure_text(comp: CompilationView) -> str:
    """What an IR pane says when there is no IR: the compiler's message, wrapped for narrow panes."""
    f = comp.failure
    where = f"line {f.line}: {f.source_line}" if f and f.line else "an unknown line"
    parts = [
        f"{comp.kernel.name} did not compile for {comp.target}.",
        f.message if f else "",
        f"At {where}",
        "The source pane marks the line. Fix the file, then press r to reload.",
    ]
    return "\n\n".join(textwrap.fill(part, 34) for part in parts) + "\n"
