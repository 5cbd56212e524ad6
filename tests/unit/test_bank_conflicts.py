"""Bank conflicts: the bank rules, the per-thread PTX machine, the `bank-conflict` finding on real compiler
output, and the prediction against the H100's per-instruction counts committed in validation/data/."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, kernel_path

from irscope.analysis.banks.conflicts import LaunchInputs, predict
from irscope.analysis.banks.model import copy_groups, copy_phase_size, count
from irscope.analysis.banks.ptxas import alignments
from irscope.analysis.ptx.program import parse_program
from irscope.analysis.ptx.values import U64, arithmetic, funnel, lop3
from irscope.engine.session import open_file
from irscope.findings import findings

DATA = os.path.join(ROOT, "validation", "data", "bank_conflicts")


def one_warp(addresses, width, on=None, group=None):
    addresses = np.asarray(addresses, dtype=np.uint64).reshape(1, 32)
    on = np.ones((1, 32), bool) if on is None else np.asarray(on, bool).reshape(1, 32)
    got = count(
        addresses, on, width, group=None if group is None else np.asarray(group).reshape(1, 32)
    )
    return int(got.wavefronts[0]), int(got.ideal[0])


def test_bank_rules_for_32_bit_accesses():
    lane = np.arange(32)
    assert one_warp(lane * 4, 4) == (1, 1)  # one word per bank
    assert one_warp(lane * 128, 4) == (32, 1)  # every lane in bank 0: 32-way
    assert one_warp(np.zeros(32), 4) == (1, 1)  # one word for all: broadcast
    # two words of one bank, each broadcast to 16 lanes
    assert one_warp((lane // 16) * 512, 4) == (
        2,
        1,
    )
    assert one_warp(lane * 8, 4) == (2, 1)  # every other word: 128 bytes over 2 rows of banks
    on = lane == 5
    assert one_warp(lane * 128, 4, on) == (1, 1)  # lanes that do not take part cost nothing


def test_bank_rules_for_vector_accesses_take_half_warps():
    lane = np.arange(32)
    assert one_warp(lane * 16, 16) == (4, 4)  # contiguous LDS.128: 512 bytes
    assert one_warp(lane * 8, 8) == (2, 2)  # contiguous LDS.64
    # the two LDS.128 patterns an H100 measures in the NVIDIA forum thread (bank_model.py): 2 and 8
    assert one_warp(np.where(lane < 16, 0, 32), 16) == (2, 2)
    assert one_warp((lane % 16) * 32, 16) == (8, 4)


def test_async_copies_conflict_on_the_global_side_too():
    lane = np.arange(32)
    shared = lane * 16  # 512 contiguous bytes: conflict-free in shared memory
    # 64-byte rows 256 bytes apart: 2 lines per 8 lanes, banks 0-15
    rows_64 = (lane // 4) * 256 + (lane % 4) * 16
    rows_128 = (lane // 8) * 256 + (lane % 8) * 16  # 128-byte rows: 1 line per 8 lanes

    def copy(source, fetching=True, width=16, to=shared):
        fetching = np.full((1, 32), fetching)
        group = copy_groups(fetching) if width >= 8 else None
        got = count(
            np.asarray(to, np.uint64).reshape(1, 32),
            np.ones((1, 32), bool),
            width,
            lane // copy_phase_size(width),
            group,
            np.asarray(source, np.uint64).reshape(1, 32),
            fetching,
        )
        return int(got.wavefronts[0]), int(got.ideal[0])

    assert (
        copy(rows_64) == (8, 4)
        and copy(rows_128) == (4, 4)
        and copy(rows_64, fetching=False) == (4, 4)
    )
    # 64-byte rows 320 bytes apart: the second row of each phase lies at offsets 64-127 of its line (banks 16-31)
    assert copy((lane // 4) * 320 + (lane % 4) * 16) == (4, 4)
    # 4-byte copies, 32 lanes a phase: 128 contiguous bytes across two lines (tutorial 02's rows) take 1; one
    # float every 16 bytes (fla's g at stride HV = 4: lanes 0, 8, 16, 24 on bank 0 of four lines) 4
    assert copy(52 + lane * 4, width=4, to=lane * 4) == (1, 1)
    assert copy(lane * 16, width=4, to=lane * 4) == (4, 1)


def test_integer_semantics_match_ptx():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2**32, 64, dtype=np.uint64)
    b = rng.integers(0, 2**32, 64, dtype=np.uint64)
    c = rng.integers(0, 40, 64, dtype=np.uint64)

    def s32(x):
        return [int(v) - (1 << 32) if v >= 1 << 31 else int(v) for v in x]

    got = arithmetic("bfe", [], "u32", [a, c, np.full(64, 5, U64)])
    assert got.tolist() == [(int(x) >> min(int(p), 31)) & 31 if p < 32 else 0 for x, p in zip(a, c)]
    got = arithmetic("mul", ["hi"], "s32", [a, b])
    assert got.tolist() == [((x * y) >> 32) & 0xFFFFFFFF for x, y in zip(s32(a), s32(b))]
    got = arithmetic("mad", ["wide"], "u32", [a, b, np.full(64, 7, U64)])
    assert got.tolist() == [(int(x) * int(y) + 7) & (2**64 - 1) for x, y in zip(a, b)]
    got = arithmetic("div", [], "s32", [a, np.where(b == 0, 1, b)])
    assert got.tolist() == [
        int(x / y) & 0xFFFFFFFF for x, y in zip(s32(a), s32(np.where(b == 0, 1, b)))
    ]
    assert lop3(a, b, c, 0x96).tolist() == [int(x) ^ int(y) ^ int(z) for x, y, z in zip(a, b, c)]
    assert funnel("l", a, b, c, False).tolist() == [
        ((((int(y) << 32) | int(x)) << (int(z) & 31)) >> 32) & 0xFFFFFFFF
        for x, y, z in zip(a, b, c)
    ]


MACHINE_PTX = """
.version 8.7
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 global_smem[];
.visible .entry machine(
	.param .u32 machine_param_0
)
.reqntid 64
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<20>;
	mov.u32 	%r1, %tid.x;
	ld.param.b32 	%r2, [machine_param_0];
	mov.b32 	%r3, global_smem;
	shl.b32 	%r4, %r1, 7;
	add.s32 	%r5, %r3, %r4;
	st.shared.b32 	[%r5], %r1;
	shr.u32 	%r6, %r1, 5;
	setp.eq.s32 	%p1, %r6, 0;
	@%p1 bra 	$L__warp0;
	shl.b32 	%r7, %r1, 2;
	add.s32 	%r8, %r3, %r7;
	st.shared.b32 	[%r8+1024], %r1;
