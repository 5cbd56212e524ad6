"""The typed messages of the main screen's pipeline: what a background job (tui/jobs.py) tells the
screen. A job runs in a thread and talks to the worker process; it never assigns widget or screen state,
it posts these (`post_message` is safe from any thread) and the screen's handlers apply them on the UI
thread, in the order they were posted.

Every message carries the `Request` it answers. The screen numbers its requests; an answer to a request
older than the newest is stale and dropped, so a slow answer never overwrites a newer one.
A cursor move is the StageView's own `StageView.CursorMoved` (re-exported here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

from .widgets.stage_view import StageView

if TYPE_CHECKING:
    from .loader import OpenFailure, Shown

CursorMoved = StageView.CursorMoved


@dataclass(frozen=True)
class Request:
    """One thing asked of the worker: its number (newer requests have larger ones) and its kind
    ("load", "prepare", "recompile", "config")."""

    serial: int
    kind: str


class Answer(Message):
    """A message that answers a request."""

    def __init__(self, request: Request) -> None:
        super().__init__()
        self.request = request


class Progress(Answer):
    """How far a request has got: a line for the status bar and a fraction for its bar."""

    def __init__(self, request: Request, text: str, fraction: float) -> None:
        super().__init__(request)
        self.text = text
        self.fraction = fraction


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
    `target` and `config` are set when the request changed them (a reload keeps them)."""

    def __init__(self, request: Request, comps: list, shown_index: int | None, edits: dict,
                 target: str | None = None, config: int | None = None) -> None:
        super().__init__(request)
        self.comps = comps
        self.shown_index = shown_index
        self.edits = edits
        self.target = target
        self.config = config


class PickWanted(Answer):
    """The file has several compilations and none was shown before: the user picks one."""


class Analysed(Answer):
    """A compilation prepared and analysed (stage texts, links, marks): ready for the panes."""

    def __init__(self, request: Request, shown: Shown, note: str = "", severity: str = "information") -> None:
        super().__init__(request)
        self.shown = shown
        self.note = note          # said once it is shown (a reload says what it kept)
        self.severity = severity


class Failed(Answer):
    """A request failed. `fatal`: nothing can be shown (the panes say why, `r` tries again); else the
    compilation shown stays and the status line says what failed."""

    def __init__(self, request: Request, failure: OpenFailure, fatal: bool = True) -> None:
        super().__init__(request)
        self.failure = failure
        self.fatal = fatal
