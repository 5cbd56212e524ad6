"""What the recorded programs of a launch touched and computed, summed over programs: the distinct 32-byte
sectors of each argument they read and wrote, the distinct pieces DRAM moves for what they read (the target's
`dram_read_bytes`: on NVIDIA GPUs the 64-byte pair of sectors L2 fetches), and their floating-point work.

The coalescing analysis records a sample of programs (`coalescing.sectors.sample_programs`); each recording is
added here, and the roofline (`analysis/roofline.py`) scales the sample up to the whole grid. Sectors are
counted from the start of each argument's storage, which the CUDA caching allocator aligns to 512 bytes, so
that the copies different recordings run on (each at its own address) count the same sector once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from irscope.analysis.recording.trace import Recording
from irscope.base.target import SECTOR_BYTES

# Which way each access kind moves an argument's bytes.
DIRECTIONS = {"load": ("read",), "store": ("write",), "atomic": ("read", "write")}


@dataclass
class SampledWork:
    """Sectors and arithmetic of the programs recorded so far (`add` one recording at a time)."""

    programs: int = 0
    # the piece of memory DRAM moves for a read that misses L2, on the launch's target (Target.dram_read_bytes)
    read_piece: int = SECTOR_BYTES
    # (argument, "read" | "write") -> how many distinct sectors of its storage the programs touched
    distinct: dict[tuple[str, str], int] = field(default_factory=dict)
    # the same before the last recording was added: a sample ends with the grid's last program, which is
    # often partial (masked), so the roofline scales the others up and adds the last one as it is
    before_last: dict[tuple[str, str], int] = field(default_factory=dict)
    # argument -> how many distinct `read_piece` pieces of its storage the programs read, and the same before the
    # last recording
    fetched: dict[str, int] = field(default_factory=dict)
    fetched_before_last: dict[str, int] = field(default_factory=dict)
    # argument -> sectors its whole storage spans (an upper bound on what a launch can move)
    storage_sectors: dict[str, int] = field(default_factory=dict)
    # (dtype, on tensor cores, elements, flops) -> ops run, over every program recorded
    arithmetic: Counter = field(default_factory=Counter)
    unattributed: int = 0  # accesses whose addresses fall in no argument (not counted)
    # argument -> each program's own distinct read sectors of it, summed over the programs: more than its
    # `distinct` reads where programs read the same data (a matmul's operand tiles, a norm's weights), equal
    # where each reads its own
    program_read_sectors: Counter = field(default_factory=Counter)
    # the sectors themselves, while recordings are added (left behind when the result is sent to a front end)
    _touched: dict[tuple[str, str], set[int]] = field(default_factory=dict, repr=False)
    _fetched: dict[str, set[int]] = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_touched": {}, "_fetched": {}}

    def add(self, recording: Recording) -> None:
        self.programs += 1
        self.before_last = dict(self.distinct)
        self.fetched_before_last = dict(self.fetched)
        self.arithmetic.update(recording.arithmetic)
        own_reads: dict[str, set[int]] = {}
        for access in recording.accesses:
            region = recording.regions.get(access.param) if access.param else None
            if region is None:
                self.unattributed += 1
                continue
            self.storage_sectors[access.param] = -(-(region.end - region.start) // SECTOR_BYTES)
            offsets = np.asarray(access.byte_offsets, dtype=np.int64)
            if access.mask is not None:
                offsets = offsets[np.asarray(access.mask, dtype=bool)]
            if not offsets.size:
                continue
            first = offsets + (region.base - region.start)
            last = first + access.elem_bytes - 1  # an element may straddle two sectors
            touched_sectors = np.union1d(first // SECTOR_BYTES, last // SECTOR_BYTES)
            touched = touched_sectors.tolist()
            for direction in DIRECTIONS.get(access.kind, ()):
                key = (access.param, direction)
                sectors = self._touched.setdefault(key, set())
                sectors.update(touched)
                self.distinct[key] = len(sectors)
                if direction == "read":
                    own_reads.setdefault(access.param, set()).update(touched)
                    pieces = self._fetched.setdefault(access.param, set())
                    pieces.update(
                        np.unique(touched_sectors * SECTOR_BYTES // self.read_piece).tolist()
                    )
                    self.fetched[access.param] = len(pieces)
        for name, sectors in own_reads.items():
            self.program_read_sectors[name] += len(sectors)

    def flops(self, threads: int) -> dict[tuple[str, bool], int]:
        """Floating-point operations per (dtype, on tensor cores), summed over the recorded programs, counted per
        thread as the hardware runs them: an elementwise op on fewer elements than the block has threads (a
        scalar, a small tile) runs in every thread all the same; a sum of a whole block over its threads is each
        thread's own adds, then log2(threads) steps of shuffles (a warp's, then the warps') in every thread
        (Triton's lowering; a sum with several outputs: one add per element past the first of each)."""
        totals: Counter = Counter()
        for (dtype, kind, elements, flops), ops in self.arithmetic.items():
            if kind == "reduce":
                outputs = flops
                if outputs == 1 and elements >= threads > 1:
                    flops = elements - threads + threads * (threads.bit_length() - 1)
                else:
                    flops = elements - outputs
            elif kind == "elementwise" and 0 < elements < threads:
                flops = flops // elements * threads
            totals[(dtype, kind == "tensor")] += flops * ops
        return dict(totals)
