"""Measured mode's comparisons on the fourth H100 run's raw data (validation/data/h100_measure4: Nsight
Compute's pages as the run kept them, Triton 3.6.0), recomputed with irscope's present code where a row
failed there. Each binary must be the one ncu profiled, so the comparisons run under Triton 3.6 only; the
corpus drivers need their libraries (tests/corpus/requirements.txt)."""

import importlib.util
import os
import shutil
import tarfile

import pytest
from conftest import ROOT

from irscope.analysis.measured.ncu_parse import parse_raw_page, parse_source_page
from irscope.analysis.measured.per_line import per_source_line
from irscope.engine.measure.ncu_run import resource_busy
from irscope.engine.session import open_file
from irscope.engine.triton_compat import TRITON_VERSION
from irscope.findings.agreement import agreements

CALL_A = os.path.join(ROOT, "validation", "data", "h100_measure4", "callA", "measure_A")
SAME_BINARY = pytest.mark.skipif(
    not TRITON_VERSION.startswith("3.6."),
    reason=f"Triton {TRITON_VERSION} builds other binaries than the 3.6.0 ncu profiled",
)


def _member(call: str, name: str) -> str:
    with tarfile.open(os.path.join(call, "ncu_pages.tar.gz")) as tar:
        return tar.extractfile(f"ncu_pages/{name}").read().decode()


@SAME_BINARY
def test_liger_cross_entropy_loads_over_several_lines_are_predicted_as_measured(tmp_path):
    """Liger's cross entropy loads each row in two loops with `tl.load(` on one line and its pointer on the
    next (lines 153/154 and 209/210 of liger_kernel/ops/cross_entropy.py). Triton 3.6 locates the op on the
    pointer's line, the interpreter on the call's first line: the loads were left out of the prediction, and
    the H100's rows for lines 154 and 210 had nothing to compare with. Over the whole launch the sectors are
    now what ncu measured, and the ratio is shown beside ncu's (masked-off executions, not compared)."""
    from irscope.analysis.coalescing.sectors import analyze_coalescing

    if importlib.util.find_spec("liger_kernel") is None:
        pytest.skip(
            "liger_kernel is not installed (pip install --no-deps -r tests/corpus/requirements.txt)"
        )
    stem = "liger_cross_entropy.liger_kernel.ops.cross_entropy.liger_cross_entropy_kernel.0"
    path = tmp_path / "liger_cross_entropy.py"
    shutil.copy(os.path.join(ROOT, "tests", "corpus", "drivers", "liger_cross_entropy.py"), path)
    comp = open_file(str(path), target="sm_90").compile_all()[0]
    lines, why = per_source_line(comp, parse_source_page(_member(CALL_A, stem + ".source.csv"))[0])
    assert why is None, why
    raw = parse_raw_page(_member(CALL_A, stem + ".raw.csv"))[0]
    coalescing = analyze_coalescing(comp, max_programs=10**6)
    assert not any("no matching TTGIR op" in note for note in coalescing.notes), coalescing.notes
    by = {(a.what, a.source_line): a for a in agreements(comp, coalescing, lines, raw, None)}
    for line in (154, 210):
        sectors = by[("ld sectors", line)]
        assert sectors.agrees and sectors.predicted == sectors.measured > 0
        ratio = by[("ld sectors/request", line)]
        assert (ratio.predicted, ratio.measured) == (16.0, 15.62) and "masked off" in ratio.note


def test_a_busy_profiling_resource_is_told_from_a_failed_launch():
    """The run's first Liger RoPE profile failed with the driver's profiling resource taken (two files were
    measured at once); ncu_run.py tries such a profile again. Any other failure is not retried."""
    busy = _member(CALL_A, "liger_rope.liger_kernel.ops.rope._triton_rope.0.log")
    assert "The application returned an error code (9)" in busy and resource_busy(busy)
    assert not resource_busy(_member(CALL_A, "liger_rope.liger_kernel.ops.rope._triton_rope.1.log"))


CALL_B = os.path.join(ROOT, "validation", "data", "h100_measure4", "callB", "measure_B")


