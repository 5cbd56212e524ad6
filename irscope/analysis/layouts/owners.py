"""Which warp, lane and register of a CTA hold each element of a TTGIR tensor.

A TTGIR distributed layout (`#ttg.blocked<...>`, `#ttg.slice<...>`, MMA layouts, linear layouts) says
how a tensor's elements are spread over the threads of a program. Triton turns every one of them into
a *linear layout*: a map from the bits of (register, lane, warp) to tensor coordinates, where each bit
contributes one basis vector and the bases of the set bits are XOR-ed together. This module does the
same in plain Python for `#blocked` and `#slice` layouts (exactly Triton's construction, any rank,
including tensors smaller than one layout tile, which broadcast over lanes and warps, and larger ones,
which wrap around into more registers). Other layouts are read through Triton's own linear-layout
machinery when this Triton version exposes it to Python (see `triton_compat.ttgir_linear_layouts`);
otherwise they are reported as not analysed, never guessed.

Layout attributes are read from TTGIR text in `layout_parse`; the global accesses of a TTGIR module, with
their layouts, in `ttgir_accesses`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

# ---------------------------------------------------------------------------------------------- layouts


@dataclass(frozen=True)
class BlockedLayout:
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]  # fastest-varying dimension first

    @property
    def rank(self) -> int:
        return len(self.order)

    def describe(self) -> str:
        return (
            f"blocked: sizePerThread {list(self.size_per_thread)}, threadsPerWarp "
            f"{list(self.threads_per_warp)}, warpsPerCTA {list(self.warps_per_cta)}, order {list(self.order)}"
        )


@dataclass(frozen=True)
class SliceLayout:
    dim: int
    parent: Any  # a layout

    def describe(self) -> str:
        return f"slice (dim {self.dim}) of {describe_layout(self.parent)}"


@dataclass(frozen=True)
class LinearLayoutAttr:
    """`#ttg.linear<{register = [...], lane = [...], warp = [...], block = [...]}>`: the bases written out."""

    register: tuple[tuple[int, ...], ...]
    lane: tuple[tuple[int, ...], ...]
    warp: tuple[tuple[int, ...], ...]

    def describe(self) -> str:
        register, lane, warp = map(_bases_text, (self.register, self.lane, self.warp))
        return f"linear: register {register}, lane {lane}, warp {warp}"


def _bases_text(bases) -> str:
    return "[" + ", ".join("[" + ", ".join(map(str, b)) + "]" for b in bases) + "]"


@dataclass(frozen=True)
class OpaqueLayout:
    """A layout this module does not build itself (MMA, dot operand, linear, ...): its TTGIR text."""

    kind: str  # "nvidia_mma", "dot_op", "linear", ...
    text: str

    def describe(self) -> str:
        return self.kind


def describe_layout(layout: Any) -> str:
    return layout.describe() if layout is not None else "no layout (a scalar)"


@dataclass(frozen=True)
class LinearLayout:
    """Bases of (register, lane, warp) bits → tensor coordinates; element = XOR of the set bits' bases."""

    shape: tuple[int, ...]
    reg_bases: tuple[tuple[int, ...], ...]
    lane_bases: tuple[tuple[int, ...], ...]
    warp_bases: tuple[tuple[int, ...], ...]

    @property
    def num_registers(self) -> int:
        return 1 << len(self.reg_bases)

    @property
    def num_warps(self) -> int:
        return 1 << len(self.warp_bases)

    @staticmethod
    def _free_mask(bases) -> int:
        return sum(1 << i for i, b in enumerate(bases) if not any(b))

    @property
    def free_register_mask(self) -> int:
        """Register bits that do not move the element: registers that repeat another register."""
        return self._free_mask(self.reg_bases)

    @property
    def free_lane_mask(self) -> int:
        """Lane bits whose lanes hold the same elements as the lane with the bit cleared (broadcast)."""
        return self._free_mask(self.lane_bases)

    @property
    def free_warp_mask(self) -> int:
        return self._free_mask(self.warp_bases)

    def contiguous_registers(self) -> int:
        """How many consecutive registers of a thread hold consecutive elements along one dimension
        (the most one vector instruction can move)."""
        if not self.reg_bases:
            return 1
        first = self.reg_bases[0]
        dims = [d for d, v in enumerate(first) if v]
        if len(dims) != 1 or first[dims[0]] != 1:
            return 1
        dim, run = dims[0], 1
        for basis in self.reg_bases:
            if basis == _unit(len(first), dim, run):
                run *= 2
            else:
                break
        return run

    def coordinates(self) -> np.ndarray:
        """int64 array [warp, lane, register, dim]: the tensor coordinates each thread register holds."""
        rank = len(self.shape)

        def table(bases) -> np.ndarray:
            out = np.zeros((1 << len(bases), rank), dtype=np.int64)
            for bit, basis in enumerate(bases):
                size = 1 << bit
                out[size : 2 * size] = out[:size] ^ np.asarray(basis, dtype=np.int64)
            return out

        regs, lanes, warps = table(self.reg_bases), table(self.lane_bases), table(self.warp_bases)
        return warps[:, None, None, :] ^ lanes[None, :, None, :] ^ regs[None, None, :, :]

    def element_index(self) -> np.ndarray:
        """int64 array [warp, lane, register]: the row-major flat index of the element each register holds."""
        coords = self.coordinates()
        strides = np.ones(len(self.shape), dtype=np.int64)
        for d in range(len(self.shape) - 2, -1, -1):
            strides[d] = strides[d + 1] * self.shape[d + 1]
        return (
            (coords * strides).sum(axis=-1)
            if len(self.shape)
            else np.zeros(coords.shape[:3], np.int64)
        )


