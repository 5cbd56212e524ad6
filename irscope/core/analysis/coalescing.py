"""Coalescing from real addresses: how many 32-byte sectors each warp-level load or store pulls.

For a sample of programs of the captured launch, the interpreter records every load and store with
each element's byte offset and mask (`irscope.core.interp`). The op's TTGIR layout says which warp,
lane and register holds each element (`layouts`), and the instruction width in the PTX (or AMDGCN)
says how many consecutive registers one instruction moves per lane. That gives every warp-level
instruction the hardware executes, and for each: the bytes its active lanes ask for, the distinct
32-byte sectors and 128-byte lines they touch, and the ideal (the fewest sectors those bytes fit in).

Counting follows what Nsight Compute measures as `l1tex__t_{sectors,requests}_pipe_lsu_mem_global_op_{ld,st}`:
one request per warp-level instruction that has at least one active lane (a tensor op lowered to
several vector instructions per thread gives several requests; an instruction whose lanes are all
masked off gives none), and the distinct sectors its active lanes touch. As Triton lowers them:
loads are issued by every lane, including lanes that hold a broadcast copy of another lane's
elements; stores are issued only by the first of such copies (Triton predicates the others off), and
registers that repeat another register are moved once.
"""

from __future__ import annotations

import functools
import math
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ir import ptx as ir_ptx
from .layouts import LinearLayout, TensorAccessOp, describe_layout, linear_layout, module_threads, \
    ttgir_access_ops

SECTOR_BYTES = 32
LINE_BYTES = 128
# Where a tensor's storage starts on the GPU: PyTorch's CUDA caching allocator hands out blocks
# aligned to 512 bytes, so only a view's offset into its storage moves its start off alignment.
STORAGE_ALIGNMENT = 512
# Programs recorded per kernel by default (all of them when the grid is no larger): about 0.05 s each.
DEFAULT_PROGRAMS = 8


# ---------------------------------------------------------------------------------------------- counting


@dataclass
class Counts:
    """Totals over warp-level instructions (requests)."""

    requests: int = 0
    sectors: int = 0
    lines: int = 0
    bytes_requested: int = 0   # what the active lanes ask for (a broadcast element counts per lane)
    unique_bytes: int = 0      # distinct bytes per request, summed
    ideal_sectors: int = 0     # per request: the fewest sectors its distinct bytes fit in, summed
    active_lanes: int = 0      # summed over requests
    instructions: int = 0      # warp-level executions, those with every lane masked off (no request) included

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
        return {"requests": self.requests, "sectors": self.sectors, "lines": self.lines,
                "bytes_requested": self.bytes_requested, "excess_bytes": self.excess_bytes,
                "sectors_per_request": _round(self.sectors_per_request),
                "ideal_sectors_per_request": _round(self.ideal_sectors_per_request),
                "efficiency": _round(self.efficiency, 3)}


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