$L__warp0:
	{ .reg .pred %p<2>; .reg .b32 t;
	setp.ge.u32 %p1, %r1, 48;
	selp.b32 t, 128, 0, %p1;
	setp.eq.s32 %p0, %r6, 1;
	@%p0 bra skip;
	mov.b32 t, 0;
	skip:
	add.s32 %r13, %r3, t;
	}
	st.shared.b32 	[%r13+2048], %r1;
	and.b32 	%r9, %r1, 15;
	shl.b32 	%r10, %r9, 4;
	add.s32 	%r11, %r3, %r10;
	mov.b32 	%r12, 0;
$L__loop:
	ld.shared.v4.b32 	{%r14, %r15, %r16, %r17}, [%r11+4096];
	add.s32 	%r11, %r11, 512;
	add.s32 	%r12, %r12, 1;
	setp.lt.s32 	%p2, %r12, %r2;
	@%p2 bra 	$L__loop;
	@%p1 st.shared.b32 	[%r3+8192], %r1;
	ret;
}
"""


def test_the_ptx_machine_follows_branches_blocks_and_loops():
    program = parse_program(MACHINE_PTX)
    assert program.threads == 64 and program.params == ["machine_param_0"]
    report = predict(program, LaunchInputs((2, 1, 1), 64, {"machine_param_0": 3}))
    assert report.stops == [] and report.programs == 2
    rows = [(r.access.kind, r.executions, r.wavefronts, r.ideal) for r in report.accesses]
    # the block's own %p1 (tid >= 48) splits warp 1 in two words; warp 0 has one
    # 3 iterations; each half-warp reads 256 contiguous bytes: 2 wavefronts
    assert rows == [
        ("store", 4, 128, 4),  # tid * 128: 32-way in every warp of both programs
        ("store", 2, 2, 2),  # only warp 1 of each program gets past the branch
        (
            "store",
            4,
            6,
            4,
        ),
        (
            "load",
            12,
            48,
            48,
        ),
        ("store", 4, 2, 2),  # the outer %p1 again (warp 0): warp 1 executes it with no lane on
    ]


@pytest.fixture(scope="module")
def example():
    return open_file(kernel_path("bank_conflict.py"), target="sm_90").compile_all()


def test_the_example_conflicts_and_its_fix_does_not(example):
    conflicted, fixed = example
    assert (conflicted.constexprs["BLOCK_K"], fixed.constexprs["BLOCK_K"]) == (16, 32)
    (f,) = [f for f in findings(conflicted) if f.rule == "bank-conflict"]
    assert (f.severity, f.source_line) == ("info", 37)
    assert f.source_text.startswith("a = tl.load(a_ptr")
    # 64-byte rows of A: each 8-lane phase of a copy reads 2 global lines at offsets 0-63 (banks 0-15), 8
    # wavefronts where 4 would do; the
    # pipeline's zero-filled copies past K have no excess, hence 2304 for 1280 in all
    assert f.message == (
        "cp.async (a copy from global to shared memory) ×6 at this line: 2304 shared-memory "
        "wavefronts where 1280 would do; each 8-lane phase of the copy reads up to 2 global 128-byte "
        "lines at the same offsets, and each line's bytes pass through the banks of their offset, "
        "one line at a time: 8 wavefronts where 4 would do in the worst warp"
    )
    assert f.cost.unit == "extra_wavefronts_per_program" and f.cost.value == (2304 - 1280) / 4
    assert f.fix.startswith("make the contiguous dimension of the copied tile at least 128 bytes")
    assert not [f for f in findings(fixed) if f.rule == "bank-conflict"]


def _recorded(stem, launch):
    """A launch irscope recorded for the H100 run: Triton 3.6's PTX and the launch's grid and parameters."""
    with open(os.path.join(DATA, stem + ".launches.json")) as f:
        doc = json.load(f)
    rec = doc["launches"][launch]
    program = parse_program(doc["ptx"][rec["ptx"]])
    return program, predict(
        program, LaunchInputs(tuple(rec["grid"]), rec["threads"], rec["params"])
    )


def test_ptxas_merges_the_fma_dots_scalar_shared_loads_into_lds128():
    # what the H100 ran for bank_conflict.py (BLOCK_N = 64): 160 ld.shared of the A tile at line 37 (.b32,
    # .v2 and .v4 at constant offsets from one register, global_smem + tid-derived multiples of 32 + the
    # stage's multiple of 8192: aligned as global_smem is, 16) are 64 LDS.128 in the SASS, each
    # served by two half-warps that read one 16-byte chunk apiece: 2 wavefronts, 2 ideal
    program, report = _recorded("bank_conflict", 0)
    line_37 = [
        r
        for r in report.accesses
        if r.access.kind == "load"
        and r.access.width == 16
        and r.access.merged
        and r.executions == 64
    ]
    assert len(line_37) == 64 - 16 and all((r.wavefronts, r.ideal) == (128, 128) for r in line_37)
    # the 16 .v4 loads stay as they are
    assert sum(len(r.access.merged) for r in line_37) == 160 - 16
    base = line_37[0].access.address[1:].split("+")[0]
    assert alignments(program)[base] == 16 and program.shared_align == {"global_smem": 16}


def test_ptxas_exits_early_after_the_last_barrier():
    # helper.py: the last ld.shared of tl.max feeds only thread 0's store; ptxas exits the other threads
    # first, so it runs in 1 warp of 4 per program (8 of 32 executions on the H100)
    _, report = _recorded("helper", 0)
    last = report.accesses[-1]
    assert last.access.tail_guard is not None and (
        last.executions,
        last.wavefronts,
        last.ideal,
    ) == (8, 8, 8)
    assert [r.executions for r in report.accesses[:-1]] == [32] * 7


MERGE_PTX = """
.version 8.7
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 global_smem[];
.visible .entry merge()
.reqntid 32
{
	.reg .b32 	%r<20>;
	mov.u32 	%r1, %tid.x;
	mov.b32 	%r2, global_smem;
	shl.b32 	%r3, %r1, 4;
	add.s32 	%r4, %r2, %r3;
	ld.shared.b32 	%r5, [%r4+4];
	ld.shared.v2.b32 	{%r6, %r7}, [%r4+8];
	ld.shared.b32 	%r8, [%r4];
	ld.shared.b32 	%r9, [%r4+16];
	shl.b32 	%r10, %r1, 2;
	add.s32 	%r11, %r2, %r10;
	ld.shared.b32 	%r12, [%r11+512];
	ld.shared.b32 	%r13, [%r11+516];
	bar.sync 	0;
	ld.shared.b32 	%r14, [%r4+20];
	ret;
}
"""


def test_loads_merge_only_when_whole_aligned_and_in_one_stretch():
    program = parse_program(MERGE_PTX)
    report = predict(program, LaunchInputs((1, 1, 1), 32, {}))
    got = [
        (r.access.width, r.access.address, len(r.access.merged), r.wavefronts, r.ideal)
        for r in report.accesses
    ]
    # +16 alone (its partner +20 is after the barrier): 16 bytes apart, 4-way
    assert got == [
        (16, "[%r4+0]", 3, 4, 4),  # +0, +4 and the .v2 at +8: one 16-byte load per lane, 512 bytes
        (
            4,
            "[%r4+16]",
            0,
            4,
            1,
        ),
        (4, "[%r11+512]", 0, 1, 1),  # %r11 is 4-byte aligned only: no 8-byte load can be proved
        (4, "[%r11+516]", 0, 1, 1),
        (4, "[%r4+20]", 0, 4, 1),
    ]


def test_transpose_is_conflict_free_and_matmuls_a_tile_spans_two_lines():
    (transpose,) = open_file(kernel_path("transpose.py"), target="sm_90").compile_all()
    assert not [f for f in findings(transpose) if f.rule == "bank-conflict"]
    matmul = open_file(kernel_path("matmul.py"), target="sm_90").compile_all()[0]
    (f,) = [f for f in findings(matmul) if f.rule == "bank-conflict"]
    # a = tl.load(...): 64-byte rows of fp16 (BLOCK_K = 32)
    assert (f.severity, f.source_line) == (
        "info",
        54,
    )
    assert (
        "each 8-lane phase of the copy reads up to 2 global 128-byte lines at the same offsets"
        in f.message
    )
    assert "1280 shared-memory wavefronts where 768 would do" in f.message
    assert f.fix.startswith("make the contiguous dimension of the copied tile at least 128 bytes")


def test_the_prediction_equals_the_h100_per_instruction_counts():
    done = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "validation", "ncu_bank_conflicts.py"),
            "--measured",
            DATA,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    lines = done.stdout.splitlines()
    assert lines[0] == "76 row(s), 0 off by more than 5% or unmatched, 6 problem(s)", (
        done.stdout[-3000:] + done.stderr
    )
    # launches that have no measurement (docs/validation.md says why) make the exit status 1
    assert done.returncode == 1
    problems = [line for line in lines if line.startswith("problem: ")]
    norm, gelu = "triton_per_fused_native_layer_norm_0", "triton_per_fused_gelu_sum_1"
    assert problems == [
        f"problem: kernels/compiled_block.py: recorded launch {i} of {k} was not measured"
        for i, k in [(0, norm), (1, norm), (3, gelu), (4, gelu), (5, gelu)]
    ] + ["problem: kernels/misaligned.py: recorded launch 1 of add_kernel was not measured"]
    rows = [line for line in lines if line.startswith("| kernels/")]
    for row in [
        "| kernels/matmul.py | matmul_kernel (config 0) | matmul.py:54 | cp.async | 6/6 | 192/192 | "
        "1280 (768) | 1280 (768) | 8 | yes |",
        "| kernels/bank_conflict.py | matmul_fp32_kernel | bank_conflict.py:37 | load | 64/64 | 4096/4096 | "
        "8192 (8192) | 8192 (8192) | 1 | yes |",
        "| kernels/helper.py | relu_sum_max_kernel | standard.py:191 | load | 2/2 | 40/40 | 16 (16) | 16 (16) | 1 "
        "| yes |",
        "| kernels/compiled_block.py | triton_per_fused_native_layer_norm_0 (config 2, other PTX) | "
        "Inductor module:59 | stmatrix | 8/8 | 16/16 | 64 (64) | 64 (64) | 1 | yes |",
    ]:
        assert row in rows
    assert len(rows) == 41 and all(row.endswith("| yes |") for row in rows)
    doc = open(os.path.join(ROOT, "docs", "validation.md")).read()
    section = doc[doc.index("## Bank conflicts: irscope's prediction against Nsight Compute") :]
    # up to the next section
    section = section[: section.find("\n## ", 1)] if "\n## " in section[1:] else section
    assert [line for line in section.splitlines() if line.startswith("| kernels/")] == rows


SPLIT_PTX = """
.version 8.7
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 global_smem[];
.visible .entry split(
	.param .u64 split_param_0
)
.reqntid 32
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<20>;
	.reg .b64 	%rd<4>;
	mov.u32 	%r1, %tid.x;
	mov.b32 	%r3, global_smem;
	setp.lt.u32 	%p1, %r1, 16;
	shl.b32 	%r4, %r1, 7;
	@%p1 bra 	$L__join;
	add.s32 	%r5, %r3, %r4;
	st.shared.b32 	[%r5], %r1;
$L__join:
	st.shared.b32 	[%r3+4096], %r1;
	ld.param.b64 	%rd1, [split_param_0];
	ld.global.b32 	%r6, [%rd1];
	mov.b32 	%r7, 0;
	setp.eq.s32 	%p2, %r6, 0;
	@%p2 bra 	$L__data;
	mov.b32 	%r7, 64;
$L__data:
	add.s32 	%r8, %r3, %r7;
	st.shared.b32 	[%r8], %r1;
	ret;
}
"""


def test_a_warp_split_by_an_if_reconverges_and_data_makes_addresses_unknown():
    program = parse_program(SPLIT_PTX)
    report = predict(program, LaunchInputs((1, 1, 1), 32, {"split_param_0": 1 << 40}))
    assert report.stops == []
    first, joined, after_data = report.accesses
    # lanes 16-31 only: 16-way
    assert (first.executions, first.wavefronts, first.ideal) == (
        1,
        16,
        1,
    )
    assert (joined.executions, joined.wavefronts) == (1, 1)  # all 32 lanes again: one word
    # %r7 depends on data
    assert (after_data.executions, after_data.unknown, after_data.wavefronts) == (
        1,
        1,
        0,
    )
