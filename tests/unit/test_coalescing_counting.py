"""Lane → sector counting on hand-made layouts and address patterns, layouts against Triton's own,
and the analysis of real example kernels against what Nsight Compute measured on an H100."""

from __future__ import annotations

import random

import numpy as np
import pytest

from irscope.analysis.coalescing.requests import count_executions, count_requests, scalar_layout
from irscope.analysis.coalescing.sectors import sample_programs
from irscope.analysis.layouts.owners import (
    BlockedLayout,
    LinearLayout,
    SliceLayout,
    blocked_linear_layout,
    linear_layout,
    slice_linear_layout,
)
from irscope.analysis.layouts.parse import layout_aliases, parse_layout
from irscope.analysis.memory.ttgir import ttgir_access_ops


def blocked(spt, tpw, wpc, order):
    return BlockedLayout(tuple(spt), tuple(tpw), tuple(wpc), tuple(order))


ROW_1D = blocked([4], [32], [4], [0])  # add.py's layout: 4 fp32 per lane, 16-byte vectors


def count(addresses, layout, shape, vector, kind="load", mask=None, elem=4):
    ll = linear_layout(layout, shape)
    return count_requests(np.asarray(addresses).reshape(shape), mask, elem, ll, vector, kind)


def test_executions_counted_together_are_the_sum_of_each_and_draw_the_first_most_wasteful():
    """count_executions (a loop's trips in one pass) against count_requests once per trip: the same counts and
    lane strides, and the picture of the first trip that wastes the most sectors (a later trip wasting as
    much does not replace it, as the per-trip loop kept the first)."""
    layout = linear_layout(blocked([2, 4], [4, 8], [4, 1], [1, 0]), (32, 32))
    rng = random.Random(7)
    trips, masks = [], []
    for trip in range(6):
        row_bytes = [128, 4096, 128, 4096, 256, 128][trip]
        rows = np.arange(32)[:, None] * row_bytes + np.arange(32)[None, :] * 4 + trip * 8192
        trips.append(rows.reshape(-1))
        masks.append(np.array([rng.random() > 0.2 for _ in range(1024)]))
    masks[0] = None
    one_by_one = [count_requests(a, m, 4, layout, 2, "load") for a, m in zip(trips, masks)]
    active = np.stack([np.ones(1024, bool) if m is None else m for m in masks])
    together = count_executions(np.stack(trips), active, 4, layout, 2, "load")
    summed = one_by_one[0].counts
    for each in one_by_one[1:]:
        summed.add(each.counts)
    assert together.counts == summed and summed.requests > 0
    strides = sum((each.lane_strides for each in one_by_one), type(together.lane_strides)())
    assert together.lane_strides == strides and len(strides) > 1
    waste = [b.worst.sectors - b.worst.ideal_sectors for b in one_by_one]
    first_worst = waste.index(max(waste))
    assert waste.count(max(waste)) > 1 and first_worst == 1  # trips 1 and 3 tie: the first is drawn
    assert together.worst.lanes == one_by_one[first_worst].worst.lanes
    assert together.worst == one_by_one[first_worst].worst


# ---------------------------------------------------------------------------------------------- layouts


def test_blocked_layout_elements_per_thread():
    ll = blocked_linear_layout(ROW_1D, (1024,))
    index = ll.element_index()
    assert index.shape == (4, 32, 8)  # warps, lanes, registers (the 512-element tile wraps once)
    assert list(index[0, 0]) == [0, 1, 2, 3, 512, 513, 514, 515]
    assert list(index[1, 2, :4]) == [128 + 8, 128 + 9, 128 + 10, 128 + 11]


def test_blocked_order_picks_the_fastest_dimension():
    ll = blocked_linear_layout(blocked([1, 4], [2, 16], [4, 1], [1, 0]), (64, 64))
    coords = ll.coordinates()
    assert tuple(coords[0, 1, 0]) == (0, 4)  # lane 1: four columns on
    assert tuple(coords[0, 16, 0]) == (1, 0)  # lane 16: next row
    column_major = blocked_linear_layout(blocked([4, 1], [16, 2], [1, 4], [0, 1]), (64, 64))
    assert tuple(column_major.coordinates()[0, 1, 0]) == (4, 0)


