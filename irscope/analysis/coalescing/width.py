"""The words for an access that is uncoalesced only because it is narrow (cause "narrow_access").

Each lane owns a run of adjacent elements and the compiler moves one element per instruction: a request
spans several times the ideal sectors, but the next instructions of the run ask for the same sectors.
What is multiplied is the number of instructions and of sector requests (L1 wavefronts for loads,
partial sector writes into L2 for stores), not the bytes brought from memory: over one execution the
distinct sectors hold about the bytes the lanes use. So the text says sectors requested and sectors
moved apart, and blames what kept the access narrow, the argument the vectorization analysis names
(`n_elements = 1000`, a view like `x[1:]`), as `irscope report` does, rather than a guess.
"""

from __future__ import annotations

import numpy as np

from irscope.analysis.vectorize.what_if import vectorization
from irscope.base.compiled import LaunchedKernel
from irscope.base.target import SECTOR_BYTES


def explain_narrow(entries: list, comp: LaunchedKernel) -> None:
    """Rewrite the diagnosis and fix of each narrow access in `entries` (AccessCoalescing)."""
    narrow = [e for e in entries if e.cause == "narrow_access" and e.counts.requests]
    if not narrow:
        return
    diagnoses = _width_diagnoses(comp)
    for entry in narrow:
        reasons = _reasons_for(entry, diagnoses)
        entry.diagnosis = narrow_text(entry, moved_factor(entry), [r.text for r in reasons])
        if reasons:
            fix = "; ".join(dict.fromkeys(r.fix for r in reasons))
            entry.fix = fix[:1].upper() + fix[1:] + "."


def narrow_text(entry, moved: float | None, reasons: list[str]) -> str:
    c = entry.counts
    width = entry.width_bytes or entry.elem_bytes
    run = entry.lane_stride_bytes or width
    per_lane = max(1, run // width)
    what = f"{entry.kind} of {entry.param or 'memory'}"
    text = (
        f"{what}: each lane owns {run} adjacent bytes and one instruction moves {width} of them, so a request "
        f"spans {c.sectors_per_request:.1f} sectors where {c.ideal_sectors_per_request:.1f} would do and the "
        f"next {per_lane - 1} instructions ask for the same sectors again. Sectors requested: "
        f"{c.cost or 1.0:.1f}× the ideal ({c.sectors} for {c.requests} requests)"
    )
    if moved is not None:
        where = (
            "L1 serves the loads' re-reads"
            if entry.kind == "load"
            else "L2 merges the stores' partial writes"
        )
        text += (
            f"; sectors moved: {moved:.1f}× the bytes used ({where}) — {per_lane}× the instructions and "
            f"requests, not {c.cost or 1.0:.1f}× the memory traffic"
        )
    text += ". "
    if reasons:
        text += "Triton kept it narrow because " + "; and ".join(reasons) + "."
    else:
        text += "Triton could not prove the wider access safe (irscope found no argument that explains it)."
    return text + (
        f" What if each lane moved its {min(run, 16)} bytes at once: "
        f"{c.ideal_sectors_per_request:.1f} sectors per request, 1/{per_lane} of the instructions."
    )


def moved_factor(entry) -> float | None:
    """Distinct 32-byte sectors of one recorded execution, in bytes, over the distinct bytes it uses."""
    if entry.sample is None or not entry.elem_bytes:
        return None
    addresses, mask = np.asarray(entry.sample[0]).reshape(-1), entry.sample[1]
    if mask is not None:
        addresses = addresses[np.asarray(mask, bool).reshape(-1)]
    if not addresses.size:
        return None
    return (
        len(np.unique(addresses // SECTOR_BYTES))
        * SECTOR_BYTES
        / (len(np.unique(addresses)) * entry.elem_bytes)
    )


def _width_diagnoses(comp: LaunchedKernel) -> list:

    try:
        return vectorization(comp, with_what_if=False)[0]
    except Exception:  # noqa: BLE001 - without it the text says it found no argument; the counts stand
        return []


def _reasons_for(entry, diagnoses: list) -> list:
    """The reasons the vectorization analysis gives for this access (same line, op and pointer)."""
    for d in diagnoses:
        if (
            d.source_line == entry.source_line
            and d.op == entry.kind
            and (d.pointer is None or entry.param is None or d.pointer == entry.param)
        ):
            return [r for r in d.reasons if r.kind not in ("layout", "constant_stride")]
    return []
