"""Coalescing in words: each access's diagnosis, cause and fix, and the lines `irscope report` prints.

The driver (`coalescing`) counts; this reads the counts, strides and alignment it gathered and says
why an access moves more sectors than its bytes need and what to change. A narrow access's words are
rewritten afterwards with the vectorization analysis's reason (`coalescing_width`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from irscope.analysis.coalescing.requests import count_requests
from irscope.analysis.coalescing.width import moved_factor
from irscope.analysis.layouts.owners import BlockedLayout, linear_layout
from irscope.base.target import SECTOR_BYTES

if TYPE_CHECKING:
    from irscope.analysis.coalescing.results import AccessCoalescing


def diagnose(entry: AccessCoalescing) -> None:
    """Fill in the diagnosis and fix of one access, in words."""
    c = entry.counts
    if not entry.analysed or not c.requests:
        return
    spr, ideal = c.sectors_per_request, c.ideal_sectors_per_request
    what = f"{entry.kind} of {entry.param or 'memory'}"
    if not entry.inefficient:
        entry.diagnosis = (
            f"{what}: coalesced — {spr:.1f} sectors per request against an ideal of {ideal:.1f}"
            + _width_text(entry)
        )
        return
    stride = entry.lane_stride_bytes
    cost = c.cost or 1.0
    width = entry.width_bytes or entry.elem_bytes
    head = (
        f"{what}: {spr:.1f} sectors per request where {ideal:.1f} would do — the memory system moves "
        f"{cost:.1f}× the bytes the lanes use ({c.excess_bytes} excess bytes in the sampled programs)"
    )
    contiguous_dims = [d for d, s in entry.dim_strides.items() if s == entry.elem_bytes]
    what_if = f" What if the lanes read adjacent bytes: {ideal:.1f} sectors per request, {cost:.1f}× less traffic."
    if stride is not None and stride > width:
        lane_text = f"neighbouring lanes are {stride} bytes apart"
        if entry.lane_dim is not None and len(entry.shape) > 1:
            block = "×".join(map(str, entry.shape))
            lane_text += f" (lanes step along dimension {entry.lane_dim} of the {block} block)"
        if entry.lane_dim in contiguous_dims:
            entry.cause = "narrow_access"  # each lane's run is contiguous: the access width is what is missing
            per_lane = stride // entry.elem_bytes
            entry.diagnosis = (
                f"{head}; each lane holds {per_lane} adjacent elements ({stride} bytes) but the "
                f"compiler issues {width}-byte accesses, so one instruction touches every "
                f"{per_lane}th element and the next instructions fetch the same sectors again: "
                f"it could not prove the wider access aligned.{what_if}"
            )
            entry.fix = (
                "Let Triton vectorize: pass pointers that are 16-byte aligned (no views such as x[1:]) and "
                "sizes and strides that are multiples of 16 elements — the JIT specializes on divisibility "
                "by 16 — or state it with tl.multiple_of / tl.max_contiguous."
            )
        elif contiguous_dims:
            entry.cause = "lanes_across"
            d = contiguous_dims[0]
            entry.diagnosis = (
                f"{head}; {lane_text}, but the data is contiguous along dimension {d}."
            )
            entry.what_if = _what_if_fastest(entry, d)
            entry.diagnosis += (" What if " + entry.what_if) if entry.what_if else what_if
            entry.fix = (
                f"Make dimension {d} the fastest-varying one for the threads: Triton orders threads by the "
                f"contiguity it can prove, so pass that dimension's stride as 1 (the JIT specializes on 1) "
                f"or as a tl.constexpr, or swap the index roles so the contiguous index is the inner "
                f"(last) one; a block pointer (tl.make_block_ptr with order=) also tells it."
            )
        elif entry.siblings and entry.kind == "load":
            _siblings_words(entry)
        else:
            entry.cause = "strided"
            steps = ", ".join(
                f"{s} bytes ({s // entry.elem_bytes if entry.elem_bytes else s} elements)"
                + (f" along dimension {d}" if len(entry.shape) > 1 else "")
                for d, s in sorted(entry.dim_strides.items())
            )
            if stride >= SECTOR_BYTES:
                sharing = (
                    f"each lane's element sits in its own {SECTOR_BYTES}-byte sector, "
                    f"of which it uses {width} bytes"
                )
            else:  # a few lanes share a sector, and still most of its bytes are not asked for
                per_sector = SECTOR_BYTES // stride
                sharing = (
                    f"{per_sector} lanes share each {SECTOR_BYTES}-byte sector and use {per_sector * width} "
                    f"of its bytes"
                )
            entry.diagnosis = (
                f"{head}; neighbouring elements of the block are {steps or 'far'} apart — a strided "
                f"gather — and {lane_text}: {sharing}.{what_if}"
            )
            entry.fix = (
                "Read contiguous elements: store the data so that the elements one program reads are "
                "adjacent (stride 1 along the index the lanes vary), or load the contiguous block that "
                "contains them and pick the ones you need in registers; if the stride is a "
                "compile-time factor, make the block 2-D ([BLOCK, stride]) so lanes run along the "
                "contiguous dimension."
            )
        return
    off = sum(n for o, n in entry.alignment_offsets.items() if o)
    if off:
        entry.cause = "misaligned_start"
        total = sum(entry.alignment_offsets.values())
        shown = ", ".join(str(o) for o, _ in entry.alignment_offsets.most_common(3) if o)
        entry.diagnosis = (
            f"{head}; the lanes are contiguous, but {off} of {total} executions start off a "
            f"{SECTOR_BYTES}-byte boundary (by {shown} bytes), so requests straddle an extra sector."
        )
        strides = [s for d, s in sorted(entry.dim_strides.items()) if s != entry.elem_bytes]
        entry.fix = (
            "Align the starts: pass tensors (and views such as x[1:]) that begin on a 16-byte boundary, "
            "and make row strides a multiple of 16 elements (pad the rows)"
            + (
                f" — here rows are {_in_elements(strides[0], entry.elem_bytes)} apart"
                if strides
                else ""
            )
            + "; Triton then also emits 16-byte vector accesses."
        )
        return
    lanes = c.active_lanes / c.requests if c.requests else 0
    entry.cause = "idle_lanes"
    entry.diagnosis = (
        f"{head}; on average {lanes:.1f} of {entry.threads_per_warp} lanes are active per request."
    )
    entry.fix = (
        "Match the block to the data: a block shape whose rows fit the tensor (fewer masked-off "
        "lanes), or the contiguous dimension as the block's inner dimension."
    )


def _siblings_words(entry: AccessCoalescing) -> None:
    """A load of one field of an array of structs whose sibling loads read the other fields of the same sectors
    (coalescing_siblings): the sectors per request stand, the traffic is the group's."""

    c = entry.counts
    alone = moved_factor(entry)
    step = entry.dim_strides.get(entry.lane_dim) or min(entry.dim_strides.values(), default=0)
    fields = step // entry.elem_bytes if entry.elem_bytes and step % entry.elem_bytes == 0 else 0
    entry.cause = "sibling_fields"
    entry.diagnosis = (
        f"{entry.kind} of {entry.param or 'memory'}: {c.sectors_per_request:.1f} sectors per request where "
        f"{c.ideal_sectors_per_request:.1f} would do — neighbouring elements are "
        f"{_in_elements(step, entry.elem_bytes)} apart"
        + (f", so alone it uses {1 / alone:.0%} of the bytes of its sectors" if alone else "")
        + f"; but the loads on {lines_text(entry.siblings)} read the other fields of the same sectors: together the "
        f"sectors hold {entry.together_moved:.1f}× the bytes used, so they are fetched once (the siblings' requests "
        f"hit L1/L2) and the cost is {c.cost or 1.0:.1f}× the sectors per request (L1 wavefronts, issue), not "
        f"{c.cost or 1.0:.1f}× the DRAM / L2 traffic."
    )
    tile = (
        (
            f"a [BLOCK, {fields}] tile, the {fields} fields as a contiguous inner dimension ({entry.param} + {fields} "
            f"* index[:, None] + tl.arange(0, {fields})[None, :]), so each lane gets {step} contiguous bytes in one "
            f"vector access"
        )
        if fields > 1
        else "the fields as one tile with the field index as its inner dimension"
    )
    entry.fix = (
        f"Load the fields together: one load of {tile}; then take them apart in registers (tl.split, or a "
        f"sum over the field axis). Or store the data as a structure of arrays, one contiguous array per "
        f"field."
    )