@SAME_BINARY
@pytest.mark.parametrize(
    "kernel, lines",
    [
        ("chunk_gated_delta_rule_fwd_kkt_solve_kernel", (102, 103, 104, 105, 114, 115, 116, 117)),
        ("chunk_fwd_kernel_o", (137,)),
    ],
)
def test_fla_row_loads_in_mma_slices_are_predicted_as_measured(tmp_path, kernel, lines):
    """fla's gated delta rule loads its gates and betas as row vectors in slices of a tl.dot's MMA layout
    (each in two or three layouts). The H100 measured them; irscope predicted nothing ("not analysed" under
    Triton 3.6). Over the whole launch each line's sectors and requests are now what ncu counted."""
    from irscope.analysis.coalescing.sectors import analyze_coalescing

    if importlib.util.find_spec("fla") is None:
        pytest.skip("fla is not installed (pip install --no-deps -r tests/corpus/requirements.txt)")
    path = tmp_path / "fla_gated_delta_rule.py"
    shutil.copy(os.path.join(ROOT, "tests", "corpus", "drivers", "fla_gated_delta_rule.py"), path)
    ws = open_file(str(path), target="sm_90")
    comp = ws.compile(ws.kernel(kernel))[0]
    module = comp.kernel.qualified_name.rpartition(":")[0]
    stem = f"fla_gated_delta_rule.{module}.{kernel}.0"
    lines_measured, why = per_source_line(
        comp, parse_source_page(_member(CALL_B, stem + ".source.csv"))[0]
    )
    assert why is None, why
    raw = parse_raw_page(_member(CALL_B, stem + ".raw.csv"))[0]
    coalescing = analyze_coalescing(comp, max_programs=10**6)
    by = {
        (a.what, a.source_line): a for a in agreements(comp, coalescing, lines_measured, raw, None)
    }
    for line in lines:
        ratio = by[("ld sectors/request", line)]
        assert ratio.predicted is not None and ratio.agrees, ratio


CALL_C = os.path.join(ROOT, "validation", "data", "h100_measure4", "callC", "measure_C")


def test_a_warp_specialized_launch_counts_its_partitions_warps_in_occupancy():
    """Tutorial 09's WARP_SPECIALIZE launch asks for 4 warps; the compiler adds its partitions' warps and the
    kernel runs 12 a block (`.reqntid 384`). Occupancy counted 4 and predicted 12.5% where the H100 measured
    18.75% (one block of 12 warps of 64, by registers). Each compilation's block is its PTX's `.reqntid`."""
    import json
    import re

    from irscope.analysis.occupancy import occupancy

    ws = open_file(
        os.path.join(ROOT, "tests/corpus/tutorials/triton-3.6/09-persistent-matmul.py"),
        target="sm_90",
    )
    comps = ws.compile(ws.kernel("matmul_kernel_descriptor_persistent"))
    blocks = {}
    for comp in comps:
        threads = int(re.search(r"\.reqntid (\d+)", comp.stage("ptx")).group(1))
        assert (
            comp.block_warps * 32 == threads and occupancy(comp).warps_per_block == comp.block_warps
        )
        blocks[bool(comp.constexprs.get("WARP_SPECIALIZE"))] = comp
    assert blocks[True].block_warps > blocks[True].num_warps == 4 == blocks[False].block_warps
    if TRITON_VERSION.startswith("3.6."):  # the binary the H100 ran: its measured occupancy
        doc = json.load(
            open(
                os.path.join(
                    CALL_C,
                    "json",
                    "tests__corpus__tutorials__triton-3.6__09-persistent-matmul.py.json",
                )
            )
        )
        measured = {
            k["constexprs"]["WARP_SPECIALIZE"]: a["measured"]
            for k in doc["kernels"]
            if k["name"] == "matmul_kernel_descriptor_persistent"
            for a in k["measured"]["agreements"]
            if a["what"] == "occupancy %"
        }
        for ws_on, comp in blocks.items():
            occ = occupancy(comp)
            assert 100 * occ.warps_per_sm / occ.max_warps_per_sm == measured[ws_on]


def _fla_kernel(tmp_path, driver: str, kernel: str, stem: str):
    """One fla kernel's compilation (from a copy of its corpus driver) and ncu's page of it, mapped per line."""
    if importlib.util.find_spec("fla") is None:
        pytest.skip("fla is not installed (pip install --no-deps -r tests/corpus/requirements.txt)")
    path = tmp_path / driver
    shutil.copy(os.path.join(ROOT, "tests", "corpus", "drivers", driver), path)
    ws = open_file(str(path), target="sm_90")
    comp = ws.compile(ws.kernel(kernel))[0]
    page = parse_source_page(_member(CALL_B, stem + ".source.csv"))[0]
    lines, why = per_source_line(comp, page)
    assert why is None, why
    return comp, page, lines