def test_small_tensor_broadcasts_lanes_and_warps():
    ll = blocked_linear_layout(ROW_1D, (64,))
    assert ll.num_registers == 4
    index = ll.element_index()
    assert (index[:, 16:] == index[:, :16]).all()  # lanes 16..31 repeat lanes 0..15
    assert (index[1:] == index[0]).all()  # warps 1..3 repeat warp 0
    assert ll.free_lane_mask == 0b10000 and ll.free_warp_mask == 0b11


def test_slice_layout_of_a_2d_parent():
    parent = blocked([1, 8], [2, 16], [4, 1], [1, 0])
    ll = slice_linear_layout(SliceLayout(0, parent), (128,))
    assert ll.reg_bases == ((1,), (2,), (4,))
    assert ll.lane_bases[-1] == (0,)  # the row bit of the lane no longer moves anything


def test_parse_ttgir_layouts():
    text = (
        "#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], "
        "order = [1, 0]}>\nmodule attributes {} {\n}"
    )
    aliases = layout_aliases(text)
    assert aliases["#blocked"] == blocked([1, 8], [2, 16], [4, 1], [1, 0])
    sliced = parse_layout("#ttg.slice<{dim = 0, parent = #blocked}>", aliases)
    assert sliced == SliceLayout(0, aliases["#blocked"])


def _triton_builder():
    gl = pytest.importorskip("triton.experimental.gluon.language")
    from triton._C.libtriton import gluon_ir, ir

    if not hasattr(gluon_ir.GluonOpBuilder, "to_linear_layout"):
        pytest.skip("this Triton does not expose linear layouts to Python")
    context = ir.context()
    ir.load_dialects(context)
    return gl, gluon_ir.GluonOpBuilder(context), context


def _bases(ll):
    """The bases, registers that repeat another register (zero bases) left out: Triton 3.6 keeps them when
    sizePerThread is larger than the tensor (`[[1, 0], [0, 1], [0, 0], [0, 0]]`), 3.7+ and irscope drop
    them. They hold no new element, and the counting skips repeated registers, so both forms count alike."""
    regs = tuple(tuple(b) for b in ll.reg_bases if any(b))
    return (regs, tuple(map(tuple, ll.lane_bases)), tuple(map(tuple, ll.warp_bases)))


def test_blocked_and_slice_layouts_equal_tritons_own():
    gl, builder, _context = _triton_builder()
    rng = random.Random(7)

    def split(total, rank):
        parts = [1] * rank
        while total > 1:
            parts[rng.randrange(rank)] *= 2
            total //= 2
        return parts

    for _ in range(60):
        rank = rng.choice([1, 2, 3])
        spt = [rng.choice([1, 2, 4, 8]) for _ in range(rank)]
        tpw, wpc = split(32, rank), split(rng.choice([1, 4, 8]), rank)
        order = list(range(rank))
        rng.shuffle(order)
        shape = [2 ** rng.randint(0, 7 if rank < 3 else 4) for _ in range(rank)]
        mine = blocked_linear_layout(blocked(spt, tpw, wpc, order), tuple(shape))
        theirs = builder.to_linear_layout(
            gl.BlockedLayout(spt, tpw, wpc, order)._to_ir(builder), shape
        )
        assert _bases(mine) == _bases(theirs), (spt, tpw, wpc, order, shape)
        as_triton = LinearLayout(
            tuple(shape),
            *(
                tuple(map(tuple, b))
                for b in (theirs.reg_bases, theirs.lane_bases, theirs.warp_bases)
            ),
        )
        addresses = (np.arange(int(np.prod(shape))) * 4).reshape(shape)
        vector = as_triton.contiguous_registers()  # the widest vector Triton's own layout allows
        for kind in ("load", "store"):
            assert (
                count_requests(addresses, None, 4, mine, vector, kind).counts
                == count_requests(addresses, None, 4, as_triton, vector, kind).counts
            ), (spt, shape, kind)
        if rank > 1:
            dim = rng.randrange(rank)
            sliced = tuple(s for d, s in enumerate(shape) if d != dim)
            mine = slice_linear_layout(SliceLayout(dim, blocked(spt, tpw, wpc, order)), sliced)
            theirs = builder.to_linear_layout(
                gl.SliceLayout(dim, gl.BlockedLayout(spt, tpw, wpc, order))._to_ir(builder),
                list(sliced),
            )
            assert _bases(mine) == _bases(theirs), (dim, spt, tpw, wpc, order, sliced)


