"""`bank-conflict`: shared-memory accesses that take more wavefronts than their bytes need.

The counts come from analysis/bank_conflicts.py: each shared access of the PTX, its addresses evaluated
for every lane of a few programs of the launch, its wavefronts counted by the hardware's bank rules (the
same counts Nsight Compute reports per SASS instruction, see docs/validation.md). One finding per source
line, over the accesses of that line that conflict: the cost is the extra wavefronts per warp-level
instruction and per program, the cause the worst execution seen (which lanes meet in which bank), the fix
depends on the kind of access.
"""

from __future__ import annotations

import re

from irscope.analysis.banks.report import bank_report
from irscope.base.compiled import CompiledKernel, LaunchedKernel
from irscope.findings.model import Cost, Finding, WhatIf

_KIND_WORDS = {
    "load": "ld.shared",
    "store": "st.shared",
    "ldmatrix": "ldmatrix",
    "stmatrix": "stmatrix",
    "cp.async": "cp.async (a copy from global to shared memory)",
}


def bank_findings(comp: LaunchedKernel, new) -> list[Finding]:
    report = bank_report(comp)
    if report is None or not report.programs:
        return []
    by_line: dict[int | None, list] = {}
    for result in report.accesses:
        if result.excess > 0 and result.access.not_modelled is None:
            by_line.setdefault(result.source_line, []).append(result)
    return [
        _finding(comp, report, line, results, new)
        for line, results in sorted(by_line.items(), key=lambda kv: kv[0] or 0)
    ]


def _finding(comp: CompiledKernel, report, line, results, new) -> Finding:
    wavefronts = sum(r.wavefronts for r in results)
    ideal = sum(r.ideal for r in results)
    executions = sum(r.executions - r.unknown for r in results) or 1
    extra_per_program = (wavefronts - ideal) / report.programs
    worst = max(results, key=lambda r: r.worst_excess)
    kinds = sorted({r.access.kind for r in results})
    what = ", ".join(
        f"{_KIND_WORDS.get(k, k)} ×{sum(r.access.kind == k for r in results)}" for k in kinds
    )
    sampled = (
        ""
        if report.programs == report.grid_programs
        else f" (from {report.programs} of the launch's {report.grid_programs} programs)"
    )
    # else a conflict in the shared words it writes
    if worst.access.kind == "cp.async" and worst.source_ways > 1:
        cause = (
            f"each {_phase_lanes(worst.access.width)}-lane phase of the copy reads up to {worst.source_ways} "
            f"global 128-byte lines at the same offsets, and each line's bytes pass through the banks of their "
            f"offset, one line at a time: {_worst_counts(worst)}"
        )
        fix = (
            "make the contiguous dimension of the copied tile at least 128 bytes (e.g. BLOCK_K = 64 for "
            "float16, 32 for float32 when K is contiguous), so that each phase copies from one line"
        )
    else:
        cause = f"a {_nway(worst)} bank conflict — in the worst warp {worst.worst}"
        fix = (
            "give a warp's lanes different banks, or the same word (read once and broadcast): the shared layout "
            "Triton picks here follows the tile shape and num_warps, so another BLOCK shape or num_warps "
            "changes which lanes meet"
        )
        if _fma_dot_operand(comp, line):
            fix += (
                "; this is a tl.dot operand staged for the FMA pipes in an unswizzled buffer: on tensor cores "
                "(tf32 or float16 operands) Triton swizzles the tiles and reads them without conflicts"
            )
    message = (
        f"{what} at this line: {wavefronts} shared-memory wavefronts where {ideal} would do{sampled}; "
        f"{cause}"
    )
    cost = Cost(
        round(extra_per_program, 1),
        "extra_wavefronts_per_program",
        f"{(wavefronts - ideal) / executions:.2f} extra wavefronts per warp-level instruction "
        f"({wavefronts / ideal:.2f}× the ideal), {extra_per_program:.0f} per program",
    )
    what_if = WhatIf(
        f"conflict-free, these accesses would take {ideal} wavefronts instead of {wavefronts} "
        f"(a recount of the predicted addresses, not a recompile)",
        False,
    )
    severity = "warning" if wavefronts >= 2 * ideal else "info"
    first = min(results, key=lambda r: r.access.line)
    return new(
        "bank-conflict",
        severity,
        line,
        message,
        fix,
        cost,
        1 - ideal / wavefronts,
        what_if,
        stage="ptx",
        stage_line=first.access.line,
    )


def _fma_dot_operand(comp: CompiledKernel, line: int | None) -> bool:
    """Whether a TTGIR local_load at this source line feeds a dot on the FMA pipes (`#ttg.dot_op` of a
    `#blocked` parent)."""
    try:
        source_map = comp.source_map
        text = comp.stage("ttgir").splitlines()
    except Exception:  # noqa: BLE001 - no TTGIR map: the general fix only
        return False
    blocked = {
        m.group(1) for m in re.finditer(r"^(#\w+) = #ttg\.blocked<", "\n".join(text), re.MULTILINE)
    }
    for index, raw in enumerate(text):
        if "ttg.local_load" in raw and source_map.source_line("ttgir", index) == line:
            parent = re.search(r"dot_op<\{opIdx = \d, parent = (#\w+)", raw)
            if parent and parent.group(1) in blocked:
                return True
    return False


def _phase_lanes(width: int) -> int:
    return 32 if width <= 4 else 16 if width == 8 else 8


def _nway(result) -> str:
    worst = max(result.histogram, key=lambda wi: wi[0] - wi[1], default=(0, 0))
    ways = worst[0] // worst[1] if worst[1] else worst[0]
    return f"{ways}-way" if ways > 1 else "partial"


def _worst_counts(result) -> str:
    worst = max(result.histogram, key=lambda wi: wi[0] - wi[1], default=(0, 0))
    return f"{worst[0]} wavefronts where {worst[1]} would do in the worst warp"
