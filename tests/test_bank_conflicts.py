"""Bank conflicts: the bank rules, the per-thread PTX machine, the `bank-conflict` finding on real compiler
output, and the prediction against the H100's per-instruction counts committed in validation/data/."""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, kernel_path

from irscope.core.analysis.bank_conflicts import LaunchInputs, predict
from irscope.core.analysis.bank_model import copy_groups, count
from irscope.core.analysis.ptx_program import parse_program
from irscope.core.analysis.ptx_values import arithmetic, lop3, funnel, U64
from irscope.core.findings import findings
from irscope.core.session import open_file

DATA = os.path.join(ROOT, "validation", "data", "bank_conflicts")


def one_warp(addresses, width, on=None, group=None):
    addresses = np.asarray(addresses, dtype=np.uint64).reshape(1, 32)
    on = np.ones((1, 32), bool) if on is None else np.asarray(on, bool).reshape(1, 32)
    got = count(addresses, on, width, group=None if group is None else np.asarray(group).reshape(1, 32))
    return int(got.wavefronts[0]), int(got.ideal[0])


def test_bank_rules_for_32_bit_accesses():
    lane = np.arange(32)
    assert one_warp(lane * 4, 4) == (1, 1)              # one word per bank
    assert one_warp(lane * 128, 4) == (32, 1)           # every lane in bank 0: 32-way
    assert one_warp(np.zeros(32), 4) == (1, 1)          # one word for all: broadcast
    assert one_warp((lane // 16) * 512, 4) == (2, 1)    # two words of one bank, each broadcast to 16 lanes
    assert one_warp(lane * 8, 4) == (2, 1)              # every other word: 128 bytes over 2 rows of banks
    on = lane == 5
    assert one_warp(lane * 128, 4, on) == (1, 1)        # lanes that do not take part cost nothing


def test_bank_rules_for_vector_accesses_take_half_warps():
    lane = np.arange(32)
    assert one_warp(lane * 16, 16) == (4, 4)            # contiguous LDS.128: 512 bytes
    assert one_warp(lane * 8, 8) == (2, 2)              # contiguous LDS.64
    # the two LDS.128 patterns an H100 measures in the NVIDIA forum thread (bank_model.py): 2 and 8
    assert one_warp(np.where(lane < 16, 0, 32), 16) == (2, 2)
    assert one_warp((lane % 16) * 32, 16) == (8, 4)


def test_async_copies_take_a_wavefront_per_global_line():
    lane = np.arange(32)
    shared = lane * 16                                   # 512 contiguous bytes: conflict-free in shared memory
    rows_64 = (lane // 4) * 256 + (lane % 4) * 16        # 64-byte rows 256 bytes apart: 2 lines per 8 lanes
    rows_128 = (lane // 8) * 256 + (lane % 8) * 16       # 128-byte rows: 1 line per 8 lanes
    phases = lane // 8

    def copy(source, fetching=True):
        group = copy_groups(np.asarray(source, np.uint64), np.full(32, fetching))
        got = count(shared.astype(np.uint64).reshape(1, 32), np.ones((1, 32), bool), 16, phases,
                    group.reshape(1, 32))
        return int(got.wavefronts[0]), int(got.ideal[0])
    assert copy(rows_64) == (8, 4) and copy(rows_128) == (4, 4) and copy(rows_64, fetching=False) == (4, 4)


def test_integer_semantics_match_ptx():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2 ** 32, 64, dtype=np.uint64)
    b = rng.integers(0, 2 ** 32, 64, dtype=np.uint64)
    c = rng.integers(0, 40, 64, dtype=np.uint64)

    def s32(x):
        return [int(v) - (1 << 32) if v >= 1 << 31 else int(v) for v in x]
    got = arithmetic("bfe", [], "u32", [a, c, np.full(64, 5, U64)])
    assert got.tolist() == [(int(x) >> min(int(p), 31)) & 31 if p < 32 else 0 for x, p in zip(a, c)]
    got = arithmetic("mul", ["hi"], "s32", [a, b])
    assert got.tolist() == [((x * y) >> 32) & 0xFFFFFFFF for x, y in zip(s32(a), s32(b))]
    got = arithmetic("mad", ["wide"], "u32", [a, b, np.full(64, 7, U64)])
    assert got.tolist() == [(int(x) * int(y) + 7) & (2 ** 64 - 1) for x, y in zip(a, b)]
    got = arithmetic("div", [], "s32", [a, np.where(b == 0, 1, b)])
    assert got.tolist() == [int(x / y) & 0xFFFFFFFF for x, y in zip(s32(a), s32(np.where(b == 0, 1, b)))]
    assert lop3(a, b, c, 0x96).tolist() == [int(x) ^ int(y) ^ int(z) for x, y, z in zip(a, b, c)]
    assert funnel("l", a, b, c, False).tolist() == [
        ((((int(y) << 32) | int(x)) << (int(z) & 31)) >> 32) & 0xFFFFFFFF for x, y, z in zip(a, b, c)]


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
    assert rows == [
        ("store", 4, 128, 4),   # tid * 128: 32-way in every warp of both programs
        ("store", 2, 2, 2),     # only warp 1 of each program gets past the branch
        ("store", 4, 6, 4),     # the block's own %p1 (tid >= 48) splits warp 1 in two words; warp 0 has one
        ("load", 12, 48, 48),   # 3 iterations; each half-warp reads 256 contiguous bytes: 2 wavefronts
        ("store", 4, 2, 2),     # the outer %p1 again (warp 0): warp 1 executes it with no lane on
    ]


@pytest.fixture(scope="module")
def example():
    return open_file(kernel_path("bank_conflict.py"), target="sm_90").compile_all()


def test_the_example_conflicts_and_its_fix_does_not(example):
    conflicted, fixed = example
    assert (conflicted.constexprs["BLOCK_N"], fixed.constexprs["BLOCK_N"]) == (64, 128)
    (f,) = [f for f in findings(conflicted) if f.rule == "bank-conflict"]
    assert (f.severity, f.source_line) == ("warning", 37)
    assert f.source_text.startswith("a = tl.load(a_ptr")
    assert f.message.startswith("ld.shared ×96 at this line: ")
    assert "a 2-way bank conflict — in the worst warp 2 wavefronts where 1 would do: lanes 0, 16 touch 2 " \
           "different 4-byte words of bank" in f.message
    # 96 ld.shared in each of K / BLOCK_K = 4 iterations, in each of 4 warps, one wavefront too many each
    assert f.cost.unit == "extra_wavefronts_per_program" and f.cost.value == 96 * 4 * 4
    assert f.cost.text.startswith("1.00 extra wavefronts per warp-level instruction (2.00× the ideal)")
    assert f.weight == pytest.approx(0.5) and not f.what_if.recompiled
    assert f.fix.startswith("give a warp's lanes different banks, or the same word (read once and broadcast)")
    assert "this is a tl.dot operand staged for the FMA pipes in an unswizzled buffer" in f.fix
    assert not [f for f in findings(fixed) if f.rule == "bank-conflict"]


def test_transpose_is_conflict_free_and_matmuls_a_tile_spans_two_lines():
    (transpose,) = open_file(kernel_path("transpose.py"), target="sm_90").compile_all()
    assert not [f for f in findings(transpose) if f.rule == "bank-conflict"]
    matmul = open_file(kernel_path("matmul.py"), target="sm_90").compile_all()[0]
    (f,) = [f for f in findings(matmul) if f.rule == "bank-conflict"]
    assert (f.severity, f.source_line) == ("info", 54)  # a = tl.load(...): 64-byte rows of fp16 (BLOCK_K = 32)
    assert "each 8-lane phase of the copy takes its data from up to 2 global 128-byte lines" in f.message
    assert "1280 shared-memory wavefronts where 768 would do" in f.message
    assert f.fix.startswith("make the contiguous dimension of the copied tile at least 128 bytes")


def test_the_prediction_equals_the_h100_per_instruction_counts():
    done = subprocess.run([sys.executable, os.path.join(ROOT, "validation", "ncu_bank_conflicts.py"), "--measured",
                           DATA], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "52 row(s), 0 off by more than 5% or unmatched, 0 problem(s)"
    rows = [line for line in lines if line.startswith("| kernels/")]
    assert "| kernels/matmul.py | matmul_kernel (config 0) | matmul.py:54 | cp.async | 6/6 | 192/192 | 1280 (768) | " \
           "1280 (768) | 8 | yes |" in rows
    assert "| kernels/transpose.py | transpose_kernel | transpose.py:30 | store | 32/32 | 2048/2048 | 2048 (2048) | " \
           "2048 (2048) | 1 | yes |" in rows
    assert len(rows) == 17 and all(row.endswith("| yes |") for row in rows)
    doc = open(os.path.join(ROOT, "docs", "validation.md")).read()
    section = doc[doc.index("## Bank conflicts: irscope's prediction against Nsight Compute"):]
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
    assert (first.executions, first.wavefronts, first.ideal) == (1, 16, 1)  # lanes 16-31 only: 16-way
    assert (joined.executions, joined.wavefronts) == (1, 1)                 # all 32 lanes again: one word
    assert (after_data.executions, after_data.unknown, after_data.wavefronts) == (1, 1, 0)  # %r7 depends on data
