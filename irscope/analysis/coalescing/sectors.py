"""Coalescing from real addresses: how many 32-byte sectors each warp-level load or store pulls.

For a sample of programs of the captured launch, the interpreter records every load and store with
each element's byte offset and mask (`irscope.analysis.recording`). The op's TTGIR layout says which warp,
lane and register holds each element (`layouts`), and the instruction width in the PTX (or AMDGCN)
says how many consecutive registers one instruction moves per lane. That gives every warp-level
instruction the hardware executes, and for each: the bytes its active lanes ask for, the distinct
32-byte sectors and 128-byte lines they touch, and the ideal (the fewest sectors those bytes fit in).

This module is the driver and what it returns: it records the sampled programs, pairs each access with
its TTGIR op (`coalescing_match`) and its instruction width (`access_widths`), counts the requests
(`coalescing_requests`) and has each access put in words (`coalescing_text`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from irscope.analysis.coalescing.from_ptx import ptx_coalescing
from irscope.analysis.coalescing.match import (
    access_sites,
    derived_pointers,
    matched_ops,
    source_line_lookup,
)
from irscope.analysis.coalescing.requests import (
    Counts,
    alignment_offset,
    count_executions,
    dim_strides,
    lane_dim,
    scalar_layout,
)
from irscope.analysis.coalescing.results import AccessCoalescing, KernelCoalescing
from irscope.analysis.coalescing.siblings import find_siblings
from irscope.analysis.coalescing.text import diagnose
from irscope.analysis.coalescing.width import explain_narrow
from irscope.analysis.layouts.owners import LinearLayout, describe_layout, linear_layout
from irscope.analysis.memory.ttgir import descriptor_ops_by_line, module_threads, ttgir_access_ops
from irscope.analysis.memory.widths import width_for, widths_by_line
from irscope.analysis.recording.trace import launch_grid
from irscope.analysis.recording.work import SampledWork
from irscope.base.compiled import LaunchedKernel
from irscope.base.names import unrecordable

# Where a tensor's storage starts on the GPU: PyTorch's CUDA caching allocator hands out blocks
# aligned to 512 bytes, so only a view's offset into its storage moves its start off alignment.
STORAGE_ALIGNMENT = 512
# Programs recorded per kernel by default (all of them when the grid is no larger): about 0.05 s each.
DEFAULT_PROGRAMS = 8


def sample_programs(
    grid: tuple[int, int, int], limit: int = DEFAULT_PROGRAMS
) -> list[tuple[int, int, int]]:
    """Every program when there are at most `limit`; else the first, the last and evenly spaced ones."""
    total = math.prod(grid)

    def unflatten(i: int) -> tuple[int, int, int]:
        x = i % grid[0]
        y = (i // grid[0]) % grid[1]
        z = i // (grid[0] * grid[1])
        return (x, y, z)

    if total <= limit:
        return [unflatten(i) for i in range(total)]
    if limit <= 1:
        return [unflatten(0)]
    picks = sorted({round(k * (total - 1) / (limit - 1)) for k in range(limit)})
    return [unflatten(i) for i in picks]


def analyze_coalescing(
    comp: LaunchedKernel,
    max_programs: int = DEFAULT_PROGRAMS,
    programs: list[tuple[int, int, int]] | None = None,
    launch=None,
) -> KernelCoalescing:
    """Coalescing of every global load and store of a compilation, from recorded addresses.

    `launch` (default: the compilation's own) picks another launch with the same specialization: the
    code is the same, the addresses are not. Cached on the compilation for the default sampling."""
    if programs is None and max_programs == DEFAULT_PROGRAMS and launch is None:
        return comp.analyses.get(
            "coalescing", lambda: _analyze(comp, max_programs, None, comp.launch)
        )
    return _analyze(comp, max_programs, programs, launch or comp.launch)


def _analyze(comp: LaunchedKernel, max_programs: int, programs, launch) -> KernelCoalescing:
    start = time.perf_counter()
    grid = launch_grid(launch)
    result = KernelCoalescing(
        comp.kernel.name,
        grid,
        [],
        [],
        Counts(),
        Counts(),
        work=SampledWork(read_piece=comp.target.dram_read_bytes),
    )
    if not comp.ok:
        result.error = "the kernel did not compile"
        return result
    not_recordable = unrecordable(comp.kernel.language)
    if not_recordable is not None and not comp.target.is_nvidia:
        result.error = not_recordable
        return result
    if launch.origin != "captured":
        result.error = (
            "no addresses: the file does not launch this kernel, so there are no real arguments "
            "to record (add a launch to the file's __main__ code)"
        )
        return result
    if not_recordable is not None:  # no program can be recorded: the addresses come from the PTX
        ptx_coalescing(comp, programs or sample_programs(grid, max_programs), result, launch)
        return result
    ttgir = comp.stage("ttgir")
    line_of = source_line_lookup(comp, "ttgir")
    ops = ttgir_access_ops(ttgir, line_of, comp.kernel.file)
    num_warps, threads = module_threads(ttgir)
    widths = widths_by_line(comp)
    entries: dict[int, AccessCoalescing] = {}
    layouts_cache: dict[tuple, LinearLayout | None] = {}
    unmatched: Counter = Counter()
    layouts_by_site: dict[tuple, set] = defaultdict(set)
    for op in ops:
        layouts_by_site[(op.source_line, op.kind, op.shape)].add(op.layout_text)
    split: set = set()  # sites counted once per layout (matched_ops)
    sites = access_sites(ops)
    derived = derived_pointers(comp, ttgir, ops)
    result.programs = programs or sample_programs(grid, max_programs)
    for pid in result.programs:
        rec = comp.record_program(pid, launch=launch)
        if rec.error and not result.error:
            result.error = f"program {pid}: {rec.error}"
        result.work.add(rec)
        recorded = Counter((a.line, a.kind, tuple(a.shape)) for a in rec.accesses)
        pending = _Executions()
        for access, op in matched_ops(ops, sites, rec.accesses, recorded, split):
            if op is None:
                unmatched[(access.line, access.kind)] += 1
                continue
            access = _named_as_derived(access, derived.get(op.index), rec.regions)
            entry = entries.get(op.index)
            if entry is None:
                entry = entries[op.index] = AccessCoalescing(
                    op.source_line,
                    op.kind,
                    op.op,
                    op.index,
                    access.param,
                    op.shape,
                    access.dtype or op.elem_type,
                    access.elem_bytes,
                    layout=describe_layout(op.layout),
                    threads_per_warp=threads,
                )
                entry.width_bytes = width_for(widths, op, ops, access.elem_bytes)
            entry.executions += 1
            key = (op.index, op.shape)
            if key not in layouts_cache:
                layout = None
                if op.layout is None:
                    layout = scalar_layout(num_warps, threads)
                else:
                    layout = linear_layout(op.layout, op.shape)
                    if layout is None:  # an MMA layout, or a slice of one: Triton builds it (3.6+)
                        layout = comp.triton_layouts().get(op.index)
                layouts_cache[key] = layout
            layout = layouts_cache[key]
            if layout is None:
                entry.analysed = False
                entry.reason = (
                    f"layout {describe_layout(op.layout)} not analysed: this Triton does not expose "
                    f"its linear layout to Python"
                )
                continue
            base = 0
            region = rec.regions.get(access.param) if access.param else None
            if region is not None:
                base = (region.base - region.start) % STORAGE_ALIGNMENT
            addresses = np.asarray(access.byte_offsets, dtype=np.int64) + base
            vector = max(1, (entry.width_bytes or access.elem_bytes) // access.elem_bytes)
            pending.add(entry, op, layout, vector, access.elem_bytes, addresses, access.mask)
            if not entry.dim_strides:
                entry.sample = (addresses, access.mask, op.layout, vector)
                entry.dim_strides = dim_strides(access.byte_offsets, access.mask)
                entry.lane_dim = lane_dim(layout)
            offset = alignment_offset(addresses, access.mask)
            if offset is not None:
                entry.alignment_offsets[offset] += 1
        pending.count()
    for (line, kind, shape), texts in sorted(
        layouts_by_site.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1])
    ):
        if len(texts) > 1 and (line, kind, shape) in split:
            result.notes.append(
                f"line {line}: the compiler loads or stores it once in each of {len(texts)} layouts "
                f"({', '.join(sorted(texts))}), and each runs: irscope counts every one"
            )
        elif len(texts) > 1:
            result.notes.append(
                f"line {line}: the {kind}s the compiler made of it (inlined or pipelined copies) have "
                f"different layouts ({', '.join(sorted(texts))}); irscope counts all with the first"
            )
    result.accesses = sorted(entries.values(), key=lambda e: (e.source_line or 0, e.stage_line))
    # adjacent fields read by separate loads: the group's traffic is what counts
    find_siblings(result.accesses)
    for entry in result.accesses:
        if entry.kind == "load":
            result.loads.add(entry.counts)
        elif entry.kind == "store":
            result.stores.add(entry.counts)
        diagnose(entry)
    explain_narrow(result.accesses, comp)  # narrow accesses: the argument that kept them narrow
    through_descriptor = (
        descriptor_ops_by_line(ttgir, line_of, comp.kernel.file) if unmatched else {}
    )
    for (line, kind), n in sorted(unmatched.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1])):
        if (line, kind) in through_descriptor:
            result.notes.append(
                f"line {line}: {n} {kind}(s) through a tensor descriptor ({through_descriptor[line, kind]}: "
                f"the whole tile is copied, no thread issues these addresses): not counted in coalescing"
            )
        else:
            result.notes.append(
                f"line {line}: {n} {kind}(s) found no matching TTGIR op (not counted)"
            )
    if any(not e.analysed for e in result.accesses):
        result.notes.append("some accesses were not analysed (see their reason)")
    result.seconds = time.perf_counter() - start
    return result


@dataclasses.dataclass
class _Run:
    """Executions of one op in one program, waiting to be counted together."""

    entry: AccessCoalescing
    op: Any
    layout: LinearLayout
    vector: int
    elem_bytes: int
    addresses: list = dataclasses.field(default_factory=list)
    masks: list = dataclasses.field(default_factory=list)

    def count(self) -> None:
        active = (
            None
            if all(m is None for m in self.masks)
            else np.stack(
                [
                    np.ones(a.shape, bool) if m is None else m
                    for a, m in zip(self.addresses, self.masks)
                ]
            )
        )
        batch = count_executions(
            np.stack(self.addresses),
            active,
            self.elem_bytes,
            self.layout,
            self.vector,
            self.op.kind,
            want_picture=True,
            op=self.op.op,
        )
        entry = self.entry
        entry.counts.add(batch.counts)
        entry.lane_strides.update(batch.lane_strides)
        if batch.worst is not None and (
            entry.picture is None
            or batch.worst.sectors - batch.worst.ideal_sectors
            > entry.picture.sectors - entry.picture.ideal_sectors
        ):
            entry.picture = batch.worst


class _Executions:
    """One program's executions of each op, counted together (count_executions: one NumPy pass for a loop's
    trips); an op's executions are counted in order, in runs of at most MAX_ELEMENTS addresses. An op's
    shape, element size and vector width are its own, so its executions stack."""

    MAX_ELEMENTS = 1 << 21

    def __init__(self) -> None:
        self.runs: dict[int, _Run] = {}  # by the op's TTGIR index

    def add(self, entry, op, layout, vector: int, elem_bytes: int, addresses, mask) -> None:
        run = self.runs.get(op.index)
        if run is not None and (len(run.addresses) + 1) * addresses.size > self.MAX_ELEMENTS:
            self.runs.pop(op.index).count()
            run = None
        if run is None:
            run = self.runs[op.index] = _Run(entry, op, layout, vector, elem_bytes)
        run.addresses.append(addresses.reshape(-1))
        run.masks.append(None if mask is None else np.asarray(mask, bool).reshape(-1))

    def count(self) -> None:
        for run in self.runs.values():
            run.count()
        self.runs = {}


def _named_as_derived(access, param: str | None, regions: dict):
    """The access named after the argument its pointer is computed from, where that argument's own elements hold
    every address it touched (a slice of a tensor passed beside it: the addresses alone pick the slice), with its
    offsets counted from that argument; otherwise as recorded."""
    mine, theirs = (
        regions.get(access.param) if access.param else None,
        regions.get(param) if param else None,
    )
    if mine is None or theirs is None or param == access.param:
        return access
    absolute = np.asarray(access.byte_offsets, dtype=np.int64) + mine.base
    active = absolute if access.mask is None else absolute[np.asarray(access.mask, bool)]
    if not theirs.holds(active).all():
        return access
    offsets = absolute - theirs.base
    return dataclasses.replace(
        access, param=param, byte_offsets=offsets, offsets=offsets // access.elem_bytes
    )


def report_fields(comp: LaunchedKernel) -> dict[str, Any]:
    """What `irscope report` adds for one compilation: `coalescing` (one row per global load/store) and
    `coalescing_totals` (kernel-wide loads and stores, the programs sampled, notes)."""
    try:
        result = analyze_coalescing(comp)
    except Exception as exc:  # an analysis failure must not take the report down with it
        return {"coalescing": [], "coalescing_totals": {"error": f"{type(exc).__name__}: {exc}"}}
    return {"coalescing": result.to_json(), "coalescing_totals": result.totals_json()}
