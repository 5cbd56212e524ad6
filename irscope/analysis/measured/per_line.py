"""Nsight Compute's per-instruction counters, summed per source line through irscope's SASS source map.

Each row of ncu's source page carries the instruction's offset in the function; irscope's own SASS
listing carries the same offsets (`/*0120*/`), and its source map links each listed instruction to a line
of the kernel's source. Before anything is summed, the two listings are compared instruction by
instruction: if the binary ncu profiled is not the one irscope compiled, nothing is mapped and the
measurement says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from irscope.analysis.measured.ncu_parse import (
    INSTRUCTIONS,
    SAMPLES,
    SECTORS,
    SECTORS_IDEAL,
    WAVEFRONTS,
    WAVEFRONTS_IDEAL,
    SassRow,
    SourcePage,
)
from irscope.base.compiled import CompiledKernel
from irscope.ir import sass as ir_sass

# The SASS shared-memory instructions whose wavefronts irscope's bank model predicts (analysis/bank_model.py)
MODELLED_SHARED = frozenset({"LDS", "STS", "LDSM", "STSM", "LDGSTS"})
# an LDGSTS operand that zero-fills the copy where it is set (PT: never)
_PREDICATE = re.compile(r"!?P[0-6]")


@dataclass
class LineCounters:
    source_line: int | None
    instructions: float = 0.0  # warp-level instructions executed
    ld_sectors: float = 0.0
    ld_requests: float = 0.0
    ld_ideal: float = 0.0
    st_sectors: float = 0.0
    st_requests: float = 0.0
    st_ideal: float = 0.0
    shared_wavefronts: float = 0.0
    shared_ideal: float = 0.0
    other_wavefronts: float = (
        0.0  # of these, shared accesses irscope does not model (HGMMA, ATOMS, ...)
    )
    other_ideal: float = 0.0
    shared_instructions: int = (
        0  # SASS instructions on the line that the bank model predicts (static)
    )
    # executions of cp.async copies (LDGSTS) that take a zero-fill predicate: when it is set for every lane
    # (the pipeliner's copies past a loop's end) the execution issues no request, yet ncu counts it
    zero_fill_copies: float = 0.0
    samples: float = 0.0
    stalls: dict[str, float] = field(default_factory=dict)

    @staticmethod
    def _ratio(a: float, b: float) -> float | None:
        return round(a / b, 2) if b else None

    @property
    def ld_sectors_per_request(self) -> float | None:
        return self._ratio(self.ld_sectors, self.ld_requests)

    @property
    def st_sectors_per_request(self) -> float | None:
        return self._ratio(self.st_sectors, self.st_requests)

    @property
    def bank_conflicts(self) -> float:
        return max(0.0, self.shared_wavefronts - self.shared_ideal)

    def add(self, row: SassRow) -> None:
        executed = row.get(INSTRUCTIONS)
        self.instructions += executed
        self.samples += row.get(SAMPLES)
        for reason, count in row.stalls().items():
            self.stalls[reason] = self.stalls.get(reason, 0.0) + count
        # an asynchronous copy (LDGSTS) is a global load and a shared store: "Global,Shared", "Load,Store"
        spaces, operations = row.space.split(","), row.operation.split(",")
        operation = (
            operations[spaces.index("Global")]
            if "Global" in spaces and len(operations) == len(spaces)
            else row.operation
        )
        if "Global" in spaces and operation in ("Load", "Store"):
            prefix = "ld" if operation == "Load" else "st"
            setattr(
                self, f"{prefix}_sectors", getattr(self, f"{prefix}_sectors") + row.get(SECTORS)
            )
            setattr(self, f"{prefix}_requests", getattr(self, f"{prefix}_requests") + executed)
            setattr(
                self, f"{prefix}_ideal", getattr(self, f"{prefix}_ideal") + row.get(SECTORS_IDEAL)
            )
            if row.base == "LDGSTS" and any(
                _PREDICATE.fullmatch(o) for o in ir_sass.tokenize_text(row.text).operands
            ):
                self.zero_fill_copies += executed
        if "Shared" in spaces:
            self.shared_wavefronts += row.get(WAVEFRONTS)
            self.shared_ideal += row.get(WAVEFRONTS_IDEAL)
            if row.base in MODELLED_SHARED:
                self.shared_instructions += 1
            else:
                self.other_wavefronts += row.get(WAVEFRONTS)
                self.other_ideal += row.get(WAVEFRONTS_IDEAL)

    def to_json(self) -> dict:
        top = sorted(self.stalls.items(), key=lambda kv: -kv[1])[:3]
        return {
            "source_line": self.source_line,
            "instructions_executed": self.instructions,
            "ld_sectors": self.ld_sectors,
            "ld_requests": self.ld_requests,
            "ld_sectors_per_request": self.ld_sectors_per_request,
            "st_sectors": self.st_sectors,
            "st_requests": self.st_requests,
            "st_sectors_per_request": self.st_sectors_per_request,
            "shared_wavefronts": self.shared_wavefronts,
            "shared_wavefronts_ideal": self.shared_ideal,
            "shared_wavefronts_not_modelled": self.other_wavefronts,
            "bank_conflicts": self.bank_conflicts,
            "stall_samples": self.samples,
            "top_stalls": {k: v for k, v in top},
        }


def listed_offsets(sass: str) -> dict[int, tuple[int, str]]:
    """irscope's SASS listing: offset -> (line index, instruction text without the trailing ';')."""
    return {
        instruction.offset: (instruction.index, instruction.text)
        for instruction in ir_sass.instructions(sass)
    }


def _same_instruction(a: str, b: str) -> bool:
    return ir_sass.comparable(a) == ir_sass.comparable(b)


def binary_mismatch(page: SourcePage, listed: dict[int, tuple[int, str]]) -> str | None:
    """Why ncu's profiled binary is not irscope's compilation, or None when every instruction agrees."""
    if len(page.rows) != len(listed):
        return (
            f"ncu profiled {len(page.rows)} instructions, irscope's compilation has {len(listed)}: "
            f"not the same binary"
        )
    for row in page.rows:
        mine = listed.get(row.offset)
        if mine is None or not _same_instruction(row.text, mine[1]):
            return (
                f"at offset {row.offset:#06x} ncu profiled '{row.text}' where irscope's compilation has "
                f"'{mine[1] if mine else 'nothing'}': not the same binary"
            )
    return None


def per_source_line(
    comp: CompiledKernel, page: SourcePage
) -> tuple[list[LineCounters], str | None]:
    """Counters per source line (None: instructions the map links to no line), and a mismatch reason."""
    listed = listed_offsets(comp.stage("sass"))
    why = binary_mismatch(page, listed)
    if why:
        return [], why
    sm = comp.source_map
    lines: dict[int | None, LineCounters] = {}
    for row in page.rows:
        index = listed[row.offset][0]
        line = sm.source_line("sass", index)
        lines.setdefault(line, LineCounters(line)).add(row)
    return sorted(lines.values(), key=lambda c: (c.source_line is None, c.source_line or 0)), None