def lines_text(lines: tuple) -> str:
    """`line 13`, `lines 13, 14 and 15`."""
    shown = [str(line) for line in lines]
    if len(shown) == 1:
        return f"line {shown[0]}"
    return "lines " + ", ".join(shown[:-1]) + " and " + shown[-1]


def _in_elements(stride_bytes: int, elem_bytes: int) -> str:
    """A stride as the source writes it, in elements of the pointer's type, with its bytes: `33 elements (132
    bytes)`; in bytes alone where it is not a whole number of elements."""
    if elem_bytes and stride_bytes % elem_bytes == 0:
        return f"{stride_bytes // elem_bytes} elements ({stride_bytes} bytes)"
    return f"{stride_bytes} bytes"


def _what_if_fastest(entry: AccessCoalescing, dim: int) -> str:
    """Recount one recorded execution with a blocked layout whose threads run fastest along `dim`:
    the layout's per-dimension sizes moved over from its fastest dimension, the order rotated."""
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
    moved = BlockedLayout(
        swap(layout.size_per_thread),
        swap(layout.threads_per_warp),
        swap(layout.warps_per_cta),
        order,
    )
    linear = linear_layout(moved, entry.shape)
    if linear is None:
        return ""
    width = min(16, layout.size_per_thread[fast] * entry.elem_bytes) // entry.elem_bytes or 1
    batch = count_requests(
        addresses,
        mask,
        entry.elem_bytes,
        linear,
        max(vector, width),
        entry.kind,
        want_picture=False,
        op=entry.op,
    )
    c = batch.counts
    if not c.requests:
        return ""
    return (
        f"the threads ran along dimension {dim} ({moved.describe()}): {c.sectors_per_request:.1f} sectors "
        f"per request against an ideal of {c.ideal_sectors_per_request:.1f}, {c.requests} requests instead of "
        f"{_requests_of_sample(entry)} for the same execution."
    )


