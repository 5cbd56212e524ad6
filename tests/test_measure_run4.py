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
from irscope.core.measure.agreement import agreements
from irscope.core.measure.ncu_parse import parse_raw_page, parse_source_page
from irscope.core.measure.ncu_run import resource_busy
from irscope.core.measure.per_line import per_source_line
from irscope.core.session import open_file
from irscope.core.triton_compat import TRITON_VERSION

CALL_A = os.path.join(ROOT, "validation", "data", "h100_measure4", "callA", "measure_A")
SAME_BINARY = pytest.mark.skipif(not TRITON_VERSION.startswith("3.6."),
                                 reason=f"Triton {TRITON_VERSION} builds other binaries than the 3.6.0 ncu profiled")


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
    from irscope.core.analysis.coalescing import analyze_coalescing
    if importlib.util.find_spec("liger_kernel") is None:
        pytest.skip("liger_kernel is not installed (pip install --no-deps -r tests/corpus/requirements.txt)")
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
@pytest.mark.parametrize("kernel, lines", [
    ("chunk_gated_delta_rule_fwd_kkt_solve_kernel", (102, 103, 104, 105, 114, 115, 116, 117)),
    ("chunk_fwd_kernel_o", (137, )),
])
def test_fla_row_loads_in_mma_slices_are_predicted_as_measured(tmp_path, kernel, lines):
    """fla's gated delta rule loads its gates and betas as row vectors in slices of a tl.dot's MMA layout
    (each in two or three layouts). The H100 measured them; irscope predicted nothing ("not analysed" under
    Triton 3.6). Over the whole launch each line's sectors and requests are now what ncu counted."""
    from irscope.core.analysis.coalescing import analyze_coalescing
    if importlib.util.find_spec("fla") is None:
        pytest.skip("fla is not installed (pip install --no-deps -r tests/corpus/requirements.txt)")
    path = tmp_path / "fla_gated_delta_rule.py"
    shutil.copy(os.path.join(ROOT, "tests", "corpus", "drivers", "fla_gated_delta_rule.py"), path)
    ws = open_file(str(path), target="sm_90")
    comp = ws.compile(ws.kernel(kernel))[0]
    module = comp.kernel.qualified_name.rpartition(":")[0]
    stem = f"fla_gated_delta_rule.{module}.{kernel}.0"
    lines_measured, why = per_source_line(comp, parse_source_page(_member(CALL_B, stem + ".source.csv"))[0])
    assert why is None, why
    raw = parse_raw_page(_member(CALL_B, stem + ".raw.csv"))[0]
    coalescing = analyze_coalescing(comp, max_programs=10**6)
    by = {(a.what, a.source_line): a for a in agreements(comp, coalescing, lines_measured, raw, None)}
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

    from irscope.core.analysis.occupancy import occupancy
    ws = open_file(os.path.join(ROOT, "tests/corpus/tutorials/triton-3.6/09-persistent-matmul.py"), target="sm_90")
    comps = ws.compile(ws.kernel("matmul_kernel_descriptor_persistent"))
    blocks = {}
    for comp in comps:
        threads = int(re.search(r"\.reqntid (\d+)", comp.stage("ptx")).group(1))
        assert comp.block_warps * 32 == threads and occupancy(comp).warps_per_block == comp.block_warps
        blocks[bool(comp.constexprs.get("WARP_SPECIALIZE"))] = comp
    assert blocks[True].block_warps > blocks[True].num_warps == 4 == blocks[False].block_warps
    if TRITON_VERSION.startswith("3.6."):  # the binary the H100 ran: its measured occupancy
        doc = json.load(open(os.path.join(CALL_C, "json", "tests__corpus__tutorials__triton-3.6__"
                                                          "09-persistent-matmul.py.json")))
        measured = {k["constexprs"]["WARP_SPECIALIZE"]: a["measured"] for k in doc["kernels"]
                    if k["name"] == "matmul_kernel_descriptor_persistent"
                    for a in k["measured"]["agreements"] if a["what"] == "occupancy %"}
        for ws_on, comp in blocks.items():
            occ = occupancy(comp)
            assert 100 * occ.warps_per_sm / occ.max_warps_per_sm == measured[ws_on]
