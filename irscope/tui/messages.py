"""The typed messages of the main screen's pipeline: what a background job (tui/jobs.py) tells the
screen. A job runs in a thread and talks to the worker process; it never assigns widget or screen state,
it posts these (`post_message` is safe from any thread) and the screen's handlers apply them on the UI
thread, in the order they were posted.

Every message carries the `Request` it answers. The screen numbers its requests; an answer to a request
older than the newest is stale and dropped, so a slow answer never overwrites a newer one.
A cursor move is the StageView's own `StageView.CursorMoved` (re-exported here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.message import Message

from irscope.tui.widgets.stage_view import StageView

if TYPE_CHECKING:
    from irscope.tui.loader import OpenFailure, Shown

CursorMoved = StageView.CursorMoved


@dataclass(frozen=True)
class Request:
    """One thing asked of the worker: its number (newer requests have larger ones), its kind ("load",
    "prepare", "recompile", "config" for the main screen; a view's own kinds, tui/asker.py) and what it
    is about where its answer needs saying (a compilation's key)."""

    serial: int
    kind: str
    about: Any = field(default=None, compare=False)


class Answer(Message, bubble=False):
    """A message that answers a request (to the node that asked, and no further)."""

    def __init__(self, request: Request) -> None:
        super().__init__()
        self.request = request


class Progress(Answer):
    """How far a request has got: a line for the status bar and a fraction for its bar."""

    def __init__(self, request: Request, text: str, fraction: float) -> None:
        super().__init__(request)
        self.text = text
        self.fraction = fraction

    def can_replace(self, message: Message) -> bool:
        """A burst of progress lines (a stage each) is drawn once, at its newest: the next one queued
        supersedes this one."""
        return isinstance(message, Progress)


class SessionOpened(Answer):
    """A load started a new worker process; it runs the user's file now (x stops it)."""

    def __init__(self, request: Request, session: Any) -> None:
        super().__init__(request)
        self.session = session


class Loaded(Answer):
    """The file ran: what the worker found (a WorkspaceInfo) and its compilations for the target."""

    def __init__(self, request: Request, ws: Any, comps: list) -> None:
        super().__init__(request)
        self.ws = ws
        self.comps = comps


class Compiled(Answer):
    """The rows of the picker, which of them is shown and the edits in force, after a (re)compile;
    `target` and `config` are set when the request changed them (a reload keeps them); `named_done` is the
    index of a named specialization (WorkspaceInfo.named) that the request compiled."""

    def __init__(
        self,
        request: Request,
        comps: list,
        shown_index: int | None,
        edits: dict,
        target: str | None = None,
        config: int | None = None,
        named_done: int | None = None,
    ) -> None:
        super().__init__(request)
        self.comps = comps
        self.shown_index = shown_index
        self.edits = edits
        self.target = target
        self.config = config
        self.named_done = named_done


class PickWanted(Answer):
    """The file has several compilations and none was shown before: the user picks one."""


class Analysed(Answer):
    """A compilation prepared and analysed (stage texts, links, marks): ready for the panes."""

    def __init__(
        self,
        request: Request,
        shown: Shown,
        note: str = "",
        severity: str = "information",
        completes: bool = False,
    ) -> None:
        super().__init__(request)
        self.shown = shown
        self.note = note  # said once it is shown (a reload says what it kept)
        self.severity = severity
        # the same compilation again with the stages its first answer left pending (the SASS)
        self.completes = completes


class Failed(Answer):
    """A request failed. `fatal`: nothing can be shown (the panes say why, `r` tries again); else the
    compilation shown stays and the status line says what failed."""

    def __init__(
        self, request: Request, failure: OpenFailure, fatal: bool = True, asker: Any = None
    ) -> None:
        super().__init__(request)
        self.failure = failure
        self.fatal = fatal
        self.asker = (
            asker  # a view's request (tui/asker.py): it says what failed; None: the main screen's
        )


# ---- the answers to the views' own requests (tui/asker.py); `request.about` names the compilation


class CoalescingAnalysed(Answer):
    """The Coalescing panel's analysis of a compilation (a KernelCoalescing) and its roofline (a Roofline,
    or why there is none)."""

    def __init__(self, request: Request, result: Any, roofline: Any = None) -> None:
        super().__init__(request)
        self.result = result
        self.roofline = roofline


class Explained(Answer):
    """The Explain panel's words for a line: its explanation (None: the stage has no text) and the
    lowering story of its source line."""

    def __init__(self, request: Request, explanation: Any, line: str, story: str) -> None:
        super().__init__(request)
        self.explanation = explanation
        self.line = line
        self.story = story


class WhatIfCompiled(Answer):
    """The Memory panel's what-if: the compilation recompiled with the vectorization fixes."""

    def __init__(self, request: Request, what_if: Any) -> None:
        super().__init__(request)
        self.what_if = what_if


class MeasureRefusal(Answer):
    """Why this machine cannot measure ("" when it can)."""

    def __init__(self, request: Request, why: str) -> None:
        super().__init__(request)
        self.why = why


class Measured(Answer):
    """A compilation timed and run under Nsight Compute (the worker's `measure` answer)."""

    def __init__(self, request: Request, result: Any) -> None:
        super().__init__(request)
        self.result = result


class FindingsFound(Answer):
    """The ranked findings of a compilation."""

    def __init__(self, request: Request, findings: list) -> None:
        super().__init__(request)
        self.findings = findings


class PassesCaptured(Answer):
    """The compiler's passes of a compilation, one step each, or why none were captured (a str)."""

    def __init__(self, request: Request, steps: list | str) -> None:
        super().__init__(request)
        self.steps = steps


class DiffComputed(Answer):
    """Two compilations diffed: the views compiled for the sides (None: given) and the diff document."""

    def __init__(self, request: Request, views: list, doc: dict) -> None:
        super().__init__(request)
        self.views = views
        self.doc = doc


class ProgramRecorded(Answer):
    """One program of a launch recorded in the interpreter (a Recording), or why it could not be."""

    def __init__(
        self, request: Request, program_id: tuple, recording: Any, failure: str | None
    ) -> None:
        super().__init__(request)
        self.program_id = program_id
        self.recording = recording
        self.failure = failure