# ---------------------------------------------------------------------------------------------- counting


def test_contiguous_vector_access_is_ideal():
    batch = count(np.arange(1024) * 4, ROW_1D, (1024,), vector=4)
    c = batch.counts
    assert c.requests == 8  # 4 warps × 2 vector instructions per lane
    assert c.sectors == 8 * 16 and c.ideal_sectors == 8 * 16
    assert c.lines == 8 * 4
    assert c.efficiency == 1.0 and c.excess_bytes == 0


def test_contiguous_scalar_access_is_ideal():
    batch = count(np.arange(1024) * 4, blocked([1], [32], [4], [0]), (1024,), vector=1)
    assert batch.counts.requests == 32 and batch.counts.sectors_per_request == 4.0
    assert batch.counts.ideal_sectors_per_request == 4.0


def test_strided_access_pulls_a_sector_per_lane():
    batch = count(np.arange(1024) * 8 * 4, ROW_1D, (1024,), vector=1)
    c = batch.counts
    assert c.requests == 32  # 4 warps × 8 scalar loads
    assert c.sectors_per_request == 32.0 and c.ideal_sectors_per_request == 4.0
    assert c.efficiency == 0.125 and c.cost == 8.0
    # 4 elements per lane, 32 bytes each
    assert batch.lane_strides.most_common(1)[0][0] == 4 * 8 * 4
    assert batch.worst.lane_sectors()[1][0] - batch.worst.lane_sectors()[0][0] == 4


def test_unvectorized_contiguous_access_touches_each_sector_per_instruction():
    # misaligned.py, n = 1000: 4 elements per lane but scalar instructions
    batch = count(np.arange(1024) * 4, ROW_1D, (1024,), vector=1, mask=np.arange(1024) < 1000)
    assert batch.counts.requests == 32 and batch.counts.sectors == 500


def test_misaligned_start_adds_a_sector():
    batch = count(np.arange(128) * 4 + 4, blocked([1], [32], [4], [0]), (128,), vector=1)
    assert batch.counts.requests == 4
    assert batch.counts.sectors == 4 * 5 and batch.counts.ideal_sectors == 4 * 4


def test_broadcast_loads_every_lane_but_stores_once():
    addresses = np.arange(64) * 4
    load = count(addresses, ROW_1D, (64,), vector=4, kind="load").counts
    assert load.requests == 4  # each warp loads its own copy
    assert load.sectors_per_request == 8.0 and load.ideal_sectors_per_request == 8.0
    store = count(addresses, ROW_1D, (64,), vector=4, kind="store").counts
    assert store.requests == 1  # Triton predicates the repeated lanes and warps off
    assert store.sectors == 8 and store.active_lanes == 16


def test_masked_tail_counts_only_active_lanes_and_skips_empty_warps():
    mask = np.arange(1024) < 781
    batch = count(np.arange(1024) * 4, blocked([1], [32], [4], [0]), (1024,), vector=1, mask=mask)
    c = batch.counts
    assert c.requests == 25  # ceil(781 / 32) instructions with a lane on
    assert c.sectors == 24 * 4 + 2 and c.bytes_requested == 781 * 4


def test_scalar_store_is_one_request_and_scalar_load_one_per_warp():
    layout = scalar_layout(4, 32)
    store = count_requests(np.array([8]), None, 4, layout, 1, "store").counts
    load = count_requests(np.array([8]), None, 4, layout, 1, "load").counts
    assert (store.requests, store.sectors) == (1, 1)
    assert (load.requests, load.sectors) == (4, 4)


