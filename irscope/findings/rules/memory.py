"""Rules about global memory: `uncoalesced`, `not-vectorized`, `masked-tail`.

They read what the analyses already hold: the narrow accesses and their causes (`vectorize.py`, with
the what-if recompile), and the sectors each warp-level request touches from the launch's real addresses
(`coalescing.py`). An access that is uncoalesced only because it is narrow (each lane's elements are
contiguous, the compiler issued one element at a time, so each request spans four times the sectors and
the next three instructions fetch the same sectors again, from L1) is one finding, about the width: its
cause is the argument that kept it narrow, not the addresses.
"""

from __future__ import annotations

import numpy as np

from irscope.analysis.coalescing.sectors import analyze_coalescing
from irscope.analysis.coalescing.text import lines_text
from irscope.analysis.vectorize.reasons import VECTOR_BYTES
from irscope.analysis.vectorize.what_if import vectorization
from irscope.analysis.vectorize.why_not import Diagnosis
from irscope.base.compiled import CompiledKernel, LaunchedKernel
from irscope.base.names import frontend_stage
from irscope.base.target import DRAM_FETCH_BYTES, SECTOR_BYTES
from irscope.findings.model import Cost, Finding, WhatIf

_WIDTH_CAUSES = {
    "unaligned_pointer",
    "unaligned_offset",
    "runtime_stride",
    "not_specialized",
    "mask_not_divisible",
    "unknown",
}


def access_findings(comp: LaunchedKernel, new) -> list[Finding]:
    """`new(rule, severity, source_line, message, fix, cost, weight, what_if=None, stage=..., stage_line=...)`
    builds a Finding with the kernel, file, column and source text filled in (engine.py)."""
    diagnoses, what_if = vectorization(comp)
    coalescing = _coalescing(comp)
    out: list[Finding] = []
    folded: set[tuple] = set()
    for d in diagnoses:
        found = _width_finding(comp, d, what_if, coalescing, new)
        if found is not None:
            out.append(found)
            folded.add((d.source_line, d.op))
    pairs = _pair_factors(comp) if coalescing else {}
    for access in coalescing:
        if access.inefficient and access.analysed and access.counts.requests:
            if access.cause == "narrow_access" and (access.source_line, access.kind) in folded:
                continue
            out.append(_uncoalesced(access, new, pairs.get(access.param, 1.0)))
    return out


def _pair_factors(comp: LaunchedKernel) -> dict[str, float]:
    """Argument -> the bytes DRAM reads of it over its sectors' bytes: 1.0 where DRAM moves sectors (AMD, or
    every sector of each pair read), 2.0 where an NVIDIA L2 fetches the 64-byte pair of each sector read alone."""
    work = analyze_coalescing(comp).work
    return {
        name: pieces * work.read_piece / (sectors * SECTOR_BYTES)
        for name, pieces in work.fetched.items()
        if (sectors := work.distinct.get((name, "read"), 0))
    }


def _coalescing(comp: LaunchedKernel) -> list:
    """The coalescing analysis' accesses: none when there are no real addresses (no launch, or the
    interpreter could not run it), and then no finding is made from addresses."""
    try:
        return analyze_coalescing(comp).accesses
    except Exception:  # noqa: BLE001 - the report says why in its coalescing section
        return []