@SAME_BINARY
@pytest.mark.parametrize(
    "driver, kernel, stem, line, total",
    [
        (
            "fla_gated_delta_rule.py",
            "recompute_w_u_fwd_kernel",
            "fla_gated_delta_rule.fla.ops.gated_delta_rule.wy_fast.recompute_w_u_fwd_kernel.0",
            94,
            544,
        ),
        (
            "fla_chunk_gla.py",
            "chunk_gla_fwd_A_kernel_intra_sub_inter",
            "fla_chunk_gla.fla.ops.gla.chunk.chunk_gla_fwd_A_kernel_intra_sub_inter.0",
            124,
            13824,
        ),
    ],
)
def test_lds128_whose_lane_pairs_read_two_chunks_takes_a_wavefront_per_quarter_warp(
    tmp_path, driver, kernel, stem, line, total
):
    """Call B's rows for fla's `b_g` (wy_fast.py:94) and `b_gn` (gla/chunk.py:124): each warp reads a small
    vector back from shared memory with LDS.128 whose lanes 2k and 2k+1 read different 16-byte chunks (lane
    i the chunk i % 4 or i % 8), and ncu counts 4 wavefronts an execution where the half-warp rule said 2
    (288 / 544 and 13,056 / 13,824 on the line). The load rule of validation/data/h100_smem_patterns (LDS.128
    patterns 4 and 9) gives the measured counts, instruction by instruction."""
    from irscope.analysis.banks.report import whole_launch_report
    from irscope.analysis.measured.ncu_parse import INSTRUCTIONS, WAVEFRONTS
    from irscope.findings.agreement import bank_agreements

    comp, page, lines = _fla_kernel(tmp_path, driver, kernel, stem)
    report = whole_launch_report(comp, max_programs=10**6, time_limit=120)
    assert report.complete
    found = {(a.what, a.source_line): a for a in bank_agreements(report, lines)}
    waves = found[("shared wavefronts", line)]
    assert (waves.predicted, waves.measured, waves.agrees) == (total, total, True)
    measured = [
        row.get(WAVEFRONTS) / row.get(INSTRUCTIONS)
        for row in page.rows
        if row.base == "LDS"
        and row.text.split()[0] == "LDS.128"
        and row.get(INSTRUCTIONS)
        and comp.source_map.source_line("sass", _listed(comp)[row.offset]) == line
    ]
    predicted = [
        r.wavefronts / r.executions
        for r in report.accesses
        if r.source_line == line and r.access.kind == "load" and r.access.width == 16
    ]
    assert measured and measured == [4.0] * len(measured) and predicted == [4.0] * len(measured)


def _listed(comp) -> dict[int, int]:
    from irscope.analysis.measured.per_line import listed_offsets

    return {offset: index for offset, (index, _) in listed_offsets(comp.stage("sass")).items()}


@SAME_BINARY
def test_a_four_byte_copy_of_one_float_every_16_bytes_conflicts_on_the_global_side(tmp_path):
    """Call B's row for `b_g` in fla's chunk_gated_delta_rule_fwd_kernel_h_blockdim64 (chunk_delta_h.py:249):
    a 4-byte cp.async (LDGSTS.E) per lane of g at stride HV = 4 floats, so a warp's 32 lanes read bytes 0, 16,
    ..., 112 of four 128-byte lines, 8 lanes on banks 0, 4, ..., 28 of each. Shared memory gets 128 contiguous
    bytes (conflict-free), yet ncu counts 4 wavefronts a copy: the lines pass through the banks of their
    offsets, one line a wavefront. irscope counted shared banks only (336 wavefronts, no conflict, where ncu
    measured 528 and 192); the zero-filled copies past the loop's end take 1, as before."""
    from irscope.analysis.banks.report import whole_launch_report
    from irscope.analysis.measured.ncu_parse import INSTRUCTIONS, WAVEFRONTS
    from irscope.findings.agreement import bank_agreements

    comp, page, lines = _fla_kernel(
        tmp_path,
        "fla_gated_delta_rule.py",
        "chunk_gated_delta_rule_fwd_kernel_h_blockdim64",
        "fla_gated_delta_rule.fla.ops.common.chunk_delta_h.chunk_gated_delta_rule_fwd_kernel_h_blockdim64.0",
    )
    report = whole_launch_report(comp, max_programs=10**6, time_limit=120)
    assert report.complete
    found = {(a.what, a.source_line): a for a in bank_agreements(report, lines)}
    assert [
        (found[(what, 249)].predicted, found[(what, 249)].measured)
        for what in ("bank conflicts", "shared wavefronts")
    ] == [(192, 192), (528, 528)]
    listed = _listed(comp)
    measured = [
        (row.get(INSTRUCTIONS), row.get(WAVEFRONTS))
        for row in page.rows
        if row.base == "LDGSTS" and comp.source_map.source_line("sass", listed[row.offset]) == 249
    ]
    copies = [r for r in report.accesses if r.source_line == 249 and r.access.kind == "cp.async"]
    assert measured == [(16, 64), (64, 208)]
    assert [(r.executions, r.wavefronts) for r in copies] == measured
    assert dict(copies[1].histogram) == {(4, 1): 48, (1, 1): 16} and copies[0].source_ways == 4


