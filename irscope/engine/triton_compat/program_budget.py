"""An interpreted launch runs its programs for a few seconds at most, then skips the rest.

Triton's interpreter runs a launch's programs one after the other in Python: a benchmark-sized grid (a
tutorial's 4096 × 4096 softmax, an attention forward over a long sequence) takes minutes, and while it runs
the file does not get to its next launches, which a GPU reaches in microseconds. What irscope shows of a
launch needs none of its programs run (the compile is of its arguments; the coalescing and the stepper record
programs of their own, on copies), so past `seconds` of a launch its remaining programs are skipped and the
file goes on. The launch is said to be cut short: what it wrote is incomplete, and the file may see
results no GPU would give (comparisons_after_cuts keeps the file's result comparisons from failing on them).

A later launch of a specialization whose earlier launch was cut short gets REPEAT_S: it would be cut short
too, what it wrote would be as incomplete, and irscope learns nothing new from it (the compile and the
analyses are the specialization's). A file that launches one kernel in a loop over chunks of a large input
(efficient-cross-entropy: 10 launches of 8192 programs) otherwise spends the budget on every chunk.

The program that runs first always runs whole. `IRSCOPE_INTERPRET_S` changes the default (seconds), for
every launch alike.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
import triton.runtime.interpreter as _interpreter_module
import triton.testing

INTERPRET_S = 2.0
REPEAT_S = 0.25


class ProgramsCut(BaseException):
    """Raised between two programs of a launch whose time is up (a BaseException: the interpreter wraps
    every Exception of a launch in its own InterpreterError)."""


@dataclass
class ProgramCount:
    run: int = 0  # programs started
    total: int = 0  # programs in the grid


def interpret_seconds(after_cut: bool = False) -> float:
    """A launch's time in the interpreter; `after_cut`: an earlier launch of its specialization was cut."""
    asked = os.environ.get("IRSCOPE_INTERPRET_S")
    if asked is not None:
        try:
            return max(0.1, float(asked))
        except ValueError:
            pass
    return REPEAT_S if after_cut else INTERPRET_S


@contextlib.contextmanager
def programs_within(seconds: float) -> Iterator[ProgramCount]:
    """While the block runs a launch in the interpreter, count its programs, and raise ProgramsCut before
    the next one once `seconds` have passed since the first started. The interpreter's builder is told each
    program's index before the program runs (set_grid_idx) and the grid once (set_grid_dim)."""
    builder = getattr(_interpreter_module, "interpreter_builder", None)
    # an interpreter this does not know: no cut
    if builder is None or not hasattr(builder, "set_grid_idx"):
        yield ProgramCount()
        return
    count = ProgramCount()
    started: list[float] = []
    own = vars(builder)
    saved = {name: own[name] for name in ("set_grid_idx", "set_grid_dim") if name in own}
    set_idx, set_dim = builder.set_grid_idx, builder.set_grid_dim

    def set_grid_dim(nx, ny, nz):
        count.total = int(nx) * int(ny) * int(nz)
        return set_dim(nx, ny, nz)

    def set_grid_idx(x, y, z):
        now = time.monotonic()
        if not started:
            started.append(now)
        elif now - started[0] > seconds:
            raise ProgramsCut
        count.run += 1
        return set_idx(x, y, z)

    builder.set_grid_idx, builder.set_grid_dim = set_grid_idx, set_grid_dim
    try:
        yield count
    finally:
        for name in ("set_grid_idx", "set_grid_dim"):
            if name in saved:
                setattr(builder, name, saved[name])
            else:
                delattr(builder, name)


@contextlib.contextmanager
def comparisons_after_cuts(cut: Callable[[], bool], notes: list[str]) -> Iterator[None]:
    """Once a launch has been cut short (or not run at all: a Gluon launch), its outputs are incomplete, and
    a file that checks its kernel against a reference would fail where a GPU passes and lose every launch
    after the check. From then on the file's result comparisons (`torch.testing.assert_close`,
    `triton.testing.assert_close`, `torch.allclose`, `Tensor.allclose`, `torch.equal`) are not made: they
    pass, and how many were passed so is added to `notes`. `cut()` says whether a launch of this run has
    been cut short or not run (or, likewise incomplete, a matrix product left uncomputed: virtual_gpu)."""
    passed = [0]

    def after_cut(original, answer):
        def compare(*args, **kwargs):
            if cut():
                passed[0] += 1
                return answer
            return original(*args, **kwargs)

        return compare

    places = [
        (torch.testing, "assert_close", None),
        (triton.testing, "assert_close", None),
        (torch, "allclose", True),
        (torch, "equal", True),
        (torch.Tensor, "allclose", True),
    ]
    saved = [
        (owner, name, getattr(owner, name)) for owner, name, _ in places if hasattr(owner, name)
    ]
    for (owner, name, answer), (_, _, original) in zip(places, saved):
        setattr(owner, name, after_cut(original, answer))
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
        if passed[0]:
            notes.append(
                f"{passed[0]} result comparison(s) the file made after a launch was cut short or "
                f"not run, or a product left uncomputed, were passed without comparing (the results are "
                f"incomplete)"
            )
