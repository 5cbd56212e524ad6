"""irscope's bank model against Gluon's own count: `gl.bank_conflicts(register type, shared type)` is the
compiler's static number of excess shared-memory accesses per wavefront for a layout pair; the bank model runs
the PTX per thread and counts wavefronts. For each pair of tests/fixtures/gluon_bank_pairs.py (0, 31, 0 and 15
on Triton 3.6 and 3.9), every shared store and load of the tile must have exactly that many excess wavefronts
per executed instruction. Real compiles; Gluon's number is what the compile prints (a fresh Triton cache, so
that the code generator runs)."""

import builtins

import triton
from conftest import fixture_path

from irscope.analysis.banks.report import bank_report
from irscope.engine.session import open_file

SHARED = {"store", "load", "stmatrix", "ldmatrix"}


def test_the_bank_model_counts_what_gluon_itself_counts(tmp_path, monkeypatch):
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "triton"))
    printed = []
    real_print = builtins.print

    def keep(*values, **kwargs):
        if values and str(values[0]) == "BANK_CONFLICTS":
            printed.append(int(values[1]))
        return real_print(*values, **kwargs)

    monkeypatch.setattr(builtins, "print", keep)
    ws = open_file(fixture_path("gluon_bank_pairs.py"), target="sm_90", compile_ahead=False)
    comps = ws.compile_all()
    monkeypatch.setattr(builtins, "print", real_print)
    assert len(comps) == 4 and all(comp.ok for comp in comps)
    assert printed == [0, 31, 0, 15]  # the pairs: rows, columns, swizzled columns, 16x2 lanes
    for comp, gluon_count in zip(comps, printed):
        report = bank_report(comp)
        accesses = [a for a in report.accesses if a.access.kind in SHARED]
        assert accesses, comp.launch.constexprs
        for result in accesses:
            assert result.executions and result.unknown == 0
            excess = (result.wavefronts - result.ideal) / result.executions
            assert excess == gluon_count, (
                result.access.kind,
                result.wavefronts,
                result.ideal,
                gluon_count,
            )