def _requests_of_sample(entry: AccessCoalescing) -> int:
    addresses, mask, layout, vector = entry.sample
    linear = linear_layout(layout, entry.shape)
    return count_requests(
        addresses,
        mask,
        entry.elem_bytes,
        linear,
        vector,
        entry.kind,
        want_picture=False,
        op=entry.op,
    ).counts.requests


def _width_text(entry: AccessCoalescing) -> str:
    if entry.width_bytes:
        return f" ({entry.width_bytes}-byte accesses per lane)"
    return ""


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
            parts.append(
                f"{kind} {t['sectors_per_request']} sectors/request (ideal {t['ideal_sectors_per_request']})"
            )
    out.append(f"  coalescing {'  '.join(parts)}  [{sampled}]")
    fixed_at: dict[str, Any] = {}  # a fix already printed -> the line it was printed for
    for row in rows:
        if not row["analysed"]:
            out.append(
                f"    line {row['source_line']}: {row['kind']} not analysed: {row['reason']}"
            )
            continue
        flag = "" if (row["efficiency"] or 0) >= 0.9 else "  <-- uncoalesced"
        out.append(
            f"    line {row['source_line']}: {row['kind']:5} {row['param'] or '?'}  "
            f"{row['sectors_per_request']} sectors/request, ideal {row['ideal_sectors_per_request']}, "
            f"efficiency {row['efficiency']:.0%}{flag}"
        )
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
