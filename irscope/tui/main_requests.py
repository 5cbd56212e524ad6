"""The main screen's requests to the worker process and their answers (a part of `MainScreen`, kept in
its own module for size).

A request runs as a thread worker in the group "load" (tui/jobs.py), started from a snapshot of the
screen's state; it answers with typed messages (tui/messages.py) that the handlers here apply on the UI
thread. Requests are numbered: an answer to any but the newest is dropped. `busy` is whether a request's
worker has not finished; while it runs, no other request starts (it would race it for the compilation
shown and the picker's rows).
"""

from __future__ import annotations

import gc
import os
import threading
from functools import partial

from irscope.tui import jobs, showing
from irscope.tui.asker import deliver_failure, new_request
from irscope.tui.loader import describe_open_error
from irscope.tui.messages import (
    Analysed,
    Compiled,
    Failed,
    Loaded,
    PickWanted,
    Progress,
    Request,
    SessionOpened,
)
from irscope.tui.screens import PickerScreen

# How often the collector runs: young objects every 20,000 allocations, older generations rarely; while
# a request compiles and prepares a compilation, only young objects (see spare_the_heap).
COLLECT = (20_000, 20, 100)
YOUNG_ONLY = (20_000, 1_000_000, 1_000_000)


def spare_the_heap() -> None:
    """The compiled stages make a heap of many objects; a full garbage collection walking it stalls a
    keypress by 100-300 ms. They live for the whole session, so move them out of the collector's sight
    (`gc.freeze`) and collect young objects less often. While a request compiles and prepares a
    compilation, only young objects are collected (`MainRequests._start`): the answers unpickled and the
    panes' texts and links built in its thread would set off a collection of the middle generation that
    walks the new compilation (~0.2 s, a key pressed then waits for it); here, after the paint, one
    collection does it all. (Every generation is collected while the user's file runs: that may take
    minutes, and each move leaves a few hundred objects in reference cycles.)"""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*COLLECT)


# The requests whose answer replaces the compilations: what the views kept of the old ones is dropped.
NEW_COMPILATIONS = frozenset({"load", "recompile", "config"})


