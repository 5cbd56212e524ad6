"""irscope's bank model against Gluon's own count: `gl.bank_conflicts(register type, shared type)` is the
compiler's static number of excess shared-memory accesses per wavefront for a layout pair; the bank model runs
the PTX per thread and counts wavefronts. For each pair of tests/fixtures/gluon_bank_pairs.py (0, 31, 0 and 15
on Triton 3.6 and 3.9), every shared store and load of the tile must have exactly that many excess wavefronts
per executed instruction. Real compiles, in a process of their own with a Triton cache of its own: Gluon's
number is what the compile prints, and only a compile that runs the code generator prints it."""

import json
import os
import subprocess
import sys

from conftest import ROOT, fixture_path

CHILD = r"""
import builtins, json, sys
printed = []
real_print = builtins.print
def keep(*values, **kwargs):
    if values and str(values[0]) == "BANK_CONFLICTS":
        printed.append(int(values[1]))
        return None
    return real_print(*values, **kwargs)
builtins.print = keep
from irscope.analysis.banks.report import bank_report
from irscope.engine.session import open_file
ws = open_file(sys.argv[1], target="sm_90", compile_ahead=False)
rows = []
for comp in ws.compile_all():
    report = bank_report(comp) if comp.ok else None
    rows.append(None if report is None else [
        [r.access.kind, r.executions, r.unknown, r.wavefronts, r.ideal] for r in report.accesses
    ])
builtins.print = real_print
print("RESULT " + json.dumps({"gluon": printed, "irscope": rows}))
"""
SHARED = {"store", "load", "stmatrix", "ldmatrix"}


def test_the_bank_model_counts_what_gluon_itself_counts(tmp_path):
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "triton"), "PYTHONPATH": ROOT}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, fixture_path("gluon_bank_pairs.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, done.stderr[-2000:]
    result = json.loads(line[len("RESULT ") :])
    assert result["gluon"] == [
        0,
        31,
        0,
        15,
    ]  # the pairs: rows, columns, swizzled columns, 16x2 lanes
    assert len(result["irscope"]) == 4
    for gluon_count, accesses in zip(result["gluon"], result["irscope"]):
        shared = [a for a in accesses or [] if a[0] in SHARED]
        assert shared, accesses
        for kind, executions, unknown, wavefronts, ideal in shared:
            assert executions and unknown == 0
            assert (wavefronts - ideal) / executions == gluon_count, (kind, wavefronts, ideal)
