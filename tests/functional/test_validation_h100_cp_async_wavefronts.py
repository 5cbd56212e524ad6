"""cp.async (LDGSTS) wavefronts: the offline record of each launch, and the search for a rule that fits every
committed H100 row (validation/cp_async_rules.py, issue 15 item 2 / issue 17)."""

import json
import os
import subprocess
import sys

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "validation", "cp_async_rules.py")
ENV = {**os.environ, "PYTHONPATH": ROOT, "CUDA_VISIBLE_DEVICES": ""}


def test_each_launch_of_one_specialization_is_recorded_with_its_own_arguments(tmp_path):
    # the probe launches one kernel four times, three of them with one specialization: K = 128, K = 256 and
    # A shifted by 64 bytes; the record once gave all three the first launch's arguments
    probe = os.path.join(ROOT, "validation", "probes", "cp_async_probe.py")
    done = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "validation", "ncu_bank_conflicts.py"),
            "--record",
            probe,
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=ENV,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with open(tmp_path / "cp_async_probe.launches.json") as f:
        launches = json.load(f)["launches"]
    params = [
        [launch["params"][f"probe_kernel_param_{i}"] for i in (0, 3, 4)] for launch in launches
    ]
    a = 1 << 40  # argument 0's synthetic address
    assert params == [[a, 128, 160], [a, 256, 288], [a, 128, 160], [a + 64, 128, 160]]
    assert launches[0]["ptx"] == launches[1]["ptx"] == launches[3]["ptx"] != launches[2]["ptx"]


def test_no_rule_of_addresses_fits_the_probe():
    done = subprocess.run(
        [sys.executable, SCRIPT, "--facts"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    # launch 0's second A copy and launch 3's first read the same pattern (lanes, shared offsets, global lines,
    # bytes within the line, all fetching), and the H100 counted 8 and 4 wavefronts a copy
    second = next(
        line
        for line in lines
        if line.startswith("cp_async_probe launch 0 line 29: ") and "[R6.64+0x40], P1" in line
    )
    assert "wavefronts/exec  8.0" in second
    assert "CLASH: same addresses measured cp_async_probe launch 3 [R23] 4.0" in second
    first = next(
        line
        for line in lines
        if line.startswith("cp_async_probe launch 3 line 29: ") and "[R6.64], P0, [R23] " in line
    )
    assert "wavefronts/exec  4.0" in first and "launch 0 [R23+0x1000] 8.0" in first
    # nothing else clashes: matmul.py, attention.py and bank_conflict.py are each consistent with some rule
    assert {line.split(" line ")[0].split(" launch ")[0] for line in lines if "CLASH" in line} == {
        "cp_async_probe"
    }


def test_the_committed_search_is_what_the_script_prints():
    done = subprocess.run(
        [sys.executable, SCRIPT], capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with open(
        os.path.join(ROOT, "validation", "data", "h100_measure2", "call3", "cp_async_rules.txt")
    ) as f:
        committed = f.read()
    assert done.stdout == committed[: committed.index("### --facts\n")]
    summary = [line for line in done.stdout.splitlines() if line.startswith("### ")]
    assert summary[0] == (
        "### now: banks on both sides, zero-fill apart, 8-lane phases: 118 of 124 rows within 5% "
        "(cp.async 32 of 38)"
    )
    # irscope's rule before the fourth run's fla copies: the same rows on this data
    assert (
        summary[1]
        == "### lines of fetching lanes, 8-lane phases: 118 of 124 rows within 5% (cp.async 32 of 38)"
    )
    assert not any(" 124 of 124 " in line for line in summary)  # no rule tried fits every row
