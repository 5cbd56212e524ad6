"""Out-of-bounds accesses of a launch the capture runs whole in Triton's interpreter: found, kept off the
process's own memory, and said.

On the virtual GPU a kernel's pointers are raw addresses of CPU tensors, and the interpreter reads and writes
them without a check. A kernel that stores a few lanes past its output's end is often quiet on a GPU (PyTorch's
caching allocator rounds blocks up and packs them into larger segments, so the stray lanes land in memory the
process owns) but here writes into the heap of the very process that runs the file: glibc aborts later,
anywhere ("malloc(): unaligned tcache chunk detected"), and the whole run is lost (adasplash's test session,
killed by SIGABRT). So every load, store and atomic of a whole-launch interpretation is checked against the
memory the launch may touch: the storages of the tensors it was given, and, for an address outside them (a
kernel that loads pointers from a table), every tensor storage alive in the process (looked up on the first
such address, and kept for the launches after). Lanes outside all of them are switched off (a load gets its
`other`, as a masked lane does) and the first such access is kept: kind, the kernel's line, the program, how
many lanes, and where the address lies against the nearest argument.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import gc
import os
import sys
import warnings
from typing import Any, Iterator

import numpy as np
import triton

from irscope.base.model import StrayAccess
from irscope.base.paths import PACKAGE_DIR
from irscope.engine.triton_compat.interpreter import memory_ops_replaced

# the frames of Triton's interpreter and irscope's own code, above the kernel's line
_TRITON_DIR = os.path.join(os.path.dirname(os.path.abspath(triton.__file__)), "")
_IRSCOPE_DIR = os.path.join(PACKAGE_DIR, "")


def _storage_range(value: Any) -> tuple[int, int] | None:
    storage = getattr(value, "untyped_storage", None)
    if storage is None:
        return None
    try:
        s = storage()
        start = int(s.data_ptr())
        return (start, start + int(s.nbytes())) if start else None
    except Exception:  # noqa: BLE001 - a meta or sparse tensor, a subclass without storage: no range
        return None


def _argument_ranges(arguments: dict[str, Any]) -> list[tuple[int, int, str]]:
    """(start, end, argument name) of every tensor storage among the launch's arguments (tuples,
    `triton.reinterpret` wrappers and tensor descriptors opened)."""
    out: list[tuple[int, int, str]] = []

    def visit(name: str, value: Any) -> None:
        if isinstance(value, (tuple, list)):
            for item in value:
                visit(name, item)
            return
        for inner in ("base",):  # TensorWrapper (triton.reinterpret), TensorDescriptor
            if hasattr(value, inner) and not hasattr(value, "untyped_storage"):
                visit(name, getattr(value, inner))
                return
        span = _storage_range(value)
        if span is not None:
            out.append((*span, name))

    for name, value in arguments.items():
        visit(name, value)
    return out


# the live tensors' storages the last look-up found (see _Guard._widen)
_last_live: list[tuple[int, int, str]] = []


def _live_storage_ranges() -> list[tuple[int, int, str]]:
    """Every CPU tensor storage alive in the process (a kernel may load pointers to any of them)."""
    import torch

    seen: dict[int, tuple[int, int, str]] = {}
    # isinstance asks some objects for their class, and a deprecated alias warns when asked (torch.distributed's
    # reduce_op): nothing of it may reach the file's output
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for obj in gc.get_objects():
            try:
                if not isinstance(obj, torch.Tensor):
                    continue
            except Exception:  # noqa: BLE001 - an object whose class cannot be asked for is no tensor
                continue
            span = _storage_range(obj)
            if span is not None and span[0] not in seen:
                seen[span[0]] = (*span, "")
    return list(seen.values())


class _Guard:
    def __init__(self, arguments: dict[str, Any]) -> None:
        self.ranges = sorted(_argument_ranges(arguments))
        self.widened = (
            0  # 1: the last look-up's live tensors taken in; 2: looked up for this launch
        )
        self.first: StrayAccess | None = None
        self.count = 0
        self._index()

    def _index(self) -> None:
        """The ranges' starts and ends as arrays (a search per lane) and the starts as a list (a bisection)."""
        self._starts = np.array([r[0] for r in self.ranges], dtype=np.uint64)
        self._ends = np.array([r[1] for r in self.ranges], dtype=np.uint64)
        self._start_list = [r[0] for r in self.ranges]

    def _inside(self, addresses: np.ndarray, size: int) -> np.ndarray:
        if not len(self._starts):
            return np.zeros(addresses.shape, dtype=bool)
        index = np.searchsorted(self._starts, addresses, side="right").astype(np.int64) - 1
        safe = np.clip(index, 0, None)
        return (index >= 0) & (addresses + np.uint64(size) <= self._ends[safe])

    def _widen(self) -> None:
        """Take in the tensors alive in the process: first those the last look-up found (a kernel launched in
        a loop with a pointer table pays for one look-up, not one per launch), then, if an address is still
        outside, a look-up now. A storage freed since only means an access into it goes unflagged."""
        global _last_live
        if self.widened == 0 and _last_live:
            found = _last_live
            self.widened = 1
        else:
            found = _last_live = _live_storage_ranges()
            self.widened = 2
        known = {r[0] for r in self.ranges}
        self.ranges = sorted(self.ranges + [r for r in found if r[0] not in known])
        self._index()

    def _within_one(self, ptrs: np.ndarray, active: np.ndarray, size: int) -> bool:
        """The common case, cheaply: every active lane between the lowest and the highest address of one
        storage (two reductions and a bisection instead of a search per lane)."""
        lanes = ptrs if active.all() else ptrs[active]
        if not lanes.size:
            return True
        low, high = int(lanes.min()), int(lanes.max())
        at = bisect.bisect_right(self._start_list, low) - 1
        return at >= 0 and high + size <= self.ranges[at][1]

    def outside(self, kind: str, addresses: Any, mask: Any, size: int) -> np.ndarray | None:
        """The lanes of this access that reach outside (a bool array of the access's shape), or None when
        every active lane is inside."""
        ptrs = np.asarray(addresses, dtype=np.uint64)
        active = np.ones(ptrs.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
        active = np.broadcast_to(active, ptrs.shape)
        if self._within_one(ptrs, active, size):
            return None
        bad = active & ~self._inside(ptrs, size)
        while bad.any() and self.widened < 2:
            self._widen()
            bad = active & ~self._inside(ptrs, size)
        if not bad.any():
            return None
        self.count += 1
        if self.first is None:
            self.first = self._describe(kind, ptrs, bad, active, size)
        return bad

    def _describe(self, kind, ptrs, bad, active, size: int) -> StrayAccess:
        from triton.runtime import interpreter as interp

        address = int(ptrs[bad].flat[0])
        named = [r for r in self.ranges if r[2]]
        where = "at an address no argument is near"
        if named:
            start, end, name = min(
                named, key=lambda r: min(abs(address - r[0]), abs(address - (r[1] - 1)))
            )
            if address < start:
                where = f"{start - address} bytes before the start of `{name}`"
            else:
                where = f"at byte {address - start} of `{name}`, which holds {end - start} bytes"
        home, outside_home = _home(named, ptrs[active], size)
        path, line = _kernel_line()
        program = tuple(int(i) for i in getattr(interp.interpreter_builder, "grid_idx", ()) or ())
        return StrayAccess(
            kind,
            path,
            line,
            program,
            int(bad.sum()),
            int(active.sum()),
            where,
            0,
            home,
            outside_home,
        )

    def result(self) -> StrayAccess | None:
        if self.first is None:
            return None
        return dataclasses.replace(self.first, accesses=self.count)


def _home(
    named: list[tuple[int, int, str]], addresses: np.ndarray, size: int
) -> tuple[str | None, int]:
    """The argument the access is of, and how many of its active lanes lie outside it (those inside another
    tensor included, which no check by address can tell from a legitimate access to that tensor). The access's
    first active lane decides (a block that runs past its tensor's end starts inside it; the tensor after it in
    memory may hold more of the lanes); where no argument holds that lane, the one holding most lanes."""
    if not addresses.size:
        return None, 0

    def inside(start: int, end: int) -> np.ndarray:
        return (addresses >= start) & (addresses + np.uint64(size) <= end)

    first = int(addresses.flat[0])
    for start, end, name in named:
        if start <= first and first + size <= end:
            return name, int(addresses.size - inside(start, end).sum())
    best: tuple[int, str] | None = None
    for start, end, name in named:
        count = int(inside(start, end).sum())
        if count and (best is None or count > best[0]):
            best = (count, name)
    return (best[1], int(addresses.size) - best[0]) if best else (None, 0)


def _kernel_line() -> tuple[str | None, int | None]:
    """The innermost frame of the user's (or a library's) code: the kernel line the interpreter is at."""
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if not (
            path.startswith(_TRITON_DIR) or path.startswith(_IRSCOPE_DIR) or path.startswith("<")
        ):
            return path, frame.f_lineno
        frame = frame.f_back
    return None, None


@contextlib.contextmanager
def bounds_guard(arguments: dict[str, Any]) -> Iterator[_Guard]:
    """Check every load, store and atomic of the interpreter's builder while the block runs; yields the guard,
    whose `result()` is the first access that reached outside (None when none did)."""
    from triton.runtime import interpreter as interp

    builder = interp.interpreter_builder
    cls = type(builder)
    guard = _Guard(arguments)

    def width(handle) -> int:
        return max(1, handle.get_element_ty().primitive_bitwidth // 8)

    def narrowed(mask, bad):
        return interp.TensorHandle(np.asarray(mask.data, dtype=bool) & ~bad, mask.dtype)

    def masked_load(ptrs, mask, other, *args, **kwargs):
        bad = guard.outside("load", ptrs.data, mask.data, width(ptrs))
        if bad is not None:
            mask = narrowed(mask, bad)
        return cls.create_masked_load(builder, ptrs, mask, other, *args, **kwargs)

    def masked_store(ptrs, value, mask, *args, **kwargs):
        bad = guard.outside("store", ptrs.data, mask.data, width(ptrs))
        if bad is not None:
            mask = narrowed(mask, bad)
        return cls.create_masked_store(builder, ptrs, value, mask, *args, **kwargs)

    def atomic_rmw(op, ptr, val, mask, *args, **kwargs):
        bad = guard.outside("atomic", ptr.data, mask.data, width(ptr))
        if bad is not None:
            mask = narrowed(mask, bad)
        return cls.create_atomic_rmw(builder, op, ptr, val, mask, *args, **kwargs)

    def atomic_cas(ptr, cmp, val, *args, **kwargs):
        if guard.outside("atomic", ptr.data, None, width(ptr)) is not None:
            # no mask to narrow: the launch stops here (said as the interpreter's failure)
            raise MemoryError(guard.first.describe() if guard.first else "atomic out of bounds")
        return cls.create_atomic_cas(builder, ptr, cmp, val, *args, **kwargs)

    with memory_ops_replaced(builder, masked_load, masked_store, atomic_rmw, atomic_cas):
        yield guard