def test_transposed_access_lanes_step_across_rows():
    # a 64×64 fp32 tile stored column-major in memory but held row-major by the threads: lanes 0-15
    # step 4 columns (1 KB) apart, lanes 16-31 take the next row, 4 bytes on, so pairs share a sector
    rows, cols = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    addresses = (cols * 64 + rows) * 4
    batch = count(addresses, blocked([1, 4], [2, 16], [4, 1], [1, 0]), (64, 64), vector=1)
    c = batch.counts
    assert c.sectors_per_request == 16.0 and c.ideal_sectors_per_request == 4.0
    assert batch.lane_strides.most_common(1)[0][0] == 4 * 64 * 4


def test_sample_programs():
    assert len(sample_programs((4, 1, 1), 8)) == 4
    picks = sample_programs((100, 1, 1), 8)
    assert picks[0] == (0, 0, 0) and picks[-1] == (99, 0, 0) and len(picks) == 8
    assert sample_programs((2, 3, 1), 8)[-1] == (1, 2, 0)
    assert sample_programs((100, 1, 1), 1) == [(0, 0, 0)]


# ---------------------------------------------------------------------------------------------- TTGIR


def compiled(name, target="sm_90"):
    from conftest import kernel_path

    from irscope.engine.session import open_file

    return open_file(kernel_path(name), target=target).compile_all()


def test_ttgir_access_ops_of_transpose():
    comp = compiled("transpose.py")[0]
    ops = ttgir_access_ops(comp.stage("ttgir"))
    assert [(o.kind, o.shape, o.source_line) for o in ops] == [
        ("load", (64, 64), 26),
        ("store", (64, 64), 30),
    ]
    assert ops[0].layout == blocked([1, 4], [2, 16], [4, 1], [1, 0])


# ---------------------------------------------------------------------------------------------- kernels
# Nsight Compute on an H100 (docs/ncu_raw.csv): sectors / requests, loads and stores, whole grid.


def analysed(comp):
    from irscope.analysis.coalescing.sectors import analyze_coalescing

    return analyze_coalescing(comp, max_programs=10**6)


@pytest.mark.parametrize(
    "name, loads, stores",
    [
        ("strided.py", (4096, 128), (512, 32)),
        ("add.py", (1024, 64), (512, 32)),
        ("helper.py", (1000, 256), (16, 16)),
        ("gelu.py", (1088, 96), (1024, 64)),
    ],
)
def test_kernel_counts_equal_nsight_compute(name, loads, stores):
    result = analysed(compiled(name)[0])
    assert (result.loads.sectors, result.loads.requests) == loads
    assert (result.stores.sectors, result.stores.requests) == stores
    assert result.error is None and not result.notes


def test_misaligned_launches_equal_nsight_compute():
    comps = compiled("misaligned.py")
    assert len(comps) == 2
    counts = [
        (r.loads.sectors, r.loads.requests, r.stores.sectors, r.stores.requests)
        for r in map(analysed, comps)
    ]
    assert counts == [(1000, 64, 500, 32), (4158, 256, 2048, 128)]


def test_strided_diagnosis_names_the_stride_and_the_cost():
    result = analysed(compiled("strided.py")[0])
    load = next(a for a in result.accesses if a.kind == "load")
    assert load.source_line == 26 and load.param == "x_ptr"
    assert load.counts.sectors_per_request == 32.0 and load.counts.ideal_sectors_per_request == 4.0
    assert "32 bytes (8 elements)" in load.diagnosis and "8.0×" in load.diagnosis
    assert load.fix
    store = next(a for a in result.accesses if a.kind == "store")
    assert store.counts.efficiency == 1.0 and "coalesced" in store.diagnosis
    assert load.picture is not None and sum(1 for lane in load.picture.lanes if lane) == 32


def test_add_is_ideal_and_json_shape():
    result = analysed(compiled("add.py")[0])
    rows = result.to_json()
    assert [r["source_line"] for r in rows] == [26, 27, 28]
    for row in rows:
        assert row["sectors_per_request"] == 16.0 and row["ideal_sectors_per_request"] == 16.0
        assert row["efficiency"] == 1.0 and row["op"] in ("tt.load", "tt.store")
        assert isinstance(row["ttgir_line"], int) and row["ttgir_line"] >= 1