def _width_finding(comp: CompiledKernel, d: Diagnosis, what_if, coalescing, new) -> Finding | None:
    if d.width_bytes is None or not d.reasons:
        return None
    allowed = VECTOR_BYTES
    if d.contiguous_per_thread and d.elem_bytes:
        allowed = min(VECTOR_BYTES, d.contiguous_per_thread * d.elem_bytes)
    kinds = {r.kind for r in d.reasons}
    if allowed <= d.width_bytes or not kinds & _WIDTH_CAUSES:
        return None  # a constant stride (no contiguous run) or a small layout: nothing wider is possible
    only_mask = kinds <= {"mask_not_divisible"} or (
        kinds <= {"mask_not_divisible", "not_specialized"} and "mask_not_divisible" in kinds
    )
    rule = "masked-tail" if only_mask else "not-vectorized"
    what = f"{d.op} of {d.pointer}" if d.pointer else d.op
    causes = [r for r in d.reasons if r.kind in _WIDTH_CAUSES]
    message = (
        f"{what}: {d.width_bytes} B per thread where the layout allows {allowed} B — "
        + "; and ".join(r.text for r in causes)
    )
    fix = "; ".join(dict.fromkeys(r.fix for r in causes))
    factor = allowed // d.width_bytes
    cost_text = f"{d.width_bytes} of {allowed} B per access: {factor}× the {d.op} instructions"
    access = next(
        (
            a
            for a in coalescing
            if a.source_line == d.source_line
            and a.kind == d.op
            and a.cause == "narrow_access"
            and a.counts.requests
        ),
        None,
    )
    if access is not None:
        c = access.counts
        cost_text += (
            f"; each request spans {c.sectors_per_request:.1f} sectors where {c.ideal_sectors_per_request:.1f} "
            f"would do (the next instructions fetch the same sectors again)"
        )
    return new(
        rule,
        "warning",
        d.source_line,
        message,
        fix,
        Cost(allowed - d.width_bytes, "vector_bytes_lost", cost_text),
        1 - d.width_bytes / allowed,
        _what_if_text(what_if, d),
        stage=frontend_stage(
            comp.stage_names
        ),  # the stage why_not read: TTIR, a Gluon kernel's TTGIR
        stage_line=d.ttir_line,
    )


def _what_if_text(what_if, d: Diagnosis) -> WhatIf | None:
    if what_if is None or what_if.comp is None:
        return None
    if not what_if.comp.ok:
        return WhatIf(
            "recompiled with " + "; ".join(what_if.changes) + ": it did not compile", True
        )
    row = next(
        (r for r in what_if.rows if r["source_line"] == d.source_line and r["op"] == d.op), None
    )
    if row is None:
        return None
    before = "?" if row["before"] is None else f"{row['before']} B"
    after = "?" if row["after"] is None else f"{row['after']} B"
    return WhatIf(
        f"recompiled with {'; '.join(what_if.changes)}: {before} -> {after} per thread", True
    )


def _uncoalesced(access, new, pair_factor: float = 1.0) -> Finding:
    """`pair_factor`: what DRAM reads of the access's argument over its sectors (`_pair_factors`)."""
    c = access.counts
    spr, ideal = c.sectors_per_request, c.ideal_sectors_per_request
    efficiency = c.efficiency or 0.0
    if access.cause == "narrow_access":
        return _rereads(access, new)
    fetched = _fetched_factor(access)
    per_request = f"{spr:.1f} sectors per request where {ideal:.1f} would do"
    if access.cause == "sibling_fields":
        # the other fields' loads read the rest of the same sectors: fetched once, so not a traffic loss
        text = (
            f"{per_request} (L1 wavefronts); with the loads on {lines_text(access.siblings)} the sectors hold "
            f"{access.together_moved:.1f}× the bytes used: not more DRAM / L2 traffic"
        )
        cost = Cost(round(spr - ideal, 2), "excess_sectors_per_request", text)
        message = (
            f"{access.kind} of {access.param or 'memory'}: " + access.diagnosis.split(" — ", 1)[-1]
        )
        return new(
            "uncoalesced",
            "info",
            access.source_line,
            message,
            access.fix,
            cost,
            1 - 1 / max(access.together_moved, 1.0) if access.together_moved else 0.0,
            stage="ttgir",
            stage_line=access.stage_line,
        )
    if fetched is not None and fetched < 0.9 * (c.cost or 0):
        # later requests of the same access read sectors earlier ones fetched: L1 hits, not DRAM traffic
        severity = "warning" if fetched >= 2 else "info"
        text = (
            f"{per_request}; over one execution of the access the sectors hold {fetched:.1f}× the bytes it "
            f"uses (the other requests touch the same sectors again)"
        )
    else:
        severity = "warning" if efficiency <= 0.5 else "info"
        text = (
            f"{per_request}: {c.cost:.1f}× the bytes the lanes use ({c.excess_bytes} excess bytes in the "
            f"programs sampled)"
        )
        if access.kind == "load" and pair_factor >= 1.5:
            text += (
                f"; DRAM reads the {DRAM_FETCH_BYTES}-byte pair of each sector, {pair_factor:.2g}× the sectors of "
                f"{access.param}: about {c.cost * pair_factor:.0f}× from DRAM"
            )
    cost = Cost(round(spr - ideal, 2), "excess_sectors_per_request", text)
    message, what_if = _cause_and_what_if(access)
    return new(
        "uncoalesced",
        severity,
        access.source_line,
        message,
        access.fix,
        cost,
        1 - efficiency,
        what_if,
        stage="ttgir",
        stage_line=access.stage_line,
    )


