"""What the coalescing analysis returns, whichever way it found the addresses (the interpreter's recorded
programs, sectors.py; the PTX run per thread, from_ptx.py): one AccessCoalescing per load or store of the
kernel, their totals in a KernelCoalescing."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from irscope.analysis.coalescing.requests import Counts, WarpPicture, rounded
from irscope.analysis.recording.work import SampledWork


@dataclass
class AccessCoalescing:
    """One load or store of the kernel (a TTGIR op), over every recorded execution."""

    source_line: int | None
    kind: str  # "load" | "store" | "atomic"
    op: str  # "tt.load", "ttg.async_copy_global_to_local", ...
    stage_line: int  # 0-based line of the op in the TTGIR
    param: str | None = None  # the pointer argument
    shape: tuple[int, ...] = ()
    dtype: str = ""
    elem_bytes: int = 4
    width_bytes: int | None = None  # per lane per instruction (PTX / AMDGCN)
    layout: str = ""
    threads_per_warp: int = 32
    counts: Counts = field(default_factory=Counts)
    executions: int = 0
    analysed: bool = True
    reason: str = ""  # why not analysed
    picture: WarpPicture | None = None
    lane_strides: Counter = field(default_factory=Counter)
    # tensor dim -> byte stride between neighbours
    dim_strides: dict[int, int] = field(default_factory=dict)
    lane_dim: int | None = None  # the tensor dim neighbouring lanes step along
    # per execution: first active byte % 32
    alignment_offsets: Counter = field(default_factory=Counter)
    diagnosis: str = ""
    fix: str = ""
    what_if: str = ""  # a recount under the change the fix suggests, where irscope can make one
    cause: str = (
        ""  # "narrow_access" | "lanes_across" | "strided" | "sibling_fields" | "misaligned_start"
    )
    # | "idle_lanes"
    siblings: tuple = ()  # source lines of loads of the same argument that read the rest of its sectors
    together_moved: float | None = (
        None  # with those siblings: bytes of its sectors over the bytes the group uses
    )
    # (addresses, mask, layout object, vector) of one execution
    sample: tuple | None = field(default=None, repr=False)

    @property
    def lane_stride_bytes(self) -> int | None:
        return self.lane_strides.most_common(1)[0][0] if self.lane_strides else None

    @property
    def inefficient(self) -> bool:
        eff = self.counts.efficiency
        return eff is not None and eff < 0.9

    def to_json(self) -> dict[str, Any]:
        c = self.counts
        return {
            "source_line": self.source_line,
            "op": self.op,
            "kind": self.kind,
            "ttgir_line": self.stage_line + 1,
            "param": self.param,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "width_bytes": self.width_bytes,
            "layout": self.layout,
            "analysed": self.analysed,
            "reason": self.reason or None,
            "sectors_per_request": rounded(c.sectors_per_request),
            "ideal_sectors_per_request": rounded(c.ideal_sectors_per_request),
            "efficiency": rounded(c.efficiency, 3),
            "requests": c.requests,
            "sectors": c.sectors,
            "excess_bytes": c.excess_bytes,
            "lane_stride_bytes": self.lane_stride_bytes,
            "siblings": list(self.siblings) or None,
            "cause": self.cause or None,
            "diagnosis": self.diagnosis or None,
            "fix": self.fix or None,
            "what_if": self.what_if or None,
        }


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
    # the sampled programs' distinct sectors and arithmetic, for the roofline (analysis/roofline.py)
    work: SampledWork = field(default_factory=SampledWork)

    def by_source_line(self) -> list[LineCoalescing]:
        lines: dict[int | None, LineCoalescing] = {}
        for a in self.accesses:
            entry = lines.setdefault(a.source_line, LineCoalescing(a.source_line))
            (entry.stores if a.kind == "store" else entry.loads).add(
                a.counts
            ) if a.kind != "atomic" else None
        return sorted(lines.values(), key=lambda e: (e.source_line is None, e.source_line or 0))

    def at_line(self, source_line: int | None) -> list[AccessCoalescing]:
        return [a for a in self.accesses if a.source_line == source_line]

    def to_json(self) -> list[dict[str, Any]]:
        return [a.to_json() for a in self.accesses]

    def totals_json(self) -> dict[str, Any]:
        return {
            "loads": self.loads.to_json(),
            "stores": self.stores.to_json(),
            "programs": len(self.programs),
            "grid_programs": math.prod(self.grid),
            "seconds": round(self.seconds, 3),
            "notes": self.notes,
            "error": self.error,
        }