@dataclass
class WarpPicture:
    """One warp-level instruction, lane by lane: what the TUI draws."""

    warp: int
    register: int                         # first register of the vector group
    lanes: list[tuple[int, int] | None]   # per lane: (first byte address, bytes) or None when inactive
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
                out.append(tuple(range(start // SECTOR_BYTES, (start + size - 1) // SECTOR_BYTES + 1)))
        return out


@dataclass
class RequestBatch:
    counts: Counts
    worst: WarpPicture | None
    lane_strides: Counter


def scalar_layout(num_warps: int, threads_per_warp: int) -> LinearLayout:
    """A scalar pointer: every thread of every warp holds the one element."""
    return LinearLayout((), (), ((),) * int(math.log2(threads_per_warp)), ((),) * int(math.log2(num_warps)))


def count_requests(byte_addresses: np.ndarray, active: np.ndarray | None, elem_bytes: int, layout: LinearLayout,
                   vector: int, kind: str, want_picture: bool = True) -> RequestBatch:
    """Warp-level instructions of one executed load/store and what each touches.

    `byte_addresses`/`active`: per element of the access (row-major, the access's shape), the byte
    address (relative to a 512-byte aligned base) and whether its lane is on. `vector`: elements each
    lane moves per instruction (the PTX width ÷ the element size). `kind`: "load", "store" or "atomic".
    """
    addresses = np.asarray(byte_addresses, dtype=np.int64).reshape(-1)
    on = np.ones(addresses.shape, bool) if active is None else np.asarray(active, bool).reshape(-1)
    index = layout.element_index()  # [warp, lane, register]
    warps, lanes, registers = index.shape
    vector = max(1, min(int(vector), registers, layout.contiguous_registers()))
    free_regs = layout.free_register_mask
    group_starts = [r for r in range(0, registers, vector) if r & free_regs == 0]
    regs = np.array([r + v for r in group_starts for v in range(vector)], dtype=np.int64)
    idx = index[:, :, regs].reshape(warps, lanes, len(group_starts), vector)
    addr = addresses[idx]
    act = on[idx].copy()
    if kind != "load":  # Triton predicates stores (and atomics) off in lanes and warps that repeat others
        lane_ok = (np.arange(lanes) & layout.free_lane_mask) == 0
        warp_ok = (np.arange(warps) & layout.free_warp_mask) == 0
        act &= (warp_ok[:, None] & lane_ok[None, :])[:, :, None, None]
    # per request: [warp, group] × (lane, element)
    addr_r = addr.transpose(0, 2, 1, 3).reshape(warps * len(group_starts), lanes * vector)
    act_r = act.transpose(0, 2, 1, 3).reshape(warps * len(group_starts), lanes * vector)
    issued = act_r.any(axis=1)
    addr_r, act_r = addr_r[issued], act_r[issued]
    counts = Counts(instructions=int(issued.size))
    if not len(addr_r):
        return RequestBatch(counts, None, Counter())

    def distinct(values: np.ndarray) -> np.ndarray:
        marked = np.where(act_r, values, -1)
        marked.sort(axis=1)
        new = np.ones(marked.shape, bool)
        new[:, 1:] = marked[:, 1:] != marked[:, :-1]
        return (new & (marked >= 0)).sum(axis=1)

    sectors = distinct(addr_r // SECTOR_BYTES)
    lines_ = distinct(addr_r // LINE_BYTES)
    unique = distinct(addr_r) * elem_bytes
    ideal = -(-unique // SECTOR_BYTES)
    lane_on = act.transpose(0, 2, 1, 3).reshape(warps * len(group_starts), lanes, vector).any(axis=2)[issued]
    counts.requests = int(issued.sum())
    counts.sectors = int(sectors.sum())
    counts.lines = int(lines_.sum())
    counts.bytes_requested = int(act_r.sum()) * elem_bytes
    counts.unique_bytes = int(unique.sum())
    counts.ideal_sectors = int(ideal.sum())
    counts.active_lanes = int(lane_on.sum())

    # byte distance between neighbouring active lanes (first element of each lane's vector)
    first = addr.transpose(0, 2, 1, 3).reshape(-1, lanes, vector)[issued][:, :, 0]
    pair_on = lane_on[:, 1:] & lane_on[:, :-1]
    strides = Counter((first[:, 1:] - first[:, :-1])[pair_on].tolist()) if pair_on.any() else Counter()

    picture = None
    if want_picture:
        waste = sectors - ideal
        pick = int(np.argmax(waste * 1000 + lane_on.sum(axis=1)))
        positions = np.flatnonzero(issued)[pick]
        warp, group = divmod(int(positions), len(group_starts))
        lane_list: list[tuple[int, int] | None] = []
        for lane in range(lanes):
            on_elems = act[warp, lane, group]
            if not on_elems.any():
                lane_list.append(None)
            else:
                a = addr[warp, lane, group][on_elems]
                lane_list.append((int(a.min()), int(a.max() - a.min()) + elem_bytes))
        picture = WarpPicture(warp, group_starts[group], lane_list, int(sectors[pick]), int(ideal[pick]),
                              int(lines_[pick]), int(act_r[pick].sum()) * elem_bytes)
    return RequestBatch(counts, picture, strides)


# ---------------------------------------------------------------------------------------------- a kernel


@dataclass
class AccessCoalescing:
    """One load or store of the kernel (a TTGIR op), over every recorded execution."""

    source_line: int | None
    kind: str                      # "load" | "store" | "atomic"
    op: str                        # "tt.load", "ttg.async_copy_global_to_local", ...
    stage_line: int                # 0-based line of the op in the TTGIR
    param: str | None = None       # the pointer argument
    shape: tuple[int, ...] = ()
    dtype: str = ""
    elem_bytes: int = 4
    width_bytes: int | None = None  # per lane per instruction (PTX / AMDGCN)
    layout: str = ""
    threads_per_warp: int = 32
    counts: Counts = field(default_factory=Counts)
    executions: int = 0
    analysed: bool = True
    reason: str = ""               # why not analysed
    picture: WarpPicture | None = None
    lane_strides: Counter = field(default_factory=Counter)
    dim_strides: dict[int, int] = field(default_factory=dict)   # tensor dim -> byte stride between neighbours
    lane_dim: int | None = None    # the tensor dim neighbouring lanes step along
    alignment_offsets: Counter = field(default_factory=Counter)  # per execution: first active byte % 32
    diagnosis: str = ""
    fix: str = ""
    what_if: str = ""              # a recount under the change the fix suggests, where irscope can make one
    cause: str = ""                # "narrow_access" | "lanes_across" | "strided" | "misaligned_start" | "idle_lanes"
    sample: tuple | None = field(default=None, repr=False)  # (addresses, mask, layout object, vector) of one execution

    @property
    def lane_stride_bytes(self) -> int | None:
        return self.lane_strides.most_common(1)[0][0] if self.lane_strides else None

    @property
    def inefficient(self) -> bool:
        eff = self.counts.efficiency
        return eff is not None and eff < 0.9

    def to_json(self) -> dict[str, Any]:
        c = self.counts
        return {"source_line": self.source_line, "op": self.op, "kind": self.kind, "ttgir_line": self.stage_line + 1,
                "param": self.param, "shape": list(self.shape), "dtype": self.dtype, "width_bytes": self.width_bytes,
                "layout": self.layout, "analysed": self.analysed, "reason": self.reason or None,
                "sectors_per_request": _round(c.sectors_per_request),
                "ideal_sectors_per_request": _round(c.ideal_sectors_per_request),
                "efficiency": _round(c.efficiency, 3), "requests": c.requests, "sectors": c.sectors,
                "excess_bytes": c.excess_bytes, "lane_stride_bytes": self.lane_stride_bytes,
                "cause": self.cause or None, "diagnosis": self.diagnosis or None, "fix": self.fix or None, "what_if": self.what_if or None}


@dataclass
class LineCoalescing:
    source_line: int | None
    loads: Counts = field(default_factory=Counts)
    stores: Counts = field(default_factory=Counts)


@dataclass
class KernelCoalescing:
    kernel: str
    grid: tuple[int, int, int]
    programs: list[tuple[int, int, int]]
    accesses: list[AccessCoalescing]
    loads: Counts
    stores: Counts
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    def by_source_line(self) -> list[LineCoalescing]:
        lines: dict[int | None, LineCoalescing] = {}
        for a in self.accesses:
            entry = lines.setdefault(a.source_line, LineCoalescing(a.source_line))
            (entry.stores if a.kind == "store" else entry.loads).add(a.counts) if a.kind != "atomic" else None
        return sorted(lines.values(), key=lambda e: (e.source_line is None, e.source_line or 0))

    def at_line(self, source_line: int | None) -> list[AccessCoalescing]:
        return [a for a in self.accesses if a.source_line == source_line]

    def to_json(self) -> list[dict[str, Any]]:
        return [a.to_json() for a in self.accesses]

    def totals_json(self) -> dict[str, Any]:
        return {"loads": self.loads.to_json(), "stores": self.stores.to_json(),
                "programs": len(self.programs), "grid_programs": math.prod(self.grid),
                "seconds": round(self.seconds, 3), "notes": self.notes, "error": self.error}


def sample_programs(grid: tuple[int, int, int], limit: int = DEFAULT_PROGRAMS) -> list[tuple[int, int, int]]:
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


def analyze_coalescing(comp, max_programs: int = DEFAULT_PROGRAMS, programs: list[tuple[int, int, int]] | None = None,
                       launch=None) -> KernelCoalescing:
    """Coalescing of every global load and store of a compilation, from recorded addresses.

    `launch` (default: the compilation's own) picks another launch with the same specialization: the
    code is the same, the addresses are not. Cached on the compilation for the default sampling."""
    cacheable = programs is None and max_programs == DEFAULT_PROGRAMS and launch is None
    if cacheable and getattr(comp, "_coalescing", None) is not None:
        return comp._coalescing
    result = _analyze(comp, max_programs, programs, launch or comp.launch)
    if cacheable:
        comp.__dict__["_coalescing"] = result
    return result


def _analyze(comp, max_programs: int, programs, launch) -> KernelCoalescing:
    from ..interp import launch_grid, record_program

    start = time.perf_counter()
    grid = launch_grid(launch)
    result = KernelCoalescing(comp.kernel.name, grid, [], [], Counts(), Counts())
    if not comp.ok:
        result.error = "the kernel did not compile"
        return result
    if launch.origin != "captured":
        result.error = ("no addresses: the file does not launch this kernel, so there are no real arguments "
                        "to record (add a launch to the file's __main__ code)")
        return result
    ttgir = comp.stage("ttgir")
    ops = ttgir_access_ops(ttgir, _source_line_of(comp, "ttgir"), comp.kernel.file)
    num_warps, threads = module_threads(ttgir)
    widths = _widths_by_line(comp)
    entries: dict[int, AccessCoalescing] = {}
    layouts_cache: dict[tuple, LinearLayout | None] = {}
    unmatched: Counter = Counter()
    layouts_by_site: dict[tuple, set] = defaultdict(set)
    for op in ops:
        layouts_by_site[(op.source_line, op.kind, op.shape)].add(op.layout_text)
    split: set = set()  # sites counted once per layout (_matched)
    sites = _sites(ops)
    result.programs = programs or sample_programs(grid, max_programs)
    for pid in result.programs:
        rec = record_program(launch, pid, with_locals=False)
        if rec.error and not result.error:
            result.error = f"program {pid}: {rec.error}"
        recorded = Counter((a.line, a.kind, tuple(a.shape)) for a in rec.accesses)
        for access, op in _matched(ops, sites, rec.accesses, recorded, split):
            if op is None:
                unmatched[(access.line, access.kind)] += 1
                continue
            entry = entries.get(op.index)
            if entry is None:
                entry = entries[op.index] = AccessCoalescing(
                    op.source_line, op.kind, op.op, op.index, access.param, op.shape, access.dtype or op.elem_type,
                    access.elem_bytes, layout=describe_layout(op.layout), threads_per_warp=threads)
                entry.width_bytes = _width_for(widths, op, ops, access.elem_bytes)
            entry.executions += 1
            key = (op.index, op.shape)
            if key not in layouts_cache:
                layout = None
                if op.layout is None:
                    layout = scalar_layout(num_warps, threads)
                else:
                    layout = linear_layout(op.layout, op.shape)
                    if layout is None:  # an MMA layout, or a slice of one: Triton builds it (3.6+)
                        layout = triton_layouts(ttgir).get(op.index)
                layouts_cache[key] = layout
            layout = layouts_cache[key]
            if layout is None:
                entry.analysed = False
                entry.reason = (f"layout {describe_layout(op.layout)} not analysed: this Triton does not expose "
                                f"its linear layout to Python")
                continue
            base = 0
            region = rec.regions.get(access.param) if access.param else None
            if region is not None:
                base = (region.base - region.start) % STORAGE_ALIGNMENT
            addresses = np.asarray(access.byte_offsets, dtype=np.int64) + base
            vector = max(1, (entry.width_bytes or access.elem_bytes) // access.elem_bytes)
            batch = count_requests(addresses, access.mask, access.elem_bytes, layout, vector, op.kind,
                                   want_picture=True)
            entry.counts.add(batch.counts)
            entry.lane_strides.update(batch.lane_strides)
            if batch.worst is not None and (entry.picture is None or
                                            batch.worst.sectors - batch.worst.ideal_sectors >
                                            entry.picture.sectors - entry.picture.ideal_sectors):
                entry.picture = batch.worst
            if not entry.dim_strides:
                entry.sample = (addresses, access.mask, op.layout, vector)
                entry.dim_strides = _dim_strides(access.byte_offsets, access.mask)
                entry.lane_dim = _lane_dim(layout)
            offset = _alignment_offset(addresses, access.mask)
            if offset is not None:
                entry.alignment_offsets[offset] += 1
    for (line, kind, shape), texts in sorted(layouts_by_site.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1])):
        if len(texts) > 1 and (line, kind, shape) in split:
            result.notes.append(f"line {line}: the compiler loads or stores it once in each of {len(texts)} layouts "
                                f"({', '.join(sorted(texts))}), and each runs: irscope counts every one")
        elif len(texts) > 1:
            result.notes.append(f"line {line}: the {kind}s the compiler made of it (inlined or pipelined copies) have "
                                f"different layouts ({', '.join(sorted(texts))}); irscope counts all with the first")
    result.accesses = sorted(entries.values(), key=lambda e: (e.source_line or 0, e.stage_line))
    for entry in result.accesses:
        if entry.kind == "load":
            result.loads.add(entry.counts)
        elif entry.kind == "store":
            result.stores.add(entry.counts)
        diagnose(entry)
    from .coalescing_width import explain_narrow
    explain_narrow(result.accesses, comp)  # narrow accesses: the argument that kept them narrow
    for (line, kind), n in sorted(unmatched.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1])):
        result.notes.append(f"line {line}: {n} {kind}(s) found no matching TTGIR op (not counted)")
    if any(not e.analysed for e in result.accesses):
        result.notes.append("some accesses were not analysed (see their reason)")
    result.seconds = time.perf_counter() - start
    return result


def _sites(ops: list[TensorAccessOp]) -> dict[tuple, tuple[int, list[TensorAccessOp]]]:
    """(source line, kind, shape) -> how many TTGIR ops the compiler made of that access, and the first op of
    each layout among them, in program order."""
    out: dict[tuple, tuple[int, list[TensorAccessOp]]] = {}
    for op in ops:
        count, firsts = out.get((op.source_line, op.kind, op.shape), (0, []))
        if all(f.layout_text != op.layout_text for f in firsts):
            firsts = firsts + [op]
        out[(op.source_line, op.kind, op.shape)] = (count + 1, firsts)
    return out


def _matched(ops: list[TensorAccessOp], sites: dict, accesses, recorded: Counter, split: set):
    """Each recorded access with the TTGIR op(s) it ran as. Usually one op. But where the compiler made one
    source-level access into ops of different layouts that all run (Triton's layout pass loads a value
    again in a second layout rather than converting it: Liger's RoPE loads `cos_row` as `ld.global.b32` and
    as `ld.global.b16`, and the H100 measured both), a program records fewer accesses there than there are
    ops: each access then ran once per layout."""
    for access in accesses:
        op = _match_op(ops, access)
        count, firsts = sites.get((op.source_line, op.kind, op.shape), (0, [])) if op is not None else (0, [])
        if len(firsts) > 1 and recorded[(access.line, access.kind, tuple(access.shape))] < count:
            split.add((op.source_line, op.kind, op.shape))
            for each in firsts:
                yield access, each
        else:
            yield access, op


def _match_op(ops: list[TensorAccessOp], access) -> TensorAccessOp | None:
    """The TTGIR op a recorded access came from: same source line, kind and shape. Pipelined loops
    repeat an op (prologue and body); the copies share a layout, so the first stands for them all."""
    kind = access.kind
    shape = tuple(access.shape)
    same_line = [op for op in ops if op.source_line == access.line and op.kind == kind]
    for op in same_line:
        if op.shape == shape or (op.shape == () and math.prod(shape) == 1):
            return op
    # a call written over several lines: the interpreter records its first line, Triton may put the op on a
    # later line of the same call (the one of its pointer argument)
    last = getattr(access, "last_line", 0) or access.line
    for op in ops:
        if op.kind == kind and op.source_line is not None and access.line < op.source_line <= last and (
                op.shape == shape or (op.shape == () and math.prod(shape) == 1)):
            return op
    return None


def _source_line_of(comp, stage: str):
    source_map = getattr(comp, "source_map", None) if hasattr(type(comp), "source_map") else None
    if source_map is None:
        return None

    def lookup(index: int) -> int | None:
        try:
            return source_map.source_line(stage, index)
        except Exception:
            return None
    return lookup


def _widths_by_line(comp) -> dict[tuple[int | None, str], list[int]]:
    """Bytes per lane per instruction of the global loads/stores in the PTX (AMDGCN on AMD), by source line."""
    from .memory import memory_ops, primary_stage

    stage = primary_stage(comp)
    try:
        ops = memory_ops(comp, [stage])
    except Exception:
        return {}
    if ops and all(op.source_line is None for op in ops):
        lines = _asm_loc_lines(comp.stage(stage), comp.kernel.file)
        ops = [op.replace(source_line=lines.get(op.line)) for op in ops]
    out: dict[tuple[int | None, str], list[int]] = defaultdict(list)
    for op in ops:
        if op.space in ("global", "generic") and op.width_bytes:
            out[(op.source_line, op.op)].append(op.width_bytes)
    return out


def _width_for(widths, op: TensorAccessOp, ops: list[TensorAccessOp], elem_bytes: int = 0) -> int | None:
    found = widths.get((op.source_line, op.kind))
    if not found:
        return None
    fits = [w for w in found if not elem_bytes or w <= elem_bytes * _contiguous_per_thread(op)]
    return Counter(fits or found).most_common(1)[0][0]


def _contiguous_per_thread(op: TensorAccessOp) -> int:
    """Elements a thread holds next to each other along the layout's fastest dimension (no limit if unknown)."""
    layout = op.layout
    while getattr(layout, "parent", None) is not None and not hasattr(layout, "size_per_thread"):
        layout = layout.parent
    size = getattr(layout, "size_per_thread", None)
    order = getattr(layout, "order", None)
    if not size or not order:
        return 1 << 20
    sliced = getattr(op.layout, "dim", None)
    fastest = next((d for d in order if d != sliced), order[0]) if sliced is not None else order[0]
    return size[fastest]


def _asm_loc_lines(text: str, user_file: str) -> dict[int, int]:
    """PTX/AMDGCN line index → user line, from `.loc` directives (used when no source map is at hand)."""
    import os
    files = ir_ptx.file_table(text)   # PTX lists its files at the end
    out: dict[int, int] = {}
    current = None
    user_base = os.path.basename(user_file)
    lines = text.splitlines()

    def is_user(f: int) -> bool:
        # Triton's cache may hold this kernel compiled from another copy of the same file: compare names
        return os.path.basename(files.get(f, "")) == user_base

    in_asm = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("// begin inline asm"):
            in_asm = True  # the `.loc`s inside an inline asm block count its lines, not the source's
        elif stripped.startswith("// end inline asm"):
            in_asm = False
        loc = ir_ptx.read_loc(stripped) if stripped.startswith(".loc") else None
        if loc and in_asm:
            continue
        if loc:
            (number, line_number, _), inlined = loc
            if is_user(number) and line_number != 0:
                current = line_number
            elif inlined and is_user(inlined[0]):
                current = inlined[1]
            continue
        if current is not None:
            out[index] = current
    return out


@functools.lru_cache(maxsize=8)
def triton_layouts(ttgir: str) -> dict[int, LinearLayout]:
    """Linear layouts of the module's load/store pointer tensors from Triton itself, by TTGIR line.
    Triton parses the whole module for this (~0.2 s): kept for the few TTGIR texts last asked about
    (coalescing and the why-not-vectorized analysis both ask). Callers only read the dict."""
    from ..triton_compat import ttgir_access_linear_layouts

    found = ttgir_access_linear_layouts(ttgir)
    if not found:
        return {}
    ops = ttgir_access_ops(ttgir, lambda i: None)
    out = {}
    for op, item in zip(ops, found):
        if item is None or tuple(item["shape"]) != op.shape:
            continue
        out[op.index] = LinearLayout(op.shape, tuple(map(tuple, item["reg"])), tuple(map(tuple, item["lane"])),
                                     tuple(map(tuple, item["warp"])))
    return out


def _dim_strides(byte_offsets: np.ndarray, mask: np.ndarray | None) -> dict[int, int]:
    """Per tensor dimension, the most common byte step between neighbouring elements (active ones)."""
    offs = np.asarray(byte_offsets, dtype=np.int64)
    out = {}
    for dim in range(offs.ndim):
        if offs.shape[dim] < 2:
            continue
        diff = np.diff(offs, axis=dim)
        if mask is not None:
            m = np.asarray(mask, bool)
            both = np.take(m, range(1, m.shape[dim]), axis=dim) & np.take(m, range(0, m.shape[dim] - 1), axis=dim)
            diff = diff[both]
        values = Counter(np.asarray(diff).reshape(-1).tolist())
        if values:
            out[dim] = values.most_common(1)[0][0]
    return out


def _lane_dim(layout: LinearLayout) -> int | None:
    for basis in layout.lane_bases:
        for dim, value in enumerate(basis):
            if value:
                return dim
    return None


def _alignment_offset(addresses: np.ndarray, mask: np.ndarray | None) -> int | None:
    flat = addresses.reshape(-1)
    if mask is not None:
        flat = flat[np.asarray(mask, bool).reshape(-1)]
    if not flat.size:
        return None
    return int(flat.min() % SECTOR_BYTES)


# ---------------------------------------------------------------------------------------------- words


def diagnose(entry: AccessCoalescing) -> None:
    """Fill in the diagnosis and fix of one access, in words."""
    c = entry.counts
    if not entry.analysed or not c.requests:
        return
    spr, ideal = c.sectors_per_request, c.ideal_sectors_per_request
    what = f"{entry.kind} of {entry.param or 'memory'}"
    if not entry.inefficient:
        entry.diagnosis = (f"{what}: coalesced — {spr:.1f} sectors per request against an ideal of {ideal:.1f}"
                           + _width_text(entry))
        return
    stride = entry.lane_stride_bytes
    cost = c.cost or 1.0
    width = entry.width_bytes or entry.elem_bytes
    head = (f"{what}: {spr:.1f} sectors per request where {ideal:.1f} would do — the memory system moves "
            f"{cost:.1f}× the bytes the lanes use ({c.excess_bytes} excess bytes in the sampled programs)")
    contiguous_dims = [d for d, s in entry.dim_strides.items() if s == entry.elem_bytes]
    what_if = f" What if the lanes read adjacent bytes: {ideal:.1f} sectors per request, {cost:.1f}× less traffic."
    if stride is not None and stride > width:
        lane_text = f"neighbouring lanes are {stride} bytes apart"
        if entry.lane_dim is not None and len(entry.shape) > 1:
            lane_text += f" (lanes step along dimension {entry.lane_dim} of the {'×'.join(map(str, entry.shape))} block)"
        if entry.lane_dim in contiguous_dims:
            entry.cause = "narrow_access"  # each lane's run is contiguous: the access width is what is missing
            per_lane = stride // entry.elem_bytes
            entry.diagnosis = (f"{head}; each lane holds {per_lane} adjacent elements ({stride} bytes) but the "
                               f"compiler issues {width}-byte accesses, so one instruction touches every "
                               f"{per_lane}th element and the next instructions fetch the same sectors again: "
                               f"it could not prove the wider access aligned.{what_if}")
            entry.fix = ("Let Triton vectorize: pass pointers that are 16-byte aligned (no views such as x[1:]) and "
                         "sizes and strides that are multiples of 16 elements — the JIT specializes on divisibility "
                         "by 16 — or state it with tl.multiple_of / tl.max_contiguous.")
        elif contiguous_dims:
            entry.cause = "lanes_across"
            d = contiguous_dims[0]
            entry.diagnosis = f"{head}; {lane_text}, but the data is contiguous along dimension {d}."
            entry.what_if = _what_if_fastest(entry, d)
            entry.diagnosis += (" What if " + entry.what_if) if entry.what_if else what_if
            entry.fix = (f"Make dimension {d} the fastest-varying one for the threads: Triton orders threads by the "
                         f"contiguity it can prove, so pass that dimension's stride as 1 (the JIT specializes on 1) "
                         f"or as a tl.constexpr, or swap the index roles so the contiguous index is the inner "
                         f"(last) one; a block pointer (tl.make_block_ptr with order=) also tells it.")
        else:
            entry.cause = "strided"
            steps = ", ".join(f"{s} bytes ({s // entry.elem_bytes if entry.elem_bytes else s} elements)"
                              + (f" along dimension {d}" if len(entry.shape) > 1 else "")
                              for d, s in sorted(entry.dim_strides.items()))
            if stride >= SECTOR_BYTES:
                sharing = f"each lane's element sits in its own {SECTOR_BYTES}-byte sector, of which it uses {width} bytes"
            else:  # a few lanes share a sector, and still most of its bytes are not asked for
                per_sector = SECTOR_BYTES // stride
                sharing = (f"{per_sector} lanes share each {SECTOR_BYTES}-byte sector and use {per_sector * width} "
                           f"of its bytes")
            entry.diagnosis = (f"{head}; neighbouring elements of the block are {steps or 'far'} apart — a strided "
                               f"gather — and {lane_text}: {sharing}.{what_if}")
            entry.fix = ("Read contiguous elements: store the data so that the elements one program reads are "
                         "adjacent (stride 1 along the index the lanes vary), or load the contiguous block that "
                         "contains them and pick the ones you need in registers; if the stride is a "
                         "compile-time factor, make the block 2-D ([BLOCK, stride]) so lanes run along the "
                         "contiguous dimension.")
        return
    off = sum(n for o, n in entry.alignment_offsets.items() if o)
    if off:
        entry.cause = "misaligned_start"
        total = sum(entry.alignment_offsets.values())
        shown = ", ".join(str(o) for o, _ in entry.alignment_offsets.most_common(3) if o)
        entry.diagnosis = (f"{head}; the lanes are contiguous, but {off} of {total} executions start off a "
                           f"{SECTOR_BYTES}-byte boundary (by {shown} bytes), so requests straddle an extra sector.")
        strides = [s for d, s in entry.dim_strides.items() if s != entry.elem_bytes]
        entry.fix = ("Align the starts: pass tensors (and views such as x[1:]) that begin on a 16-byte boundary, "
                     "and make row strides a multiple of 16 elements (pad the rows)"
                     + (f" — here a row is {strides[0]} bytes" if strides else "")
                     + "; Triton then also emits 16-byte vector accesses.")
        return
    lanes = c.active_lanes / c.requests if c.requests else 0
    entry.cause = "idle_lanes"
    entry.diagnosis = f"{head}; on average {lanes:.1f} of {entry.threads_per_warp} lanes are active per request."
    entry.fix = ("Match the block to the data: a block shape whose rows fit the tensor (fewer masked-off "
                 "lanes), or the contiguous dimension as the block's inner dimension.")


def _what_if_fastest(entry: AccessCoalescing, dim: int) -> str:
    """Recount one recorded execution with a blocked layout whose threads run fastest along `dim`:
    the layout's per-dimension sizes moved over from its fastest dimension, the order rotated."""
    from .layouts import BlockedLayout
    if entry.sample is None:
        return ""
    addresses, mask, layout, vector = entry.sample
    if not isinstance(layout, BlockedLayout) or layout.order[0] == dim:
        return ""
    fast = layout.order[0]

    def swap(values):
        out = list(values)
        out[fast], out[dim] = out[dim], out[fast]
        return tuple(out)

    order = tuple(dim if d == fast else fast if d == dim else d for d in layout.order)
    moved = BlockedLayout(swap(layout.size_per_thread), swap(layout.threads_per_warp), swap(layout.warps_per_cta), order)
    linear = linear_layout(moved, entry.shape)
    if linear is None:
        return ""
    width = min(16, layout.size_per_thread[fast] * entry.elem_bytes) // entry.elem_bytes or 1
    batch = count_requests(addresses, mask, entry.elem_bytes, linear, max(vector, width), entry.kind, want_picture=False)
    c = batch.counts
    if not c.requests:
        return ""
    return (f"the threads ran along dimension {dim} ({moved.describe()}): {c.sectors_per_request:.1f} sectors "
            f"per request against an ideal of {c.ideal_sectors_per_request:.1f}, {c.requests} requests instead of "
            f"{_requests_of_sample(entry)} for the same execution.")


def _requests_of_sample(entry: AccessCoalescing) -> int:
    addresses, mask, layout, vector = entry.sample
    linear = linear_layout(layout, entry.shape)
    return count_requests(addresses, mask, entry.elem_bytes, linear, vector, entry.kind, want_picture=False).counts.requests


def _width_text(entry: AccessCoalescing) -> str:
    if entry.width_bytes:
        return f" ({entry.width_bytes}-byte accesses per lane)"
    return ""


# ---------------------------------------------------------------------------------------------- report


def report_fields(comp) -> dict[str, Any]:
    """What `irscope report` adds for one compilation: `coalescing` (one row per global load/store) and
    `coalescing_totals` (kernel-wide loads and stores, the programs sampled, notes)."""
    try:
        result = analyze_coalescing(comp)
    except Exception as exc:  # an analysis failure must not take the report down with it
        return {"coalescing": [], "coalescing_totals": {"error": f"{type(exc).__name__}: {exc}"}}
    return {"coalescing": result.to_json(), "coalescing_totals": result.totals_json()}


def format_lines(entry: dict[str, Any]) -> list[str]:
    """The report's text lines for one compilation's coalescing fields."""
    rows = entry.get("coalescing") or []
    totals = entry.get("coalescing_totals") or {}
    out: list[str] = []
    if totals.get("error") and not rows:
        return [f"  coalescing not analysed: {totals['error']}"]
    if not rows:
        return [f"  coalescing: {note}" for note in (totals.get("notes") or [])]
    sampled = f"{totals.get('programs')} of {totals.get('grid_programs')} programs"
    parts = []
    for kind in ("loads", "stores"):
        t = totals.get(kind) or {}
        if t.get("requests"):
            parts.append(f"{kind} {t['sectors_per_request']} sectors/request (ideal {t['ideal_sectors_per_request']})")
    out.append(f"  coalescing {'  '.join(parts)}  [{sampled}]")
    fixed_at: dict[str, Any] = {}  # a fix already printed -> the line it was printed for
    for row in rows:
        if not row["analysed"]:
            out.append(f"    line {row['source_line']}: {row['kind']} not analysed: {row['reason']}")
            continue
        flag = "" if (row["efficiency"] or 0) >= 0.9 else "  <-- uncoalesced"
        out.append(f"    line {row['source_line']}: {row['kind']:5} {row['param'] or '?'}  "
                   f"{row['sectors_per_request']} sectors/request, ideal {row['ideal_sectors_per_request']}, "
                   f"efficiency {row['efficiency']:.0%}{flag}")
        if flag and row.get("fix"):
            out.append(f"      {row['diagnosis']}")
            if row["fix"] in fixed_at:  # the same advice for every line of a kernel is said once
                out.append(f"      fix: as for line {fixed_at[row['fix']]}")
            else:
                fixed_at[row["fix"]] = row["source_line"]
                out.append(f"      fix: {row['fix']}")
    for note in totals.get("notes") or []:
        out.append(f"    note: {note}")
    if totals.get("error"):
        out.append(f"    note: {totals['error']}")
    return out