def _fetched_factor(access) -> float | None:
    """Distinct 32-byte sectors of one recorded execution of the access, in bytes, over the distinct bytes it
    asks for: what the memory system must bring in once, whatever order the requests come in."""
    if access.sample is None or not access.elem_bytes:
        return None
    addresses, mask = np.asarray(access.sample[0]).reshape(-1), access.sample[1]
    if mask is not None:
        addresses = addresses[np.asarray(mask, bool).reshape(-1)]
    if not addresses.size:
        return None
    return (
        len(np.unique(addresses // SECTOR_BYTES))
        * SECTOR_BYTES
        / (len(np.unique(addresses)) * access.elem_bytes)
    )


def _cause_and_what_if(access) -> tuple[str, WhatIf | None]:
    """The coalescing diagnosis without its opening numbers (the cost says them) and with its closing
    "What if" moved to the what-if: a recount of the recorded addresses, not a recompile."""
    what = f"{access.kind} of {access.param or 'memory'}"
    text = access.diagnosis
    if "; " in text:
        text = f"{what}: " + text.split("; ", 1)[1]
    recount = access.what_if or None
    if " What if " in text:
        text, tail = text.split(" What if ", 1)
        recount = recount or tail
    if recount:
        return text, WhatIf(
            recount + " (a recount of the recorded addresses, not a recompile)", False
        )
    return text, None


def _rereads(access, new) -> Finding:
    """Each lane's run is contiguous and wider than one instruction moves, and no argument keeps the access
    narrow (else it is a not-vectorized finding): the following instruction reads the rest of the same
    sectors, which L1 usually still holds. More requests and L1 wavefronts, not more DRAM traffic."""
    c = access.counts
    stride = access.lane_stride_bytes or 0
    width = access.width_bytes or access.elem_bytes
    message = (
        f"{access.kind} of {access.param or 'memory'}: each lane owns {stride} adjacent bytes and one "
        f"instruction moves {width} of them, so a request spans {c.sectors_per_request:.1f} sectors where "
        f"{c.ideal_sectors_per_request:.1f} would do and the next instruction reads the rest of the same "
        f"sectors (usually from L1: more requests, not more DRAM traffic)"
    )
    fix = (
        f"give each thread a run of {width} bytes (fewer elements per thread: more num_warps for the same "
        f"BLOCK), so that one request covers whole sectors"
        if width >= VECTOR_BYTES
        else access.fix
    )
    cost = Cost(
        round(c.sectors_per_request - c.ideal_sectors_per_request, 2),
        "excess_sectors_per_request",
        f"{c.sectors_per_request:.1f} sectors per request where {c.ideal_sectors_per_request:.1f} would do, "
        f"the same sectors read again by the next instruction",
    )
    return new(
        "uncoalesced",
        "info",
        access.source_line,
        message,
        fix,
        cost,
        1 - (c.efficiency or 0.0),
        stage="ttgir",
        stage_line=access.stage_line,
    )
