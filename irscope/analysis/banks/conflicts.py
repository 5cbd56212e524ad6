"""Bank conflicts of every shared-memory access of a compiled kernel, predicted from its PTX and its launch.

Where the addresses come from: the PTX itself. Each `ld.shared` / `st.shared` / `ldmatrix` / `stmatrix` /
`cp.async` names its address as registers computed from `%tid.x`, `%ctaid`, the kernel's arguments and
constants; ptx_exec.py evaluates that arithmetic for every thread of the launch's programs (and follows
the loops, so a pipelined buffer's stage offsets are seen too), and bank_model.py counts the wavefronts
of each warp-level execution the way the hardware does. The other way, deriving addresses from the
TTGIR layouts (the distributed layout and the `#shared` swizzle through Triton's linear layouts), would
tie the rule to Triton's internals and their changes between releases, and see only what Triton meant
to emit: the PTX is what ptxas turns one-for-one into LDS/STS/LDSM/LDGSTS, it is there for Inductor's and
libraries' kernels alike, and it also gives the guards (which lanes take part) and the global addresses
of async copies, which decide their wavefronts.

Not modelled (reported, never guessed): shared atomics, `wgmma` operand reads (the tensor core reads
its descriptors' swizzled tiles conflict-free by construction), TMA bulk copies, distributed shared
memory; and any access whose address depends on data loaded from memory.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from irscope.analysis.banks.model import (
    copy_groups,
    copy_phase_size,
    count,
    ldmatrix_lanes,
    phase_size,
    source_ways,
    worst_bank,
)
from irscope.analysis.banks.ptxas import ptxas_view
from irscope.analysis.ptx.machine import Machine, State
from irscope.analysis.ptx.program import Instr, Program, immediate

POINTER_STRIDE = 1 << 40  # synthetic global addresses: argument i's data starts at (i + 1) << 40
BATCH_LANES = 1 << 17


@dataclass
class SharedAccess:
    index: int  # in Program.instrs
    line: int  # 0-based PTX line
    opcode: str
    kind: str  # "load", "store", "ldmatrix", "stmatrix", "cp.async", "atomic", "wgmma", "bulk", ...
    width: int  # bytes per lane (per row address for ldmatrix / stmatrix)
    address: str
    matrices: int = 0
    global_address: str | None = None
    src_size: str | None = None
    not_modelled: str | None = None  # why its wavefronts are not predicted
    merged: tuple[int, ...] = ()  # PTX lines of the loads ptxas emits as this one (ptxas_shared.py)
    tail_guard: str | None = None  # the predicate ptxas's early exit leaves it to (ptxas_shared.py)
    tail_guard_at: int | None = None  # where the PTX sets that predicate, when after this access


@dataclass
class AccessResult:
    access: SharedAccess
    source_line: int | None = None
    executions: int = 0  # warp-level executions (warps that reached it, whatever their guard)
    wavefronts: int = 0
    ideal: int = 0
    unknown: int = 0  # executions whose address or guard irscope could not compute
    histogram: Counter = field(default_factory=Counter)  # (wavefronts, ideal) -> executions
    worst: str | None = None  # the worst execution's conflict, in words
    worst_excess: int = 0
    source_ways: int = 0  # cp.async: most global 128-byte lines one phase read through one bank

    @property
    def excess(self) -> int:
        return self.wavefronts - self.ideal


@dataclass
class LaunchInputs:
    grid: tuple[int, int, int]
    threads: int
    params: dict[str, int | None]  # PTX parameter name -> value (pointers: synthetic addresses)


@dataclass
class BankReport:
    accesses: list[AccessResult]
    programs: int  # programs simulated
    grid_programs: int
    stops: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return not self.stops and self.programs == self.grid_programs


def access_width(parts: list[str]) -> int:
    """Bytes one lane moves in a PTX memory instruction (`ld.shared.v4.b32`: 16), from its opcode's parts."""
    vector = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d+", p)), 1)
    kind = parts[-1]
    bits = int(re.sub(r"\D", "", kind) or 32)
    return vector * max(1, bits // 8)


def find_accesses(program: Program) -> list[SharedAccess]:
    out = []
    for index, ins in enumerate(program.instrs):
        parts, ops = ins.parts, ins.operands
        spaces = {p for p in parts if p.startswith("shared")}
        if parts[0] in ("ld", "st", "atom", "red") and spaces:
            address = ops[1] if parts[0] in ("ld", "atom") else ops[0]
            kind = {"ld": "load", "st": "store"}.get(parts[0], "atomic")
            access = SharedAccess(index, ins.line, ins.opcode, kind, access_width(parts), address)
            if kind == "atomic":
                access.not_modelled = "shared-memory atomics are not modelled"
            elif "shared::cluster" in spaces:
                access.not_modelled = "distributed shared memory (another block's) is not modelled"
            out.append(access)
        elif parts[0] in ("ldmatrix", "stmatrix"):
            count_part = next((p for p in parts if re.fullmatch(r"x\d", p)), "x1")
            address = ops[1] if parts[0] == "ldmatrix" else ops[0]
            access = SharedAccess(
                index, ins.line, ins.opcode, parts[0], 16, address, int(count_part[1:])
            )
            if "m8n8" not in parts:
                access.not_modelled = f"{parts[0]} of shape {parts[3]} is not modelled"
            out.append(access)
        elif (
            parts[0] == "cp" and len(parts) > 2 and parts[1] == "async" and parts[2] in ("ca", "cg")
        ):
            size = immediate(ops[2]) or 16
            src_size = None
            if len(ops) > 3 and not (len(ops) == 4 and any("cache_hint" in p for p in parts)):
                src_size = ops[3]
            out.append(
                SharedAccess(
                    index, ins.line, ins.opcode, "cp.async", size, ops[0], 0, ops[1], src_size
                )
            )
        elif parts[0] == "wgmma" and "mma_async" in parts:
            out.append(
                SharedAccess(
                    index,
                    ins.line,
                    ins.opcode,
                    "wgmma",
                    0,
                    "",
                    not_modelled=(
                        "wgmma reads its operands through descriptors of swizzled tiles: "
                        "no bank conflicts by construction"
                    ),
                )
            )
        elif parts[0] == "cp" and "bulk" in parts:
            out.append(
                SharedAccess(
                    index,
                    ins.line,
                    ins.opcode,
                    "bulk",
                    0,
                    "",
                    not_modelled=("TMA bulk copies are not modelled"),
                )
            )
        elif (
            parts[0] == "tensormap" and len(parts) > 1 and parts[1] in ("replace", "cp_fenceproxy")
        ):
            # tl.make_tensor_descriptor: ptxas writes each field as shared LDS/STS (tutorial 09: 26 a descriptor)
            out.append(
                SharedAccess(
                    index,
                    ins.line,
                    ins.opcode,
                    "tensormap",
                    0,
                    "",
                    not_modelled=(
                        "a tensor descriptor built in the kernel (its fields are shared loads and stores in SASS)"
                    ),
                )
            )
    return out


class _Watcher:
    def __init__(self, accesses: list[SharedAccess], results: dict[int, AccessResult]):
        self.by_index = {a.index: a for a in accesses}
        self.results = results
        self.cache: dict[int, dict[bytes, tuple[int, int, int]]] = {}

    def __call__(self, machine: Machine, state: State, ins: Instr) -> None:
        access = self.by_index[state.pc]
        result = self.results[state.pc]
        live = state.active
        if access.tail_guard is not None:  # the threads ptxas's early exit leaves
            # where the PTX sets the guard, when after this load: ptxas sets it first
            at = access.tail_guard_at
            guard = (
                machine.ahead(state, access.tail_guard, at)
                if at is not None and at > state.pc
                else machine.value(state, access.tail_guard)
            )
            if not guard.known_in(state.active):
                result.executions += int(state.active.reshape(-1, 32).any(axis=1).sum())
                result.unknown += int(state.active.reshape(-1, 32).any(axis=1).sum())
                return
            live = state.active & guard.bits.astype(bool)
        reached = live.reshape(-1, 32).any(axis=1)
        result.executions += int(reached.sum())
        if access.not_modelled:
            return
        lanes = machine.guard_lanes(state, ins)
        if lanes is None:
            result.unknown += int(reached.sum())
            return
        lanes &= live
        address = machine.address(state, access.address)
        on = lanes.copy()
        group, width = None, access.width
        phase_of_lane = np.arange(32) // phase_size(width) if access.kind == "store" else None
        if access.kind in ("ldmatrix", "stmatrix"):
            mask, phase_of_lane = ldmatrix_lanes(access.matrices)
            on &= np.tile(mask, on.size // 32)
        known = np.ones(on.size, bool) if address.known is None else address.known.copy()
        copy = None
        if access.kind == "cp.async":
            source = machine.address(state, access.global_address)
            fetching, size_known = fetching_lanes(machine, state, access, on)
            known &= size_known
            if source.known is not None:
                known &= source.known | ~fetching
            # banks on the global side too (bank_model.py); a 16-byte copy's zero fill apart (matmul.py past K)
            group = copy_groups(fetching) if width >= 8 else None
            copy = (source.bits, fetching)
            phase_of_lane = np.arange(32) // copy_phase_size(width)
        bad = ((~known) & on).reshape(-1, 32).any(axis=1)
        result.unknown += int((bad & reached).sum())
        use = reached & ~bad
        if not use.any():
            return
        addresses = address.bits.reshape(-1, 32)[use].astype(np.int64)
        on_w = on.reshape(-1, 32)[use]
        group_w = group.reshape(-1, 32)[use] if group is not None else None
        if copy is not None:
            copy = tuple(x.reshape(-1, 32)[use] for x in copy)
        self._count(access, result, addresses, on_w, group_w, phase_of_lane, copy)

    def _count(self, access, result, addresses, on, group, phase_of_lane, copy=None) -> None:
        """Count each distinct pattern once: a warp's wavefronts do not change when all its addresses move
        by the same multiple of 4 bytes (a pipelined loop's next stage, another program's tile), nor when
        the global addresses a copy reads move together by whole 128-byte lines."""
        base = np.where(on, addresses, np.iinfo(np.int64).max).min(axis=1, keepdims=True) // 4 * 4
        rows = [np.where(on, addresses - base, -1)]
        if group is not None:
            rows.append(group)
        source = fetching = None
        if copy is not None:
            source, fetching = copy[0].astype(np.int64), copy[1]
            line = (
                np.where(on, source, np.iinfo(np.int64).max).min(axis=1, keepdims=True) // 128 * 128
            )
            source = np.where(on, source - line, -1)
            rows.append(np.where(fetching, source, -1 - source))
        table = np.concatenate(rows, axis=1)
        slot: dict[bytes, int] = {}
        first: list[int] = []
        times: list[int] = []
        for i, row in enumerate(table):
            key = row.tobytes()
            j = slot.setdefault(key, len(first))
            if j == len(first):
                first.append(i)
                times.append(0)
            times[j] += 1
        keys = list(slot)
        known = self.cache.setdefault(access.index, {})
        todo = [j for j, key in enumerate(keys) if key not in known]
        if todo:
            pick = np.array([first[j] for j in todo])
            got = count(
                addresses[pick].astype(np.uint64),
                on[pick],
                access.width,
                phase_of_lane,
                group[pick] if group is not None else None,
                None if source is None else source[pick],
                None if fetching is None else fetching[pick],
            )
            ways = (
                source_ways(source[pick], fetching[pick], phase_of_lane, access.width)
                if source is not None
                else np.zeros(len(pick), np.int64)
            )
            for n, j in enumerate(todo):
                known[keys[j]] = (int(got.wavefronts[n]), int(got.ideal[n]), int(ways[n]))
        values = [known[key] for key in keys]
        for (wavefronts, ideal, ways), n in zip(values, times):
            result.wavefronts += wavefronts * n
            result.ideal += ideal * n
            result.histogram[(wavefronts, ideal)] += n
            result.source_ways = max(result.source_ways, ways)
        worst = max(range(len(values)), key=lambda i: values[i][0] - values[i][1])
        excess = values[worst][0] - values[worst][1]
        if excess > result.worst_excess:
            result.worst_excess = excess
            row = first[worst]
            bank, lanes_hit, words = worst_bank(
                addresses[row],
                on[row],
                access.width,
                phase_of_lane,
                group[row] if group is not None else None,
            )
            shown = ", ".join(map(str, lanes_hit[:8])) + (", …" if len(lanes_hit) > 8 else "")
            result.worst = (
                f"{values[worst][0]} wavefronts where {values[worst][1]} would do: lanes {shown} touch "
                f"{words} different 4-byte words of bank {bank}"
            )


def predict(
    program: Program,
    inputs: LaunchInputs,
    max_programs: int | None = None,
    step_limit: int = 20_000_000,
    time_limit: float | None = None,
) -> BankReport:
    """Every shared access of `program`, counted over the launch's programs (evenly spaced ones when there
    are more than `max_programs`)."""
    start = time.perf_counter()
    accesses = ptxas_view(program, find_accesses(program))
    results = {a.index: AccessResult(a) for a in accesses}
    gx, gy, gz = inputs.grid
    total = gx * gy * gz
    chosen = list(range(total))
    if max_programs is not None and total > max_programs:
        chosen = sorted(
            {round(i * (total - 1) / max(1, max_programs - 1)) for i in range(max_programs)}
        )
    ctas = [(i % gx, (i // gx) % gy, i // (gx * gy)) for i in chosen]
    report = BankReport([], len(ctas), total)
    shared = {name: 0 for name in _shared_symbols(program)}
    per_batch = max(1, BATCH_LANES // inputs.threads)
    watcher = _Watcher(accesses, results)
    watched = {
        a.index: [] if a.not_modelled else [a.address, a.global_address, a.src_size, a.tail_guard]
        for a in accesses
    }
    for first in range(0, len(ctas), per_batch):
        machine = Machine(
            program,
            inputs.params,
            inputs.grid,
            ctas[first : first + per_batch],
            inputs.threads,
            watched,
            watcher,
            shared,
            step_limit,
            time_limit,
        )
        for stop in machine.run():
            if stop not in report.stops:
                report.stops.append(stop)
    report.accesses = [results[a.index] for a in accesses]
    report.seconds = time.perf_counter() - start
    return report


def _shared_symbols(program: Program) -> list[str]:
    """Shared variables whose address is known: Triton's one `global_smem` (offset 0 of the block's shared
    memory). With several, where ptxas puts each is not known, and accesses through them are unknown."""
    return program.shared_symbols if len(program.shared_symbols) == 1 else []


def fetching_lanes(machine, state, access, on: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cp.async: the lanes of `on` that copy from global memory (the others zero-fill: a source size of 0,
    or an ignore-source predicate that is set), and where that is known."""
    fetching = on.copy()
    if access.src_size is None:
        return fetching, np.ones(on.size, bool)
    size = machine.value(state, access.src_size)
    ignore = access.src_size.lstrip("!").startswith("%p")
    on_bits = size.bits.astype(bool) if ignore else size.bits != 0
    fetching &= ~on_bits if ignore else on_bits
    return fetching, np.ones(on.size, bool) if size.known is None else size.known
