"""Watching for saves: the opened file and the modules of its folder its run imported (the worker lists them),
each with its modification time as it was when the load that showed it began, so that a save made while
the file runs is seen once that load is done."""

from __future__ import annotations

import os
from collections.abc import Iterable

# how often the watched files' modification times are read: a few stat calls, and on average half of it is
# waited between a save and its reload (the edit loop's target is 1 s in all)
INTERVAL_S = 0.1


def modified_at(paths: Iterable[str]) -> dict[str, int | None]:
    """Each file's modification time (ns), None while it is missing (an editor's save may rename it in)."""
    out: dict[str, int | None] = {}
    for path in paths:
        try:
            out[path] = os.stat(path).st_mtime_ns
        except OSError:
            out[path] = None
    return out


class SaveWatch:
    def __init__(self) -> None:
        self.on = True  # `w` turns it off and on
        self._at: dict[str, int | None] = {}  # each watched file's modification time at its load

    def loading(self, paths: Iterable[str]) -> None:
        """A load begins: the files it will run, as they are now."""
        self._at = modified_at(paths)

    def loaded(self, sources: Iterable[str]) -> None:
        """The load is done: the modules its run imported are watched too (from their time now)."""
        self._at = {**modified_at(sources), **self._at}

    def saved(self) -> list[str]:
        """The watched files saved since their load (none while the watch is off)."""
        if not self.on or not self._at:
            return []
        now = modified_at(self._at)
        return [path for path, at in now.items() if at is not None and at != self._at[path]]
