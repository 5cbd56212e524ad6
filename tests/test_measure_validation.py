"""The measured-mode validation table (docs/validation.md) is rebuilt from the committed H100 run
(validation/data/h100_measure: irscope's own --measure JSON per file), and a broken row fails it."""

import json
import os
import shutil
import subprocess
import sys

from conftest import ROOT

DATA = os.path.join(ROOT, "validation", "data", "h100_measure")
SCRIPT = os.path.join(ROOT, "validation", "gpu_measure.py")


def _rebuild(folder: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, "--rebuild", folder], capture_output=True, text=True, timeout=120)


def test_the_measure_table_is_rebuilt_from_the_committed_run():
    done = _rebuild(DATA)
    assert done.returncode == 0, done.stdout[-2000:]
    table = [line for line in done.stdout.splitlines() if line.startswith("|")]
    committed = [line for line in open(os.path.join(DATA, "measure.md")).read().splitlines() if line.startswith("|")]
    assert table == committed and len(table) == 16  # header, rule, 14 compilations
    assert "14 of 14 compilations measured and agreeing" in done.stdout
    strided = next(line for line in table if "strided_gather_kernel" in line)
    assert "26 ld 32 / 32" in strided and strided.endswith("| PASS |")
    doc = open(os.path.join(ROOT, "docs", "validation.md")).read()
    for line in table[2:]:
        assert line in doc, line


def test_a_measurement_that_disagrees_fails_the_table(tmp_path):
    shutil.copytree(DATA, tmp_path / "run")
    path = tmp_path / "run" / "json" / "kernels__strided.py.json"
    doc = json.loads(path.read_text())
    for a in doc["kernels"][0]["measured"]["agreements"]:
        if a["what"] == "ld sectors" and a["source_line"] == 26:
            a["measured"], a["agrees"] = a["measured"] / 2, False
    path.write_text(json.dumps(doc))
    done = _rebuild(str(tmp_path / "run"))
    assert done.returncode == 1
    assert "FAIL: ld sectors at line 26: measured 2048.0, predicted 4096" in done.stdout
