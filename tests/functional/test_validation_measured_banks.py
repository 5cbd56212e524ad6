"""Measured mode's bank-conflict agreement, on Nsight Compute's pages of the H100 measured-mode run
(validation/data/h100_measure/ncu_pages.tar.gz, Triton 3.6.0): each source line's shared-memory wavefronts
and bank conflicts, predicted by irscope's bank model over the whole launch, against ncu's per-instruction
counts summed through irscope's SASS map. matmul.py's line 54 conflicts on the GPU (512 extra wavefronts),
transpose.py's shared tile does not."""

import os
import tarfile

import pytest
from conftest import ROOT, kernel_path

from irscope.analysis.banks.report import whole_launch_report
from irscope.analysis.measured.format import format_measured
from irscope.analysis.measured.ncu_parse import parse_raw_page, parse_source_page
from irscope.analysis.measured.per_line import per_source_line
from irscope.engine.session import open_file
from irscope.engine.triton_compat import TRITON_VERSION
from irscope.findings.agreement import agreements, bank_agreements, disagreement_findings

PAGES = os.path.join(ROOT, "validation", "data", "h100_measure", "ncu_pages.tar.gz")


def _member(name: str) -> str:
    with tarfile.open(PAGES) as tar:
        return tar.extractfile(f"ncu_pages/{name}").read().decode()


def _measured(stem: str, kernel: str):
    comp = open_file(kernel_path(f"{stem}.py"), target="sm_90").compile_all()[0]
    base = f"{stem}.__main__.{kernel}.0"
    lines, why = per_source_line(comp, parse_source_page(_member(base + ".source.csv"))[0])
    return comp, lines, why, parse_raw_page(_member(base + ".raw.csv"))[0]


@pytest.mark.skipif(
    not TRITON_VERSION.startswith("3.6."),
    reason=f"Triton {TRITON_VERSION} builds another matmul binary than the 3.6.0 ncu profiled",
)
def test_matmul_line_54_conflicts_as_measured_and_a_wrong_count_is_a_finding():
    comp, lines, why, raw = _measured("matmul", "matmul_kernel")
    assert why is None
    report = whole_launch_report(comp, max_programs=512, time_limit=30)
    assert report.complete
    by = {(a.what, a.source_line): a for a in bank_agreements(report, lines)}
    assert (by[("bank conflicts", 54)].predicted, by[("bank conflicts", 54)].measured) == (512, 512)
    assert (by[("shared wavefronts", 54)].predicted, by[("shared wavefronts", 54)].measured) == (
        1280,
        1280,
    )
    assert by[("bank conflicts", 55)].measured == 0 and by[("bank conflicts", 55)].agrees
    found = agreements(comp, None, lines, raw, report)
    assert all(a.agrees for a in found if a.what in ("shared wavefronts", "bank conflicts"))
    text = "\n".join(
        format_measured({"ncu": {"lines": []}, "agreements": [a.to_json() for a in found]})
    )
    assert "line 54: bank conflicts: measured 512, predicted 512  agrees" in text
    # a measurement with half the conflicts on line 54: the agreement fails and becomes a finding
    line54 = next(c for c in lines if c.source_line == 54)
    line54.shared_wavefronts -= 256
    bad = disagreement_findings(comp, agreements(comp, None, lines, raw, report))
    assert [(f.rule, f.source_line) for f in bad] == [("measured-disagrees", 54)]
    assert "bank conflicts 512, Nsight Compute measured 256" in " ".join(f.message for f in bad)


@pytest.mark.skipif(
    not TRITON_VERSION.startswith(("3.6.", "3.9.")),
    reason=f"Triton {TRITON_VERSION} may build another transpose binary than 3.6.0 did",
)
def test_a_conflict_free_tile_agrees_and_a_prediction_cut_short_is_not_compared():
    comp, lines, why, _ = _measured("transpose", "transpose_kernel")
    assert why is None
    whole = whole_launch_report(comp, max_programs=512, time_limit=30)
    by = {(a.what, a.source_line): a for a in bank_agreements(whole, lines)}
    assert by[("shared wavefronts", 30)].predicted == by[("shared wavefronts", 30)].measured == 4096
    assert by[("bank conflicts", 30)].predicted == 0 and by[("bank conflicts", 30)].agrees
    # two programs of sixteen: totals of part of the launch are shown, never compared or made a finding
    part = whole_launch_report(comp, max_programs=2, time_limit=30)
    cut = bank_agreements(part, lines)
    assert cut and all(a.agrees is None and "2 of the launch's 16 programs" in a.note for a in cut)
    assert not disagreement_findings(comp, cut)
