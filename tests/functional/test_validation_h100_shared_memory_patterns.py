"""Shared-memory stores on the H100: each phase of 128 bytes of lane data a wavefront at least, no sharing
between phases (validation/data/h100_smem_patterns, measured for this rule), and what it and ptxas's early
exit make of Inductor's reductions: kernels/compiled_block.py's `triton_per_fused_addmm_gelu_sum_1`, line 47,
where the H100 measured 160 / 36 / 33 wavefronts and irscope had predicted 192 / 24 / 18."""

import csv
import gzip
import io
import os

import numpy as np
from conftest import ROOT, kernel_path

from irscope.analysis.banks.conflicts import LaunchInputs, predict
from irscope.analysis.banks.model import count, phase_size
from irscope.analysis.banks.report import whole_launch_report
from irscope.analysis.ptx.program import parse_program
from irscope.engine.session import open_file

DATA = os.path.join(ROOT, "validation", "data", "h100_smem_patterns")
KERNELS = [("st32", 4), ("st64", 8), ("st128", 16), ("ld32", 4), ("ld64", 8), ("ld128", 16)]


def _pattern(p: int, width: int) -> np.ndarray:
    """Lane -> byte offset (-1: the lane skips the access), as smem_patterns.cu's `switch` has it."""
    lane = np.arange(32)
    return [
        np.zeros(32, int),
        lane * width,
        lane // 2 * width,
        lane % 16 * width,
        lane % 8 * width,
        lane // 8 * width,
        lane // 16 * width,
        np.where(lane < 8, lane * width, -1),
        np.where(lane % 16 < 4, (lane % 16 + lane // 16 * 4) * width, -1),
        np.where(lane % 8 < 4, (lane % 8 + lane // 8 * 4) * width, -1),
        np.where(lane < 16, 0, -1),
        lane * 128,
    ][p]


def _measured() -> dict[tuple[str, int], int]:
    text = gzip.open(os.path.join(DATA, "ncu.csv.gz"), "rt").read()
    got = {}
    for row in csv.DictReader(io.StringIO(text[text.index('"ID"') :])):
        name, launch = row["Kernel Name"].split("(")[0], int(row["ID"])
        assert name == KERNELS[launch // 12][0]
        if row["Metric Name"] == f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{name[:2]}.sum":
            got[(name, launch % 12)] = int(row["Metric Value"])
    assert len(got) == 72
    return got


def _predicted(p: int, width: int, store: bool, phases: np.ndarray | None = None) -> int:
    """The bank model's count; loads take their phases from their addresses (bank_model.load_phases)."""
    offsets = _pattern(p, width)
    if store and phases is None:
        phases = np.arange(32) // phase_size(width)
    got = count(
        np.maximum(offsets, 0).astype(np.uint64).reshape(1, 32),
        (offsets >= 0).reshape(1, 32),
        width,
        phases,
    )
    return int(got.wavefronts[0])


def test_every_measured_store_pattern_is_the_store_rule():
    measured = _measured()
    for name, width in KERNELS[:3]:
        assert [_predicted(p, width, True) for p in range(12)] == [
            measured[(name, p)] for p in range(12)
        ], name
    # the half-warp rule that 16-byte stores had before: an STS.128 of one address for all lanes was 2, not 4
    half_warps = np.arange(32) // 16
    assert [_predicted(p, 16, False, half_warps) for p in range(12)] == [
        2,
        4,
        2,
        4,
        2,
        2,
        2,
        1,
        2,
        2,
        1,
        32,
    ]
    assert [measured[("st128", p)] for p in range(12)] == [4, 4, 4, 4, 4, 4, 4, 1, 2, 4, 2, 32]


def test_every_measured_load_pattern_is_the_load_rule():
    """Loads: 128 bytes of lane data a phase as for stores, but two neighbouring phases are served together when
    every lane pair 2k, 2k+1 of both reads one address (bank_model.load_phases)."""
    measured = _measured()
    for name, width in KERNELS[3:]:
        assert [_predicted(p, width, False) for p in range(12)] == [
            measured[(name, p)] for p in range(12)
        ], name
    # the half-warp rule that 8- and 16-byte loads had before missed six: LDS.64 patterns 0, 2, 5 and 6
    # (pairs share: one wavefront, not two) and LDS.128 patterns 4 and 9 (pairs do not: four, not two)
    half_warps = np.arange(32) // 16
    off = {
        (name, p)
        for name, width in KERNELS[4:]
        for p in range(12)
        if _predicted(p, width, False, half_warps) != measured[(name, p)]
    }
    assert off == {("ld64", 0), ("ld64", 2), ("ld64", 5), ("ld64", 6), ("ld128", 4), ("ld128", 9)}


def test_inductors_reduction_stores_and_early_exit_are_predicted_as_measured():
    """Real compiler output, any Triton: the XBLOCK 8 and 32 configs store each warp's partial sums with all 32
    lanes on one 16-byte chunk (STS.128: 4 wavefronts a warp, not 2), and only the warp holding thread 0
    reads them back, ptxas exiting the other before that LDS though the PTX sets the store's guard after it."""
    ws = open_file(kernel_path("compiled_block.py"), target="sm_90")
    comps = {
        c.constexprs["XBLOCK"]: c
        for c in ws.compile(ws.kernel("triton_per_fused_addmm_gelu_sum_1"))
    }
    for xblock, stores, warps, total in [(8, 1, 8, 36), (32, 4, 2, 33)]:
        report = whole_launch_report(comps[xblock], max_programs=512, time_limit=60)
        assert report.complete
        line = [r for r in report.accesses if r.source_line == 47]
        assert [(r.access.kind, r.access.width, r.executions, r.wavefronts) for r in line] == [
            ("store", 16, warps, 4 * warps)
        ] * stores + [("load", 4, warps // 2, warps // 2)]
        assert (
            line[-1].access.tail_guard is not None
            and line[-1].access.tail_guard_at > line[-1].access.index
        )
        assert sum(r.wavefronts for r in line) == total


TAIL_PTX = """
.version 8.7
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 global_smem[];
.visible .entry tail(
	.param .u64 tail_param_0
)
.reqntid 128
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<20>;
	.reg .b64 	%rd<4>;
	mov.u32 	%r1, %tid.x;
	mov.b32 	%r2, global_smem;
	shl.b32 	%r3, %r1, 2;
	add.s32 	%r4, %r2, %r3;
	st.shared.b32 	[%r4], %r1;
	bar.sync 	0;
	ld.shared.b32 	%r5, [global_smem];
	ld.param.b64 	%rd1, [tail_param_0];
	setp.GUARD;
	@%p1 st.global.b32 	[%rd1], %r5;
	ret;
}
"""


def test_an_exit_guard_set_after_the_tail_load_counts_unless_it_needs_its_data():
    inputs = LaunchInputs((1, 1, 1), 128, {"tail_param_0": 1 << 40})

    def tail_load(guard: str):
        program = parse_program(TAIL_PTX.replace("setp.GUARD", guard))
        return [r for r in predict(program, inputs).accesses if r.access.kind == "load"][0]

    on_tid = tail_load("setp.lt.u32 \t%p1, %r1, 40")  # threads 0-39: warps 0 and 1 of 4
    assert (on_tid.access.tail_guard, on_tid.executions, on_tid.wavefronts, on_tid.unknown) == (
        "%p1",
        2,
        2,
        0,
    )
    # needs the value the tail loads: ptxas cannot exit first
    on_data = tail_load("setp.eq.s32 \t%p1, %r5, 0")
    assert (on_data.access.tail_guard, on_data.executions, on_data.wavefronts) == (None, 4, 4)
