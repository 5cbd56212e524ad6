"""On the fourth H100 run's raw data (validation/data/h100_measure4), recomputed with irscope's present code:
cp.async's global side (which threads issue a copy, how Nsight Compute counts its sectors) and loads the
compiler makes in two layouts inside a loop. Each binary must be the one ncu profiled, so these run under
Triton 3.6 only; test_coalescing_cp_async_copies.py and test_coalescing_two_layouts.py have the
same rules on this Triton's own
compilations."""

import os

import pytest
from conftest import ROOT
from test_validation_measured_run4 import CALL_B, CALL_D, SAME_BINARY, _fla_kernel, _member

from irscope.analysis.measured.ncu_parse import parse_raw_page, parse_source_page
from irscope.analysis.measured.per_line import per_source_line
from irscope.engine.session import open_file
from irscope.findings.agreement import agreements


@SAME_BINARY
def test_a_broadcast_cp_async_is_copied_by_one_thread(tmp_path):
    """fla's kernel_h loads one float a loop iteration (chunk_delta_h.py:247, `b_g_last`) with a 4-byte
    cp.async; every thread of the 2 warps holds it, and Triton predicates all but thread 0 off (`@%p cp.async`,
    `%p` = `tid % 64 == 0`) as it does for stores. irscope counted the loads' rule, one request a warp
    (64 sectors); the H100 measured 32."""
    from irscope.analysis.coalescing.sectors import analyze_coalescing

    comp, _page, lines = _fla_kernel(
        tmp_path,
        "fla_gated_delta_rule.py",
        "chunk_gated_delta_rule_fwd_kernel_h_blockdim64",
        "fla_gated_delta_rule.fla.ops.common.chunk_delta_h.chunk_gated_delta_rule_fwd_kernel_h_blockdim64.0",
    )
    raw = parse_raw_page(
        _member(
            CALL_B,
            "fla_gated_delta_rule.fla.ops.common.chunk_delta_h."
            "chunk_gated_delta_rule_fwd_kernel_h_blockdim64.0.raw.csv",
        )
    )[0]
    coalescing = analyze_coalescing(comp, max_programs=10**6)
    by = {(a.what, a.source_line): a for a in agreements(comp, coalescing, lines, raw, None)}
    assert (by[("ld sectors", 247)].predicted, by[("ld sectors", 247)].measured) == (32, 32)
    assert all(a.agrees is not False for a in by.values()), [
        a for a in by.values() if a.agrees is False
    ]


@SAME_BINARY
@pytest.mark.parametrize(
    "kernel, lines", [("matmul_kernel", (131, 132)), ("matmul_kernel_persistent", (316, 317))]
)
def test_a_16_byte_cp_async_counts_sectors_per_eight_lane_phase(kernel, lines):
    """Tutorial 09 at M = N = K = 32 copies A and B tiles with 16-byte cp.async; in 24 of its 32 copies the
    masked rows wrap to row 0, so four 8-lane phases read the same two sectors. The warp touches 2 distinct
    sectors, and the H100 counted 8: 2 in each phase (256 a line over the launch, where irscope said 112)."""
    from irscope.analysis.coalescing.sectors import analyze_coalescing

    ws = open_file(
        os.path.join(ROOT, "tests/corpus/tutorials/triton-3.6/09-persistent-matmul.py"),
        target="sm_90",
    )
    comp = ws.compile(ws.kernel(kernel))[0]
    stem = f"09-persistent-matmul.__main__.{kernel}.0"
    measured, why = per_source_line(
        comp, parse_source_page(_member(CALL_D, stem + ".source.csv"))[0]
    )
    assert why is None, why
    raw = parse_raw_page(_member(CALL_D, stem + ".raw.csv"))[0]
    by = {
        (a.what, a.source_line): a
        for a in agreements(comp, analyze_coalescing(comp, max_programs=10**6), measured, raw, None)
    }
    for line in lines:
        assert (by[("ld sectors", line)].predicted, by[("ld sectors", line)].measured) == (256, 256)


@SAME_BINARY
def test_a_row_loaded_in_two_layouts_every_loop_trip_is_counted_in_both(tmp_path):
    """fla's fused recurrent backward loads `b_q` and `b_k` (fused_recurrent.py lines 339/340) once a trip of
    its T = 64 loop, and Triton makes each two loads: one in a slice layout (32 warp-uniform LDG.E.U16 a
    thread, one sector a request) and one in a blocked layout (one LDG whose lanes read 64 bytes: two sectors).
    Only the first was counted: 65,536 sectors predicted, 69,632 measured."""
    from irscope.analysis.coalescing.sectors import analyze_coalescing

    stem = "fla_fused_recurrent_gla.fla.ops.common.fused_recurrent.fused_recurrent_bwd_kernel.0"
    comp, _page, lines = _fla_kernel(
        tmp_path, "fla_fused_recurrent_gla.py", "fused_recurrent_bwd_kernel", stem
    )
    raw = parse_raw_page(_member(CALL_B, stem + ".raw.csv"))[0]
    by = {
        (a.what, a.source_line): a
        for a in agreements(comp, analyze_coalescing(comp, max_programs=10**6), lines, raw, None)
    }
    for line in (339, 340):
        assert (by[("ld sectors", line)].predicted, by[("ld sectors", line)].measured) == (
            69632,
            69632,
        )
    assert all(a.agrees is not False for a in by.values()), [
        a for a in by.values() if a.agrees is False
    ]