def test_layouts_triton_builds_are_used_for_other_layouts():
    """gelu.py's TTGIR with its 2-D layout swapped for an MMA layout: irscope cannot build that one
    itself, so it asks Triton for the linear layout (where this Triton exposes it) and counts with it."""
    import copy
    import re

    from irscope.analysis.coalescing.sectors import analyze_coalescing
    from irscope.engine.triton_compat import ttgir_access_linear_layouts

    comp = compiled("gelu.py")[0]
    ttgir = comp.stage("ttgir")
    if ttgir_access_linear_layouts(ttgir) is None:
        pytest.skip("this Triton does not expose linear layouts to Python")
    mma = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>"
    swapped = re.sub(r"#blocked = #ttg\.blocked<\{[^}]*\}>", "#blocked = " + mma, ttgir, count=1)
    other = copy.copy(comp)
    other.asm = {**comp.asm, "ttgir": swapped}
    other.__dict__.pop("_coalescing", None)
    result = analyze_coalescing(other, max_programs=1)
    x_load = next(a for a in result.accesses if a.kind == "load" and a.shape == (16, 128))
    assert x_load.analysed and x_load.layout == "nvidia_mma"
    # per instruction: 2 fp16 per lane, 4 lanes along a row, 8 rows 512 bytes apart
    assert (
        x_load.counts.sectors_per_request == 8.0 and x_load.counts.ideal_sectors_per_request == 4.0
    )


def test_linear_layout_attribute_is_read_directly():
    from irscope.analysis.layouts.owners import LinearLayoutAttr

    text = (
        "#ttg.linear<{register = [[0, 1], [0, 2], [32, 0]], lane = [[0, 4], [0, 8], [1, 0]], "
        "warp = [[2, 0]], block = []}>"
    )
    layout = parse_layout(text, {})
    assert isinstance(layout, LinearLayoutAttr)
    ll = linear_layout(layout, (64, 16))
    assert ll.num_registers == 8 and ll.contiguous_registers() == 4


def test_threads_along_the_strided_dimension_get_the_order_fix_and_a_what_if():
    """With the strides hidden from it, the compiler guesses which dimension is contiguous: Triton 3.7+
    keeps the threads along the last one (wrong for column_major.py's transposed data), 3.6 runs them down
    the first (wrong for hidden_strides.py's row-major data). The wrong guess gets the order fix."""
    import triton
    from conftest import fixture_path

    from irscope.engine.session import open_file

    loads = {}
    for name in ("column_major.py", "hidden_strides.py"):
        comp = open_file(fixture_path(name), target="sm_90").compile_all()[0]
        result = analysed(comp)
        loads[name] = (result, next(a for a in result.accesses if a.kind == "load"))
    strided = [
        name for name, (_, load) in loads.items() if "contiguous along dimension" in load.diagnosis
    ]
    old_guess = tuple(int(v) for v in triton.__version__.split(".")[:2]) < (3, 7)
    assert strided == (["hidden_strides.py"] if old_guess else ["column_major.py"])
    # contiguous dimension, sectors per request, and with the threads along it (1 or 4 fp32 per lane)
    dim, sectors, fixed = {"column_major.py": (0, 16.0, 16.0), "hidden_strides.py": (1, 32.0, 4.0)}[
        strided[0]
    ]
    result, load = loads[strided[0]]
    assert (
        load.counts.sectors_per_request == sectors and load.counts.ideal_sectors_per_request == 4.0
    )
    assert f"contiguous along dimension {dim}" in load.diagnosis and f"dimension {dim}" in load.fix
    assert f"{fixed} sectors per request against an ideal of {fixed}" in load.what_if
    other = next(candidate for name, (_, candidate) in loads.items() if name not in strided)
    assert (
        "contiguous along dimension" not in other.diagnosis and "fastest-varying" not in other.fix
    )
    lines = {e.source_line: e for e in result.by_source_line()}
    assert lines[load.source_line].loads.requests == load.counts.requests
    assert lines[load.source_line].stores.requests == 0


