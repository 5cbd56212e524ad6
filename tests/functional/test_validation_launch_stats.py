"""irscope's launch statistics against Nsight Compute's on the H100, launch by launch, rebuilt from the committed
raw data (validation/data/h100_launch_stats: ncu's raw and details pages per file, and irscope's report of the
same file made offline with Triton 3.6, the H100's). The comparison works irscope's numbers out again with the
current model, so a change to the occupancy or wave model is checked against the measurement."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CALLS = [
    os.path.join(ROOT, "validation", "data", call)
    for call in ("h100_launch_stats", "h100_roofline", "h100_tensor_flops")
]


def _rows(text: str) -> list[str]:
    return [
        row for row in text.splitlines() if row.startswith("| ") and not row.startswith("| file")
    ]


@pytest.mark.parametrize("DATA", CALLS, ids=os.path.basename)
def test_the_launch_statistics_table_is_rebuilt_and_every_launch_agrees_with_ncu(DATA):
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "validation", "ncu_launch_stats.py"), "compare", DATA],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    with open(os.path.join(DATA, "launch_stats.md")) as f:
        published = _rows(f.read())
    rebuilt = _rows(done.stdout)
    assert rebuilt == published
    assert len(rebuilt) >= 30 and all(row.endswith("| yes |") for row in rebuilt)
    # both directions of each rule are in the data: launches ncu's tail-effect rule fired for and did not,
    # grids under the SM count (ncu's small-grid rule) and above
    tail = [row for row in rebuilt if " full + " in row.split("|")[9]]
    assert tail and len(tail) < len(rebuilt)
    small = [row for row in rebuilt if row.split("|")[11].strip() == "yes"]
    assert small and len(small) < len(rebuilt)
    # recall and precision per rule irscope covers: every launch ncu's rules fired for, irscope's did too;
    # irscope's small-grid (under a wave) also holds between the SM count and a wave, by design
    per_rule = [line for line in done.stdout.splitlines() if line.startswith("- tail-effect:")]
    per_rule += [line for line in done.stdout.splitlines() if line.startswith("- small-grid:")]
    with open(os.path.join(DATA, "launch_stats.md")) as f:
        committed = f.read().splitlines()
    assert len(per_rule) == 2 and all(line in committed for line in per_rule)
    assert per_rule[0].endswith(
        f"recall {len(tail)}/{len(tail)}, precision {len(tail)}/{len(tail)}"
    )
    assert f"recall {len(small)}/{len(small)}, precision {len(small)}/" in per_rule[1]
    # ncu's occupancy rule against irscope's low-occupancy: both directions in the data, irscope's => ncu's
    occupancy = [line for line in done.stdout.splitlines() if line.startswith("- low-occupancy:")]
    assert len(occupancy) == 1 and occupancy[0] in committed
    both = int(occupancy[0].split("both ")[1].split(";")[0])
    assert both > 0 and occupancy[0].endswith(f"precision {both}/{both}")
    assert (
        f"irscope's fired for {both} of {both}" in done.stdout
    )  # every one under 50% for a changeable limit
