"""Coalescing without the interpreter: the addresses each lane touches, computed from the PTX's own arithmetic.

Triton's interpreter cannot run a Gluon kernel, so no program of one can be recorded. Its PTX can be run
instead, per thread, for a few programs of the launch (analysis/ptx/machine.py, the machine the bank model
steps through): only the integer arithmetic that makes addresses, guards and branches, from the program and
thread ids, the launch's scalar arguments and synthetic pointers (argument i's tensor starts at (i + 1) << 40
plus its offset into its storage, so an address names its argument and keeps its place modulo 128). Every
execution of a global `ld`/`st` is one warp-level request when a lane of it is active, as Nsight Compute counts
`l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}`; its sectors are the distinct 32-byte sectors its active
lanes' bytes fall in. Guards are the PTX's own: a store Triton predicates to one copy of a broadcast value is
counted once, as the hardware issues it.

What it returns is what the interpreter's path returns (sectors.KernelCoalescing), one access per source
line, kind and argument, so the report, the findings and the TUI read it alike.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter

import numpy as np

from irscope.analysis.banks.conflicts import POINTER_STRIDE, access_width
from irscope.analysis.banks.report import launch_inputs
from irscope.analysis.coalescing.match import source_line_lookup
from irscope.analysis.coalescing.requests import (
    LINE_BYTES,
    SECTOR_BYTES,
    Counts,
    WarpPicture,
)
from irscope.analysis.coalescing.results import AccessCoalescing
from irscope.analysis.coalescing.text import diagnose
from irscope.analysis.layouts.owners import describe_layout
from irscope.analysis.memory.ttgir import ttgir_access_ops
from irscope.analysis.ptx.machine import Machine, Stop
from irscope.analysis.ptx.program import Instr, Program, immediate, parse_program
from irscope.base.compiled import LaunchedKernel

# In Gluon the layout is the author's: which lane holds which element is written, not chosen by the compiler.
GLUON_FIX = (
    "Give the access's layout lanes that run along the contiguous dimension: in gl.BlockedLayout, put that "
    "dimension first in `order` and give it the threads of a warp (threads_per_warp) and several elements per "
    "thread (size_per_thread: 16 bytes for a 128-bit access), e.g. BlockedLayout([1, 4], [1, 32], [4, 1], "
    "[1, 0]) for a row-major tile; convert to another layout afterwards (gl.convert_layout) if the math wants one."
)
_KINDS = {"ld": "load", "st": "store", "atom": "atomic", "red": "atomic"}
_LANES_PER_BATCH = 4096
_STEP_LIMIT = (
    400_000  # as the bank model's findings: a long loop is cut short, its executions so far counted
)
# Executions of the global accesses counted per batch of programs: a benchmark-sized launch loops long in each
# program (Gluon tutorial 03's adds at 32K x 32K ran for minutes within the step limit, 0.4 ms a step). A count,
# not seconds, so that a busy machine gives the counts an idle one does; a loop cut short keeps its counts so
# far, whose sectors per request are the loop's.
_EXECUTIONS_PER_BATCH = 1024


def ptx_coalescing(
    comp: LaunchedKernel, programs: list[tuple[int, int, int]], result, launch=None
) -> None:
    """Fill `result` (a sectors.KernelCoalescing with its grid) with the coalescing of `programs` of `launch`
    (default: the compilation's), computed from the PTX; an error in `result.error` where the launch cannot
    be run so."""
    start = time.perf_counter()
    program = parse_program(comp.stage("ptx"))
    inputs = launch_inputs(comp, program.params, program.threads, launch)
    if inputs is None:
        result.error = "no launch grid: the file does not launch this kernel"
        return
    accesses = global_accesses(program)
    if not accesses:
        result.seconds = time.perf_counter() - start
        return
    names = _argument_names(comp, len(program.params))
    watcher = _Watcher(accesses, names)
    per_batch = max(1, _LANES_PER_BATCH // inputs.threads)
    stops: list[str] = []
    for first in range(0, len(programs), per_batch):
        watcher.executions = 0
        machine = Machine(
            program,
            inputs.params,
            inputs.grid,
            programs[first : first + per_batch],
            inputs.threads,
            {index: [a.address, *filter(None, [a.src_size])] for index, a in accesses.items()},
            watcher,
            step_limit=_STEP_LIMIT,
        )
        stops.extend(s for s in machine.run() if s not in stops)
    result.programs = programs
    for entry in watcher.entries.values():
        entry.source_line = comp.source_map.source_line("ptx", entry.stage_line)
    merged = _by_source_line(watcher.entries.values())
    _named_after_ttgir(comp, merged)
    for entry in merged:
        diagnose(entry)
        if entry.inefficient and comp.kernel.language == "gluon":
            entry.fix = GLUON_FIX
        if entry.kind == "load":
            result.loads.add(entry.counts)
        elif entry.kind == "store":
            result.stores.add(entry.counts)
    result.accesses = merged
    result.notes.append(
        f"addresses computed from the PTX, thread by thread, for {len(programs)} program(s) (Triton's "
        f"interpreter does not run {comp.kernel.language.capitalize()} kernels)"
    )
    if watcher.unknown:
        result.notes.append(
            f"{watcher.unknown} warp-level access(es) had an address the PTX computes from loaded data or "
            f"floating point: not counted"
        )
    result.notes.extend(f"the PTX run stopped early: {stop}" for stop in stops)
    result.seconds = time.perf_counter() - start


class _Access:
    def __init__(self, ins: Instr, index: int):
        self.index = index
        self.line = ins.line
        self.opcode = ins.opcode
        parts, ops = ins.parts, ins.operands
        self.src_size = (
            None  # cp.async: the bytes copied from global memory (0: the lane zero-fills)
        )
        if _is_async_copy(
            ins
        ):  # a copy to shared memory: a load of global memory, `cp-size` bytes a lane
            self.kind, self.address = "load", ops[1]
            self.width = self.elem_bytes = immediate(ops[2]) or 16
            if len(ops) > 3 and not (len(ops) == 4 and any("cache_hint" in p for p in parts)):
                self.src_size = ops[3]
            return
        self.kind = _KINDS[parts[0]]
        self.address = ops[0] if self.kind == "store" or parts[0] == "red" else ops[1]
        self.width = access_width(parts)
        self.elem_bytes = max(1, int(re.sub(r"\D", "", parts[-1]) or 32) // 8)


def _is_async_copy(ins: Instr) -> bool:
    parts = ins.parts
    return parts[0] == "cp" and len(parts) > 2 and parts[1] == "async" and parts[2] in ("ca", "cg")


def global_accesses(program: Program) -> dict[int, _Access]:
    """The PTX's global loads, stores, atomics and copies to shared memory (cp.async), by index."""
    return {
        index: _Access(ins, index)
        for index, ins in enumerate(program.instrs)
        if (ins.parts[0] in _KINDS and "global" in ins.parts) or _is_async_copy(ins)
    }


def _argument_names(comp: LaunchedKernel, count: int) -> list[str]:
    """The kernel argument each PTX parameter holds, in order (its runtime parameters: constexprs and
    constants are none); `arg i` where the two lists do not line up."""
    names = [
        name
        for name, kind in comp.signature.items()
        if kind != "constexpr" and comp.specialization.get(name) != "constant"
    ]
    # the parameters past the kernel's own are Triton's scratch pointers
    return names + [f"scratch {i}" for i in range(count - len(names))]


class _Watcher:
    """Counts each execution of a global access, warp by warp, into an AccessCoalescing per
    (PTX line's source line, kind, argument): the same line's accesses merge once source lines are known."""

    def __init__(self, accesses: dict[int, _Access], names: list[str]):
        self.accesses, self.names = accesses, names
        self.entries: dict[tuple, object] = {}
        self.unknown = 0
        self.executions = 0  # in the batch of programs running now

    def __call__(self, machine: Machine, state, ins: Instr) -> None:
        self.executions += 1
        if self.executions > _EXECUTIONS_PER_BATCH:
            raise Stop(f"stopped after {_EXECUTIONS_PER_BATCH} executions of its global accesses")
        access = self.accesses[state.pc]
        lanes = machine.guard_lanes(state, ins)
        reached = state.active.reshape(-1, 32).any(axis=1)
        address = machine.address(state, access.address)
        if lanes is None or (address.known is not None and not address.known[state.active].all()):
            self.unknown += int(reached.sum())
            return
        if access.src_size is not None:  # cp.async: a lane whose source size is 0 reads nothing
            size = machine.value(state, access.src_size)
            if size.known is not None and not size.known[lanes].all():
                self.unknown += int(reached.sum())
                return
            ignore = access.src_size.lstrip("!").startswith("%p")  # an ignore-source predicate
            bits = size.bits.astype(bool) if ignore else size.bits != 0
            lanes = lanes & (~bits if ignore else bits)
        on = lanes.reshape(-1, 32)
        addresses = address.bits.astype(np.int64).reshape(-1, 32)
        # the argument from any lane that reached it: a warp whose lanes are all masked off is of it too
        argument = self._argument(int(address.bits[np.flatnonzero(state.active)[0]]))
        key = (access.line, access.kind, argument)
        entry = self.entries.get(key)
        if entry is None:
            entry = self.entries[key] = AccessCoalescing(
                None,
                access.kind,
                access.opcode,
                access.line,
                argument,
                dtype=f"b{access.elem_bytes * 8}",
                elem_bytes=access.elem_bytes,
                width_bytes=access.width,
            )
        for warp in np.flatnonzero(reached):
            entry.executions += 1
            entry.counts.instructions += 1
            active = on[warp]
            if not active.any():
                continue
            counts, picture, stride = _request(addresses[warp], active, access.width, int(warp))
            entry.counts.add(counts)
            if stride is not None:
                entry.lane_strides[stride] += 1
            if entry.picture is None or (
                picture.sectors - picture.ideal_sectors
                > entry.picture.sectors - entry.picture.ideal_sectors
            ):
                entry.picture = picture

    def _argument(self, address: int) -> str | None:
        index = address // POINTER_STRIDE - 1
        return self.names[index] if 0 <= index < len(self.names) else None


def _request(
    addresses: np.ndarray, active: np.ndarray, width: int, warp: int
) -> tuple[Counts, WarpPicture, int | None]:
    """One warp-level request: its counts, its picture (addresses from the argument's start), and the byte
    step between neighbouring active lanes (the most common one)."""
    starts = addresses[active]
    touched = (starts[:, None] + np.arange(width)[None, :]).ravel()
    unique = np.unique(touched)
    sectors = np.unique(touched // SECTOR_BYTES).size
    lines = np.unique(touched // LINE_BYTES).size
    counts = Counts(
        requests=1,
        sectors=sectors,
        lines=lines,
        bytes_requested=int(width * starts.size),
        unique_bytes=int(unique.size),
        ideal_sectors=math.ceil(unique.size / SECTOR_BYTES),
        active_lanes=int(starts.size),
    )
    relative = addresses - (addresses // POINTER_STRIDE) * POINTER_STRIDE
    picture = WarpPicture(
        warp,
        0,
        [(int(relative[i]), width) if active[i] else None for i in range(addresses.size)],
        sectors,
        counts.ideal_sectors,
        lines,
        counts.bytes_requested,
    )
    steps = Counter(int(d) for d in np.diff(starts))
    return counts, picture, (steps.most_common(1)[0][0] if steps else None)


def _named_after_ttgir(comp: LaunchedKernel, entries: list) -> None:
    """Each access takes the TTGIR op of its source line and kind, as the interpreter's path has it: its line,
    shape, element type and the layout the author wrote (the PTX's own line where no op matches)."""
    ops = ttgir_access_ops(comp.stage("ttgir"), source_line_lookup(comp, "ttgir"), comp.kernel.file)
    first = {}
    for op in ops:
        first.setdefault((op.source_line, op.kind), op)
    for entry in entries:
        op = first.get((entry.source_line, entry.kind))
        if op is None:
            entry.op = f"{entry.op} (PTX line {entry.stage_line + 1})"
            continue
        entry.op, entry.stage_line, entry.shape = op.op, op.index, op.shape
        entry.dtype, entry.layout = op.elem_type or entry.dtype, describe_layout(op.layout)


def _by_source_line(entries) -> list:
    """Accesses of one source line, kind and argument merged (a tensor load lowered to several PTX
    instructions is one access of the source)."""
    merged: dict[tuple, object] = {}
    for entry in sorted(entries, key=lambda e: e.stage_line):
        key = (entry.source_line, entry.kind, entry.param)
        kept = merged.get(key)
        if kept is None:
            merged[key] = entry
            continue
        kept.counts.add(entry.counts)
        kept.executions += entry.executions
        kept.lane_strides.update(entry.lane_strides)
        kept.width_bytes = max(kept.width_bytes or 0, entry.width_bytes or 0)
        if entry.picture is not None and (
            kept.picture is None
            or entry.picture.sectors - entry.picture.ideal_sectors
            > kept.picture.sectors - kept.picture.ideal_sectors
        ):
            kept.picture = entry.picture
    return sorted(merged.values(), key=lambda e: (e.source_line or 0, e.stage_line))
