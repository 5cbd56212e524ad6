"""Interpreter values as irscope shows them: tensors with shape, dtype and numbers; pointers as
(argument tensor, element offsets) instead of raw addresses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Region:
    """The memory of one tensor argument of the launch (on the copy the recording runs on)."""

    param: str
    base: int  # data_ptr of the tensor (its first element)
    start: int  # first byte of its storage
    end: int  # one past the last byte of its storage
    elem_bytes: int
    numel: int
    shape: tuple[int, ...]
    dtype: str
    strides: tuple[int, ...] | None = None  # in elements; None: contiguous

    def holds(self, addresses: np.ndarray) -> np.ndarray:
        """A bool array: which addresses fall in a byte of one of this view's own elements, not merely in its
        storage (`q, k = qk.unbind(0)` share one, and so do `x[:, :D]` and `x[:, D:]`, whose rows interleave)."""
        index = (np.asarray(addresses).astype(np.int64) - np.int64(self.base)) // self.elem_bytes
        if self.numel <= 0:
            return np.zeros(index.shape, dtype=bool)
        if self.strides is None:
            return (index >= 0) & (index < self.numel)
        rest = np.where(index >= 0, index, -1)
        steps = sorted(
            ((n, st) for n, st in zip(self.shape, self.strides) if n > 1 and st > 0),
            key=lambda d: -d[1],
        )
        for size, stride in steps:  # peel the outer dimensions off: an element leaves nothing over
            rest = np.where(rest >= 0, rest - np.minimum(rest // stride, size - 1) * stride, rest)
        return rest == 0


class AddressMap:
    """Turns raw interpreter addresses back into (argument, element offset)."""

    def __init__(self, regions: list[Region]):
        self.regions = regions

    def region_of(self, addresses: np.ndarray, mask: np.ndarray | None = None) -> Region | None:
        """The argument the addresses belong to: of the views whose own elements hold the first active lane, the
        one that holds the most lanes (of two that hold as many, the one with fewer elements: the exact view
        rather than a tensor enclosing it); when none does, the storage that holds it, or the nearest argument
        below it."""
        if not self.regions:
            return None
        flat = np.asarray(addresses).reshape(-1)
        if mask is not None:
            active = flat[np.asarray(mask).reshape(-1)]
            flat = active if active.size else flat
        if flat.size == 0:
            return None
        probe = int(flat[0])
        first = [
            r for r in self.regions if r.holds(flat[:1])[0]
        ]  # masked-off lanes may stray into a neighbour
        if first:
            return max(first, key=lambda r: (int(r.holds(flat).sum()), -r.numel))
        for region in self.regions:
            if region.start <= probe < region.end:
                return region
        below = [r for r in self.regions if r.base <= probe]
        return (
            max(below, key=lambda r: r.base) if below else min(self.regions, key=lambda r: r.base)
        )

    def outside(
        self, addresses: np.ndarray, elem_bytes: int, mask: np.ndarray | None
    ) -> np.ndarray:
        """A bool array: lanes that are active and touch memory no argument owns."""
        addr = np.asarray(addresses).astype(np.uint64)
        bad = np.ones(addr.shape, dtype=bool)
        for region in self.regions:
            bad &= ~((addr >= region.start) & (addr + np.uint64(elem_bytes) <= region.end))
        if mask is not None:
            bad &= np.broadcast_to(np.asarray(mask, dtype=bool), bad.shape)
        return bad


def byte_offsets(addresses: np.ndarray, region: Region | None) -> np.ndarray:
    base = region.base if region is not None else 0
    return np.asarray(addresses).astype(np.int64) - np.int64(base)


@dataclass
class Value:
    """One local variable at one step.

    kind: "tensor" (block of numbers), "scalar", "pointer" (data = element offsets into `param`),
    "constexpr" (a compile-time value), "other" (shown as text).
    """

    kind: str
    dtype: str = ""
    shape: tuple[int, ...] = ()
    data: np.ndarray | None = None
    param: str | None = None
    text: str = ""
    _stats: dict | None = field(default=None, repr=False, compare=False)

    @property
    def is_block(self) -> bool:
        return bool(self.shape)

    @property
    def is_mask(self) -> bool:
        return self.dtype == "int1" and self.data is not None

    def stats(self) -> dict[str, Any]:
        """min, max, mean, and counts of NaN and Inf, over the numbers of a tensor (empty otherwise)."""
        if self._stats is None:
            self._stats = {}
            if self.data is not None and self.data.size and self.data.dtype.kind in "biuf":
                data = self.data.astype(np.float64) if self.data.dtype.kind == "b" else self.data
                finite = np.isfinite(data) if data.dtype.kind == "f" else None
                numbers = data[finite] if finite is not None else data
                self._stats = {
                    "min": numbers.min().item() if numbers.size else float("nan"),
                    "max": numbers.max().item() if numbers.size else float("nan"),
                    "mean": numbers.astype(np.float64).mean().item()
                    if numbers.size
                    else float("nan"),
                    "nan": int(np.isnan(data).sum()) if finite is not None else 0,
                    "inf": int(np.isinf(data).sum()) if finite is not None else 0,
                }
        return self._stats

    def summary(self) -> str:
        """One short line: `fp32[1024] min 0.01 max 0.99`, `x_ptr + [1024 .. 2047]`, `42`."""
        if self.kind in ("constexpr", "other"):
            return self.text
        if self.kind == "pointer":
            offsets = self.data
            where = self.param or "?"
            if offsets is None or offsets.size == 0:
                return f"{where} + ?"
            if not self.is_block:
                return f"{where} + {int(offsets.reshape(-1)[0])}"
            return f"{where} + [{int(offsets.min())} .. {int(offsets.max())}] {_shape_text(self.shape)}"
        if not self.is_block:
            return _number_text(self.data.reshape(-1)[0]) if self.data is not None else self.text
        head = f"{self.dtype}{_shape_text(self.shape)}"
        if self.data is None and self.text:
            return self.text
        if self.is_mask:
            on = int(self.data.sum())
            return f"{head} {on}/{self.data.size} on"
        st = self.stats()
        if not st:
            return head
        text = f"{head} min {_number_text(st['min'])} max {_number_text(st['max'])}"
        if st["nan"]:
            text += f" NaN×{st['nan']}"
        if st["inf"]:
            text += f" Inf×{st['inf']}"
        return text


def _shape_text(shape: tuple[int, ...]) -> str:
    return "[" + ",".join(str(s) for s in shape) + "]"


def _number_text(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.6g}"
    return str(int(x)) if isinstance(x, (int, np.integer)) else str(x)


def as_numbers(data: np.ndarray, dtype: str) -> np.ndarray:
    """Interpreter storage → numbers to show (bf16 is stored as its 16 high bits)."""
    if dtype == "bf16":
        return (data.astype(np.uint32) << 16).view(np.float32)
    return data


def describe_constant(value: Any) -> Value:
    """A compile-time value (a constexpr parameter)."""
    data = np.array([value]) if isinstance(value, (bool, int, float)) else None
    return Value("constexpr", type(value).__name__, (), data, text=repr(value))
