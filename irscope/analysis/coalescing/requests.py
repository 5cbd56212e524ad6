"""Coalescing's counting: the warp-level requests one executed load or store makes, lane by lane.

Counting follows what Nsight Compute measures as `l1tex__t_{sectors,requests}_pipe_lsu_mem_global_op_{ld,st}`:
one request per warp-level instruction that has at least one active lane (a tensor op lowered to
several vector instructions per thread gives several requests; an instruction whose lanes are all
masked off gives none), and the distinct sectors its active lanes touch. As Triton lowers them:
loads are issued by every lane, including lanes that hold a broadcast copy of another lane's
elements; stores, atomics and `cp.async` copies to shared memory (`ttg.async_copy_global_to_local`) are
issued only by the first of such copies (Triton predicates the others off: fla's `kernel_h` loads one
float a program with `@%p cp.async` where `%p` is `tid % 64 == 0`, and the H100 counted one sector, not
one per warp), and registers that repeat another register are moved once.

Also what one execution's addresses show beyond the count: the byte step along each dimension, the
dimension lanes step along, how far the first byte sits off a sector. Apart from the driver
(`coalescing`) because all of it needs only addresses and a layout: the what-if recounts
(`coalescing_text`) and the tests call it on addresses of their own.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from irscope.analysis.layouts.owners import LinearLayout
from irscope.base.target import SECTOR_BYTES

LINE_BYTES = 128
ASYNC_COPY = "ttg.async_copy_global_to_local"


@dataclass
class Counts:
    """Totals over warp-level instructions (requests)."""

    requests: int = 0
    sectors: int = 0
    lines: int = 0
    bytes_requested: int = 0  # what the active lanes ask for (a broadcast element counts per lane)
    unique_bytes: int = 0  # distinct bytes per request, summed
    ideal_sectors: int = 0  # per request: the fewest sectors its distinct bytes fit in, summed
    active_lanes: int = 0  # summed over requests
    instructions: int = (
        0  # warp-level executions, those with every lane masked off (no request) included
    )

    def add(self, other: "Counts") -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def sectors_per_request(self) -> float | None:
        return self.sectors / self.requests if self.requests else None

    @property
    def ideal_sectors_per_request(self) -> float | None:
        return self.ideal_sectors / self.requests if self.requests else None

    @property
    def efficiency(self) -> float | None:
        """Ideal ÷ actual sectors: 1.0 when every sector moved is needed."""
        return self.ideal_sectors / self.sectors if self.sectors else None

    @property
    def excess_bytes(self) -> int:
        return self.sectors * SECTOR_BYTES - self.unique_bytes

    @property
    def cost(self) -> float | None:
        """How many times the necessary bytes the memory system moves."""
        return self.sectors / self.ideal_sectors if self.ideal_sectors else None

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "sectors": self.sectors,
            "lines": self.lines,
            "bytes_requested": self.bytes_requested,
            "excess_bytes": self.excess_bytes,
            "sectors_per_request": rounded(self.sectors_per_request),
            "ideal_sectors_per_request": rounded(self.ideal_sectors_per_request),
            "efficiency": rounded(self.efficiency, 3),
        }


def rounded(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


@dataclass
class WarpPicture:
    """One warp-level instruction, lane by lane: what the TUI draws."""

    warp: int
    register: int  # first register of the vector group
    lanes: list[
        tuple[int, int] | None
    ]  # per lane: (first byte address, bytes) or None when inactive
    sectors: int
    ideal_sectors: int
    lines: int
    bytes_requested: int

    def lane_sectors(self) -> list[tuple[int, ...] | None]:
        out: list[tuple[int, ...] | None] = []
        for lane in self.lanes:
            if lane is None:
                out.append(None)
            else:
                start, size = lane
                out.append(
                    tuple(range(start // SECTOR_BYTES, (start + size - 1) // SECTOR_BYTES + 1))
                )
        return out


@dataclass
class RequestBatch:
    counts: Counts
    worst: WarpPicture | None
    lane_strides: Counter


def scalar_layout(num_warps: int, threads_per_warp: int) -> LinearLayout:
    """A scalar pointer: every thread of every warp holds the one element."""
    return LinearLayout(
        (), (), ((),) * int(math.log2(threads_per_warp)), ((),) * int(math.log2(num_warps))
    )


def count_requests(
    byte_addresses: np.ndarray,
    active: np.ndarray | None,
    elem_bytes: int,
    layout: LinearLayout,
    vector: int,
    kind: str,
    want_picture: bool = True,
    op: str = "",
) -> RequestBatch:
    """Warp-level instructions of one executed load/store and what each touches.

    `byte_addresses`/`active`: per element of the access (row-major, the access's shape), the byte
    address (relative to a 512-byte aligned base) and whether its lane is on. `vector`: elements each
    lane moves per instruction (the PTX width ÷ the element size). `kind`: "load", "store" or "atomic";
    `op`: the TTGIR op (an async copy is predicated like a store).
    """
    addresses = np.asarray(byte_addresses, dtype=np.int64).reshape(1, -1)
    on = None if active is None else np.asarray(active, bool).reshape(1, -1)
    return count_executions(addresses, on, elem_bytes, layout, vector, kind, want_picture, op)


def count_executions(
    byte_addresses: np.ndarray,
    active: np.ndarray | None,
    elem_bytes: int,
    layout: LinearLayout,
    vector: int,
    kind: str,
    want_picture: bool = True,
    op: str = "",
) -> RequestBatch:
    """count_requests for several executions of one op at once (a loop's trips): `byte_addresses` and
    `active` are [execution, element]. The counts and lane strides are the executions' sums; the picture is
    the one count_requests would give for the first execution that wastes the most sectors (one NumPy pass
    instead of one per trip: fla's recurrences run their loads 64 times a program)."""
    addresses = np.asarray(byte_addresses, dtype=np.int64)
    executions = addresses.shape[0]
    addresses = addresses.reshape(executions, -1)
    on = (
        np.ones(addresses.shape, bool)
        if active is None
        else np.asarray(active, bool).reshape(executions, -1)
    )
    index = layout.element_index()  # [warp, lane, register]
    warps, lanes, registers = index.shape
    vector = max(1, min(int(vector), registers, layout.contiguous_registers()))
    free_regs = layout.free_register_mask
    group_starts = [r for r in range(0, registers, vector) if r & free_regs == 0]
    groups = len(group_starts)
    regs = np.array([r + v for r in group_starts for v in range(vector)], dtype=np.int64)
    idx = index[:, :, regs].reshape(warps, lanes, groups, vector)
    addr = addresses[:, idx]  # [execution, warp, lane, group, element]
    act = on[:, idx]
    # Triton predicates these off in lanes and warps that repeat others
    if kind != "load" or op == ASYNC_COPY:
        lane_ok = (np.arange(lanes) & layout.free_lane_mask) == 0
        warp_ok = (np.arange(warps) & layout.free_warp_mask) == 0
        act &= (warp_ok[:, None] & lane_ok[None, :])[None, :, :, None, None]
    # per request: [execution, warp, group] × (lane, element)
    rows = executions * warps * groups
    addr_r = addr.transpose(0, 1, 3, 2, 4).reshape(rows, lanes * vector)
    act_r = act.transpose(0, 1, 3, 2, 4).reshape(rows, lanes * vector)
    issued = act_r.any(axis=1)
    addr_r, act_r = addr_r[issued], act_r[issued]
    counts = Counts(instructions=int(issued.size))
    if not len(addr_r):
        return RequestBatch(counts, None, Counter())

    def distinct(values: np.ndarray, phases: int = 1) -> np.ndarray:
        """Per request, the distinct values of its active lanes, counted in each of `phases` equal runs of
        lanes and summed (a value two phases share counts in each)."""
        marked = np.where(act_r, values, -1).reshape(len(values), phases, -1)
        marked.sort(axis=2)
        new = np.ones(marked.shape, bool)
        new[:, :, 1:] = marked[:, :, 1:] != marked[:, :, :-1]
        return (new & (marked >= 0)).sum(axis=(1, 2))

    sectors = distinct(
        addr_r // SECTOR_BYTES, copy_phases(lanes, vector * elem_bytes) if op == ASYNC_COPY else 1
    )
    lines_ = distinct(addr_r // LINE_BYTES)
    unique = distinct(addr_r) * elem_bytes
    ideal = -(-unique // SECTOR_BYTES)
    lane_on = act.transpose(0, 1, 3, 2, 4).reshape(rows, lanes, vector).any(axis=2)[issued]
    counts.requests = int(issued.sum())
    counts.sectors = int(sectors.sum())
    counts.lines = int(lines_.sum())
    counts.bytes_requested = int(act_r.sum()) * elem_bytes
    counts.unique_bytes = int(unique.sum())
    counts.ideal_sectors = int(ideal.sum())
    counts.active_lanes = int(lane_on.sum())

    # byte distance between neighbouring active lanes (first element of each lane's vector)
    first = addr.transpose(0, 1, 3, 2, 4).reshape(rows, lanes, vector)[issued][:, :, 0]
    pair_on = lane_on[:, 1:] & lane_on[:, :-1]
    strides = (
        Counter((first[:, 1:] - first[:, :-1])[pair_on].tolist()) if pair_on.any() else Counter()
    )

    picture = None
    if want_picture:
        waste = sectors - ideal
        positions = np.flatnonzero(issued)
        # the first execution with the most waste, and in it what count_requests would draw
        worst_execution = positions[waste == waste.max()].min() // (warps * groups)
        mine = positions // (warps * groups) == worst_execution
        pick = int(np.flatnonzero(mine)[np.argmax((waste * 1000 + lane_on.sum(axis=1))[mine])])
        execution, rest = divmod(int(positions[pick]), warps * groups)
        warp, group = divmod(rest, groups)
        lane_list: list[tuple[int, int] | None] = []
        for lane in range(lanes):
            on_elems = act[execution, warp, lane, group]
            if not on_elems.any():
                lane_list.append(None)
            else:
                a = addr[execution, warp, lane, group][on_elems]
                lane_list.append((int(a.min()), int(a.max() - a.min()) + elem_bytes))
        picture = WarpPicture(
            warp,
            group_starts[group],
            lane_list,
            int(sectors[pick]),
            int(ideal[pick]),
            int(lines_[pick]),
            int(act_r[pick].sum()) * elem_bytes,
        )
    return RequestBatch(counts, picture, strides)


def copy_phases(lanes: int, lane_bytes: int) -> int:
    """How many phases Nsight Compute counts a cp.async's sectors in: one per 128 bytes of lane data (8 lanes
    of 16-byte copies), each phase's distinct sectors summed, so a sector two phases both touch counts twice.
    Tutorial 09 at 32x32x32: four masked rows wrapped to the same two sectors, which the warp's distinct
    sectors count as 2 and the H100 measured as 8 (2 in each of 4 phases)."""
    return max(1, lanes // max(1, min(lanes, LINE_BYTES // max(1, lane_bytes))))


def dim_strides(byte_offsets: np.ndarray, mask: np.ndarray | None) -> dict[int, int]:
    """Per tensor dimension, the most common byte step between neighbouring elements (active ones)."""
    offs = np.asarray(byte_offsets, dtype=np.int64)
    out = {}
    for dim in range(offs.ndim):
        if offs.shape[dim] < 2:
            continue
        diff = np.diff(offs, axis=dim)
        if mask is not None:
            m = np.asarray(mask, bool)
            both = np.take(m, range(1, m.shape[dim]), axis=dim) & np.take(
                m, range(0, m.shape[dim] - 1), axis=dim
            )
            diff = diff[both]
        values = Counter(np.asarray(diff).reshape(-1).tolist())
        if values:
            out[dim] = values.most_common(1)[0][0]
    return out


def lane_dim(layout: LinearLayout) -> int | None:
    for basis in layout.lane_bases:
        for dim, value in enumerate(basis):
            if value:
                return dim
    return None


def alignment_offset(addresses: np.ndarray, mask: np.ndarray | None) -> int | None:
    flat = addresses.reshape(-1)
    if mask is not None:
        flat = flat[np.asarray(mask, bool).reshape(-1)]
    if not flat.size:
        return None
    return int(flat.min() % SECTOR_BYTES)
