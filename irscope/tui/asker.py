"""Views that ask the worker process for something slow (an analysis, the findings, a recording, a pass
capture, a diff) and keep what it answers.

A view mixes in `Asker` and calls `ask(kind, job, *args)`: the job runs in a thread worker, returns one
typed answer (tui/messages.py) and touches nothing else; the answer is posted to the view and applied by
its handler on the UI thread. Every request is numbered (one count for the whole app, shared with the
main screen's requests); a view remembers the newest request of each kind, and an answer to any other
is stale and dropped (`is_current`). A job that raises is answered with a `Failed`, which goes to the
main screen's one failure handler (MainScreen.on_failed); that hands it back to the view that asked
(`request_failed`), if that request is still the newest.

What a view keeps of the answers lives in bounded caches (`bounded`), listed by `caches()` and emptied
with every outstanding request forgotten by `drop_caches()` when the main screen loads a new compilation
(`r`, `e`, `t`, another autotune config): the keys of the old ones never come back.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from functools import partial
from typing import Any, Callable, Sized

from irscope.tui.loader import describe_open_error
from irscope.tui.messages import Answer, Failed, Request

KEEP_COMPILATIONS = 4  # per view: results for this many compilations (the user flips between a few)

_serials = itertools.count(1)  # next() on a count is atomic under the GIL: safe from any thread


def new_request(kind: str, about: Any = None) -> Request:
    """The next request of the app (a larger serial than any before it)."""
    return Request(next(_serials), kind, about)


class Bounded(OrderedDict):
    """A dict that keeps the `maxsize` entries set or read last (a read with `get` counts as a use)."""

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = maxsize

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.maxsize:
            self.popitem(last=False)

    def get(self, key, default=None):
        if key in self:
            self.move_to_end(key)
            return self[key]
        return default

    def discard(self, key) -> None:
        self.pop(key, None)


def bounded(size: int | None = None) -> Bounded:
    """A cache of the last `size` entries used (KEEP_COMPILATIONS, as it is when called, by default)."""
    return Bounded(KEEP_COMPILATIONS if size is None else size)


class Asker:
    """Mixed into a widget or screen whose slow questions go to the worker in thread workers."""

    def ask(self, kind: str, job: Callable[..., Answer], *args: Any, about: Any = None) -> Request:
        """Run `job(request, *args)` in a thread; the answer it returns comes back as a message to this
        view. `about`: what the request is for (a compilation's key), read back by the handlers."""
        request = new_request(kind, about)
        self._asked[kind] = request
        # where a failure goes (read here, on the UI thread)
        handler = getattr(self.app, "_main", None) or self
        self.run_worker(
            partial(_answer, self, handler, request, job, *args),
            thread=True,
            group=kind,
            exit_on_error=False,
            description=kind,
        )
        return request

    @property
    def _asked(self) -> dict[str, Request]:
        asked = self.__dict__.get("_asked_requests")
        if asked is None:
            asked = self.__dict__["_asked_requests"] = {}
        return asked

    def asking(self, kind: str) -> Request | None:
        """The newest request of `kind` that has not been answered yet, or None."""
        return self._asked.get(kind)

    def is_current(self, message: Answer) -> bool:
        """`message` answers this view's newest request of its kind (else it is stale)."""
        return self._asked.get(message.request.kind) == message.request

    def answered(self, message: Answer) -> bool:
        """True (and the request is no longer outstanding) when `message` answers the newest request."""
        if not self.is_current(message):
            return False
        del self._asked[message.request.kind]
        return True

    # pragma: no cover - every asker says it its own way
    def request_failed(self, message: Failed) -> None:
        """A job of this view raised (called by the main screen's failure handler, on the UI thread)."""

    def caches(self) -> dict[str, Sized]:
        """The caches of this view, by name (tests and `drop_caches` read them)."""
        return {}

    def drop_caches(self) -> None:
        """A new compilation is loaded: forget every answer kept and every request not yet answered."""
        for cache in self.caches().values():
            cache.clear()
        self._asked.clear()

    def on_failed(self, message: Failed) -> None:
        """Reached only where no main screen exists (a view shown on its own, as the tests do)."""
        if message.asker is self:
            message.stop()
            deliver_failure(message)


def deliver_failure(message: Failed) -> None:
    """A failed request of an asker: handed to it while it is the newest of its kind."""
    asker = message.asker
    if asker.is_current(message):
        del asker._asked[message.request.kind]
        asker.request_failed(message)


def _answer(
    asker: Asker, handler, request: Request, job: Callable[..., Answer], *args: Any
) -> None:
    try:
        answer = job(request, *args)
    except BaseException as exc:  # said by the view that asked, through the main screen's handler
        handler.post_message(Failed(request, describe_open_error(exc), fatal=False, asker=asker))
        return
    asker.post_message(answer)
