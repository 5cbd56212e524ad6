"""How the main screen spares the garbage collector's time: the compiled stages make a heap of many
objects that live for the whole session."""

from __future__ import annotations

import gc

# How often the collector runs: young objects every 20,000 allocations, older generations rarely; while
# a request compiles and prepares a compilation, only young objects (see spare_the_heap).
COLLECT = (20_000, 20, 100)
YOUNG_ONLY = (20_000, 1_000_000, 1_000_000)


def spare_the_heap() -> None:
    """The compiled stages make a heap of many objects; a full garbage collection walking it stalls a
    keypress by 100-300 ms. They live for the whole session, so move them out of the collector's sight
    (`gc.freeze`) and collect young objects less often. While a request compiles and prepares a
    compilation, only young objects are collected (`MainScreen._start`): the answers unpickled and the
    panes' texts and links built in its thread would set off a collection of the middle generation that
    walks the new compilation (~0.2 s, a key pressed then waits for it); here, after the paint, one
    collection does it all. (Every generation is collected while the user's file runs: that may take
    minutes, and each move leaves a few hundred objects in reference cycles.)"""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*COLLECT)