CALL_D = os.path.join(ROOT, "validation", "data", "h100_measure4", "callD", "measure_D")


@SAME_BINARY
def test_a_kernel_given_host_tensor_descriptors_is_simulated_with_its_real_arguments(tmp_path):
    """Tutorial 09's matmul_kernel_tma_persistent takes three host TensorDescriptors; each is passed as
    five PTX parameters (the 128-byte TMA descriptor, two shape values, two strides). The bank model gave
    the user's arguments to the PTX's parameters one for one, so M, N and K were read from the wrong ones,
    the simulated program skipped its loop and epilogue, and line 427's STSM stores (256 wavefronts on the
    H100) were predicted as 0. With each descriptor expanded, the epilogue runs and the line agrees."""
    from irscope.analysis.banks.report import launch_inputs, whole_launch_report
    from irscope.analysis.ptx.program import parse_program
    from irscope.findings.agreement import bank_agreements

    path = tmp_path / "09-persistent-matmul.py"
    shutil.copy(
        os.path.join(ROOT, "tests/corpus/tutorials/triton-3.6/09-persistent-matmul.py"), path
    )
    ws = open_file(str(path), target="sm_90")
    comp = ws.compile(ws.kernel("matmul_kernel_tma_persistent"))[0]
    program = parse_program(comp.stage("ptx"))
    params = launch_inputs(comp, program.params, program.threads).params
    values = [params[name] for name in program.params]
    # a, b, c: descriptor, shape (32, 32), strides (32, 1); then M, N, K = 32
    assert values[:15] == [None, 32, 32, 32, 1] * 3 and values[15:18] == [32, 32, 32]
    stem = "09-persistent-matmul.__main__.matmul_kernel_tma_persistent.0"
    lines, why = per_source_line(comp, parse_source_page(_member(CALL_D, stem + ".source.csv"))[0])
    assert why is None, why
    report = whole_launch_report(comp, max_programs=4096, time_limit=120)
    assert report.complete
    found = {(a.what, a.source_line): a for a in bank_agreements(report, lines)}
    waves = found[("shared wavefronts", 427)]
    assert (waves.predicted, waves.measured, waves.agrees) == (256, 256, True)


@SAME_BINARY
def test_a_tensor_descriptor_built_in_the_kernel_leaves_its_lines_shared_accesses_uncompared(
    tmp_path,
):
    """matmul_kernel_descriptor_persistent builds its three descriptors in the kernel
    (tl.make_tensor_descriptor): 13 `tensormap.replace` a descriptor write its fields into shared memory,
    which ptxas emits as 15 STS and 11 LDS (one lane each) on the descriptor's line. irscope predicted
    none of them, and the group of lines 507+513+519+552+554 read 259 wavefronts against the H100's 334
    (78 of them the descriptors'). The group is now shown uncompared, with the reason."""
    from irscope.analysis.banks.report import whole_launch_report
    from irscope.analysis.measured.ncu_parse import WAVEFRONTS
    from irscope.findings.agreement import bank_agreements

    path = tmp_path / "09-persistent-matmul.py"
    shutil.copy(
        os.path.join(ROOT, "tests/corpus/tutorials/triton-3.6/09-persistent-matmul.py"), path
    )
    ws = open_file(str(path), target="sm_90")
    comp = ws.compile(ws.kernel("matmul_kernel_descriptor_persistent"))[0]
    stem = "09-persistent-matmul.__main__.matmul_kernel_descriptor_persistent.0"
    page = parse_source_page(_member(CALL_D, stem + ".source.csv"))[0]
    lines, why = per_source_line(comp, page)
    assert why is None, why
    listed = _listed(comp)
    on_507 = sorted(
        row.base
        for row in page.rows
        if row.get(WAVEFRONTS) and comp.source_map.source_line("sass", listed[row.offset]) == 507
    )
    assert on_507 == ["LDS"] * 11 + ["STS"] * 15
    report = whole_launch_report(comp, max_programs=4096, time_limit=120)
    found = {(a.what, a.source_line): a for a in bank_agreements(report, lines)}
    waves = found[("shared wavefronts", 507)]
    assert waves.measured == 334 and waves.agrees is None
    assert "tensor descriptor built in the kernel" in waves.note