def test_a_load_the_compiler_makes_in_two_layouts_is_counted_in_each(tmp_path):
    """Liger's RoPE (a real library, tests/corpus/drivers/liger_rope.py): Triton loads `cos_row` (line 69 of
    liger_kernel/ops/rope.py) in two layouts rather than converting one into the other, so the PTX has an
    `ld.global.b32` and an `ld.global.b16` for the one `tl.load`, and both run. Each TTGIR load gets its own
    entry with the width of its own PTX load (the H100's sectors for the line:
    tests/functional/test_validation_measured_call4.py)."""
    import os
    import shutil

    from conftest import ROOT

    from irscope.analysis.coalescing.sectors import analyze_coalescing
    from irscope.analysis.memory.ops import memory_ops, primary_stage
    from irscope.engine.session import open_file

    pytest.importorskip("liger_kernel")
    path = tmp_path / "liger_rope.py"
    shutil.copy(os.path.join(ROOT, "tests", "corpus", "drivers", "liger_rope.py"), path)
    ws = open_file(str(path), target="sm_90", compile_ahead=False)
    comp = ws.compile_all()[0]
    result = analyze_coalescing(comp)
    ptx = [
        op
        for op in memory_ops(comp, [primary_stage(comp)])
        if op.source_line == 69 and op.op == "load"
    ]
    entries = [e for e in result.accesses if e.source_line == 69 and e.kind == "load"]
    assert len(ptx) == 2 and len(entries) == 2, (ptx, entries)
    assert sorted(e.width_bytes for e in entries) == sorted(op.width_bytes for op in ptx) == [2, 4]
    assert len({e.layout for e in entries}) == 2
    assert entries[0].counts.requests == entries[1].counts.requests > 0  # each runs every time
    assert any("once in each of 2 layouts" in note for note in result.notes)


def test_a_load_written_over_several_lines_is_matched_to_its_op():
    """The interpreter records a call at its first line; Triton 3.6 locates a multi-line `tl.load`'s op at its
    pointer's line, one below (3.9 at the first line). Before, the load found no TTGIR op under 3.6 and was not
    counted, and the H100's measured sectors for Liger's cross-entropy loads (lines 154 and 210) had no
    prediction beside them."""
    from conftest import fixture_path

    from irscope.analysis.coalescing.sectors import analyze_coalescing
    from irscope.analysis.memory.ops import memory_ops, primary_stage
    from irscope.engine.session import open_file

    comp = open_file(
        fixture_path("multiline_load.py"), target="sm_90", compile_ahead=False
    ).compile_all()[0]
    result = analyze_coalescing(comp, max_programs=10**6)
    ptx_load_lines = {
        op.source_line for op in memory_ops(comp, [primary_stage(comp)]) if op.op == "load"
    }
    assert len(ptx_load_lines) == 1 and ptx_load_lines <= {14, 15}
    loads = [e for e in result.accesses if e.kind == "load"]
    assert [e.source_line for e in loads] == list(ptx_load_lines)
    assert not any("no matching TTGIR op" in note for note in result.notes), result.notes
    # 4 rows × 4 iterations of 256 fp32, the last 232 wide: every lane's 4 bytes, 2 per thread (8 B)
    stores = next(e for e in result.accesses if e.kind == "store")
    assert loads[0].counts.requests == stores.counts.requests > 0
    assert loads[0].counts.sectors == stores.counts.sectors


def test_a_load_in_a_slice_of_an_mma_layout_is_analysed():
    """A row vector loaded next to a tl.dot comes in a slice of the dot's MMA layout. irscope builds no MMA
    layout itself and asked Triton only for top-level layouts it could not build, so under Triton 3.6 such
    loads (fla's gated delta rule, lines 102-117 and 137: measured on the H100, predicted nothing) were
    "not analysed". Triton now builds every layout irscope cannot."""
    from conftest import fixture_path

    from irscope.analysis.coalescing.sectors import analyze_coalescing
    from irscope.engine.session import open_file

    comp = open_file(
        fixture_path("mma_row_scale.py"), target="sm_90", compile_ahead=False
    ).compile_all()[0]
    layouts = [op.layout_text for op in ttgir_access_ops(comp.stage("ttgir"))]
    assert any("slice" in text and "mma" in text for text in layouts), layouts
    result = analyze_coalescing(comp)
    assert all(e.analysed for e in result.accesses), [
        (e.source_line, e.reason) for e in result.accesses
    ]
    row = next(e for e in result.accesses if e.source_line == 17)
    assert row.kind == "load" and row.counts.requests > 0
