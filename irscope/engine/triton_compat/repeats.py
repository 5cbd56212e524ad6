"""Benchmark loops in the interpreter: a launch the same as its kernel's last one is not run again.

Files time their kernels by launching them again and again with the same tensors (tutorial 09 launches each of
its kernels 20,000 times). A GPU runs each in microseconds; the interpreter takes up to seconds a launch, and
the file would never reach its next kernels. Such a repeat adds nothing to show, so capture.py neither records
nor runs it (its outputs stay those of the launch before, which a pure kernel writes again; a kernel that
accumulates into its output in place differs), and the count is said.
"""

from __future__ import annotations

from typing import Any

_skipped = [0]  # repeats not run in this capture
_last: dict[
    tuple, tuple
] = {}  # (kernel, config, recorded, run) -> what its last launch was (launch_identity)


def forget_launches() -> None:
    """A new capture: no launch has been seen, none skipped."""
    _last.clear()
    _skipped[0] = 0


def same_as_last(slot: tuple, identity: tuple) -> bool:
    """Whether this launch is the same as the last one in its slot (counted as skipped if so); it becomes the
    last one otherwise."""
    if _last.get(slot) == identity:
        _skipped[0] += 1
        return True
    _last[slot] = identity
    return False


def repeats_skipped() -> int:
    """How many launches of this capture were the same as the launch of their kernel before them, and were
    neither recorded nor run again in the interpreter (a benchmark loop: see _capture_patches)."""
    return _skipped[0]


def launch_identity(args: tuple, kwargs: dict, grid: Any) -> tuple:
    """What makes a launch the same as another: its tensors by storage and shape, everything else by value
    where a value is cheap to compare, else by identity; a grid function by its code and the values it
    closes over."""

    def one(value: Any) -> Any:
        if hasattr(value, "data_ptr") and hasattr(value, "stride"):
            return (
                "tensor",
                value.data_ptr(),
                tuple(value.shape),
                tuple(value.stride()),
                str(value.dtype),
            )
        if isinstance(value, (int, float, str, bool, type(None))):
            return value
        if isinstance(value, (tuple, list)):
            return tuple(one(v) for v in value)
        # a tensor descriptor, often made anew
        if hasattr(value, "block_shape") and hasattr(value, "base"):
            return (
                "descriptor",
                one(value.base),
                tuple(value.shape),
                tuple(value.strides),
                tuple(value.block_shape),
            )
        return ("object", type(value).__name__, id(value))

    if callable(grid):
        cells = tuple(one(c.cell_contents) for c in (getattr(grid, "__closure__", None) or ()))
        grid = (getattr(grid, "__code__", None) or id(grid), cells)
    else:
        grid = one(grid)
    return tuple(one(a) for a in args), tuple(sorted((k, one(v)) for k, v in kwargs.items())), grid