class MainRequests:
    """Mixed into MainScreen: starting requests, and the handlers of their answers."""

    @property
    def busy(self) -> bool:
        """A request runs (its answer would race another one for the compilation shown)."""
        return any(
            w.group == "load" and w.node is self and not w.is_finished for w in self.app.workers
        )

    def still_working(self) -> bool:
        """True (and said on screen) while a request runs."""
        busy = self.busy
        if busy:
            self.notify("still working; try again in a moment", timeout=2)
        return busy

    def _start(self, kind: str, job, *args) -> None:
        request = new_request(kind)
        self._serial = request.serial
        gc.set_threshold(
            *YOUNG_ONLY
        )  # until the request's worker has finished (on_worker_state_changed)
        self.run_worker(
            partial(self._run_job, request, job, *args),
            thread=True,
            group="load",
            exit_on_error=False,
            description=kind,
        )

    def _run_job(self, request: Request, job, *args) -> None:
        try:
            job(request, self.post_message, *args)
        except BaseException as exc:  # shown on the screen (on_failed); `r` tries again
            self.post_message(Failed(request, describe_open_error(exc)))

    def _snapshot(self) -> jobs.Snapshot:
        return jobs.Snapshot(
            self.path,
            self.session,
            list(self.comps),
            self.shown_index,
            dict(self.edits),
            self.shown.comp if self.shown is not None else None,
        )

    def load(self) -> None:
        """Open the file afresh in a new worker (it runs the file's __main__)."""
        before = (
            self.shown.comp.kernel.name if self.shown is not None else None
        )  # None: the first load
        old, self.session = self.session, None
        self._start(
            "load", jobs.load, self._snapshot(), self.sessions, old, dict(self.open_args), before
        )

    def prepare_in_background(self, comp) -> None:
        if not self.still_working():
            self._start("prepare", jobs.prepare_comp, self.session, comp, self.path)

    def recompile_in_background(
        self, target: str | None = None, defines: dict | None = None
    ) -> None:
        if not self.still_working() and self.shown is not None:
            self._start("recompile", jobs.recompile, self._snapshot(), target, defines)

    def compile_config_in_background(self, index: int) -> None:
        if not self.still_working() and self.shown is not None and self.ws is not None:
            self._start("config", jobs.compile_config, self._snapshot(), index)

    def _current(self, message) -> bool:
        return message.request.serial == self._serial

    def on_progress(self, message: Progress) -> None:
        if self._current(message):
            self.set_progress(message.text, message.fraction)

    def on_session_opened(self, message: SessionOpened) -> None:
        if not self._current(message):  # a newer load has its own worker: this one is not needed
            threading.Thread(
                target=self.sessions.close, args=(message.session,), daemon=True
            ).start()
            return
        self.session, self.capturing = message.session, True
        gc.set_threshold(
            *COLLECT
        )  # the file may run for minutes (a training loop): every generation

    def on_loaded(self, message: Loaded) -> None:
        if self._current(message):
            self.capturing = False
            gc.set_threshold(*YOUNG_ONLY)  # the compile and the panes' texts, then spare_the_heap
            self.ws, self.comps = message.ws, message.comps
            for said in (
                [message.ws.run_warning] if message.ws.run_warning else []
            ) + message.ws.notes:
                self.notify(said, severity="warning", timeout=10)

    def on_compiled(self, message: Compiled) -> None:
        if self._current(message):
            self.comps, self.shown_index, self.edits = (
                message.comps,
                message.shown_index,
                message.edits,
            )
            if message.target:
                self.open_args["target"] = message.target
            if message.config is not None:
                self.open_args["config"] = message.config

    def on_pick_wanted(self, message: PickWanted) -> None:
        if self._current(message):
            self.pick(False)

    def on_analysed(self, message: Analysed) -> None:
        if not self._current(message):
            return
        comp = message.shown.comp
        if message.request.kind in NEW_COMPILATIONS:
            self.drop_caches()
        self.comps = [comp if c.key == comp.key else c for c in self.comps]
        showing.show_compilation(self, message.shown)
        if message.note:
            self.notify(message.note, severity=message.severity, timeout=6)

    def on_worker_state_changed(self, event) -> None:
        if event.worker.group == "load" and event.worker.is_finished and not self.busy:
            self.call_after_refresh(
                spare_the_heap
            )  # after the paint of what it answered, not before it

    def on_failed(self, message: Failed) -> None:
        """Every request's failure, the views' too: shown on the screen, never the end of the app."""
        if (
            message.asker is not None
        ):  # a view's request: the view says it, if it still waits for it
            deliver_failure(message)
            return
        if not self._current(message):
            return
        self.capturing = False
        if message.fatal:
            if message.request.kind in NEW_COMPILATIONS:
                self.drop_caches()
            showing.show_open_failure(self, message.failure)
        else:
            self.set_progress(f"✗ {message.failure.message}", error=True)

    def drop_caches(self) -> None:
        """Forget what the views kept of the compilations shown until now (bounded caches, tui/asker.py)
        and their questions not yet answered."""
        for cache in self.caches().values():
            cache.clear()
        for asker in self.askers():
            asker.drop_caches()

    def cache_sizes(self) -> dict[str, int]:
        """How many entries each cache of the screen and its views holds, by "View.cache" (tests)."""
        sizes = {f"MainScreen.{name}": len(cache) for name, cache in self.caches().items()}
        for asker in self.askers():
            sizes.update(
                {f"{type(asker).__name__}.{name}": len(c) for name, c in asker.caches().items()}
            )
        return sizes

    def pick(self, cancellable: bool = True) -> None:
        rows = showing.picker_rows(self.comps)
        self.set_progress(f"{os.path.basename(self.path)}: {len(rows)} compilations", None)

        def chosen(index: int | None) -> None:
            if index is not None and index >= 0:
                if index != self.shown_index:
                    self.edits = {}  # they belong to the compilation shown until now
                self.shown_index = index
                self.set_progress(f"preparing {self.comps[index].kernel.name}…", 0.6)
                self.prepare_in_background(self.comps[index])

        missing = (
            showing.missing_lines(self.ws.missing)
            if self.ws is not None and self.ws.missing
            else None
        )
        self.app.push_screen(
            PickerScreen(rows, cancellable, start=self.shown_index or 0, missing=missing), chosen
        )