def _unit(rank: int, dim: int, value: int) -> tuple[int, ...]:
    return tuple(value if d == dim else 0 for d in range(rank))


def blocked_linear_layout(layout: BlockedLayout, shape: tuple[int, ...]) -> LinearLayout:
    """Triton's linear layout of a `#blocked` layout for a tensor of `shape` (powers of two).

    Registers, then lanes, then warps fill the dimensions in `order`; a tensor larger than one CTA tile
    wraps around with more registers (fastest dimension first); a tensor smaller than the tile drops the
    registers beyond it and broadcasts lanes and warps (their bases become zero), largest bases first.
    """
    rank = layout.rank
    if len(shape) != rank:
        raise ValueError(f"a rank-{rank} layout for a rank-{len(shape)} tensor")
    regs: list[tuple[int, ...]] = []
    lanes: list[tuple[int, ...]] = []
    warps: list[tuple[int, ...]] = []
    size = [1] * rank
    for bases, counts in (
        (regs, layout.size_per_thread),
        (lanes, layout.threads_per_warp),
        (warps, layout.warps_per_cta),
    ):
        for dim in layout.order:
            count = counts[dim]
            while count > 1:
                bases.append(_unit(rank, dim, size[dim]))
                size[dim] *= 2
                count //= 2
    for dim in layout.order:  # wrap around: more registers
        while size[dim] < shape[dim]:
            regs.append(_unit(rank, dim, size[dim]))
            size[dim] *= 2
    # Too large: remove (registers) or zero (lanes, warps) the largest bases of each dimension.
    removed_regs: set[int] = set()
    for dim in range(rank):
        excess = size[dim]
        candidates = [
            (basis[dim], kind, index)
            for kind, bases in (("reg", regs), ("lane", lanes), ("warp", warps))
            for index, basis in enumerate(bases)
            if basis[dim] != 0
        ]
        candidates.sort(key=lambda c: -c[0])
        for _value, kind, index in candidates:
            if excess <= shape[dim]:
                break
            if kind == "reg":
                removed_regs.add(index)
            elif kind == "lane":
                lanes[index] = (0,) * rank
            else:
                warps[index] = (0,) * rank
            excess //= 2
    regs = [b for i, b in enumerate(regs) if i not in removed_regs]
    return LinearLayout(tuple(shape), tuple(regs), tuple(lanes), tuple(warps))


def slice_linear_layout(layout: SliceLayout, shape: tuple[int, ...]) -> LinearLayout:
    """A slice layout: the parent's layout for the shape with a size-1 dimension at `dim`, that
    dimension dropped, and registers that no longer move the element removed."""
    parent_shape = tuple(shape[: layout.dim]) + (1,) + tuple(shape[layout.dim :])
    parent = linear_layout(layout.parent, parent_shape)
    if parent is None:
        return None  # type: ignore[return-value]

    def drop(basis):
        return tuple(v for d, v in enumerate(basis) if d != layout.dim)

    regs = tuple(b for b in map(drop, parent.reg_bases) if any(b))
    return LinearLayout(
        tuple(shape), regs, tuple(map(drop, parent.lane_bases)), tuple(map(drop, parent.warp_bases))
    )


def linear_layout(layout: Any, shape: tuple[int, ...]) -> LinearLayout | None:
    """The linear layout of `layout` for `shape`, or None when this module cannot build it."""
    return _linear_layout_cached(layout, tuple(int(s) for s in shape))


@lru_cache(maxsize=256)
def _linear_layout_cached(layout: Any, shape: tuple[int, ...]) -> LinearLayout | None:
    if isinstance(layout, BlockedLayout):
        return blocked_linear_layout(layout, shape)
    if isinstance(layout, SliceLayout):
        return slice_linear_layout(layout, shape)
    if isinstance(layout, LinearLayoutAttr):
        return LinearLayout(shape, layout.register, layout.lane, layout.warp)
    return None
