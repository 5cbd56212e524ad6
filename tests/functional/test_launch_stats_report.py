"""How a launch's grid fills the GPU, as a user sees it: `irscope report` on a file that launches one kernel with
66 programs and with 2,400 (tests/fixtures/grid_of_66.py), through the real front end and its worker."""

import json

from conftest import fixture_path, run_irscope


def test_report_gives_each_grid_its_waves_and_the_findings_rank_last():
    proc = run_irscope(
        "report", fixture_path("grid_of_66.py"), "--json", env={"CUDA_VISIBLE_DEVICES": ""}
    )
    assert proc.returncode == 0, proc.stderr
    (kernel,) = json.loads(proc.stdout)["kernels"]
    assert kernel["launch_count"] == 2
    rows = {row["blocks"]: row for row in kernel["launch_stats"]}
    assert set(rows) == {66, 2400}
    assert rows[66]["text"].startswith(
        "0.03 waves: the grid's 66 blocks fill 66 of 2112 block slots (16 per SM x 132 SMs"
    )
    assert (rows[2400]["full_waves"], rows[2400]["partial_blocks"], rows[2400]["tail_share"]) == (
        1,
        288,
        0.5,
    )
    rules = [f["rule"] for f in kernel["findings"]]
    assert rules[-2:] == ["small-grid", "tail-effect"]  # below every finding that holds at any size
    small = kernel["findings"][-2]
    assert small["severity"] == "info" and small["cost"]["text"] == "2046 of 2112 block slots idle"
    assert small["holds_for_launches"] == 1  # the launch of 66 programs, not the one of 2,400
    assert (
        "This is the size the launch asked for, not the kernel: from 2112 blocks on"
        in small["message"]
    )


def test_the_text_report_has_a_launch_line_per_grid():
    proc = run_irscope("report", fixture_path("grid_of_66.py"), env={"CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0, proc.stderr
    lines = [
        line.strip() for line in proc.stdout.splitlines() if line.strip().startswith("launch ")
    ]
    assert lines == [
        "launch     grid 66 x 1 x 1: 0.03 waves: the grid's 66 blocks fill 66 of 2112 block slots (16 per "
        "SM x 132 SMs of an NVIDIA H100 80GB HBM3); 66 of 132 SMs get no block",
        "launch     grid 2400 x 1 x 1: 1.14 waves: 1 full wave of 2112 blocks (16 per SM x 132 SMs of an "
        "NVIDIA H100 80GB HBM3) and a partial wave of 288 (86% of its slots idle)",
    ]


def test_check_counts_the_launches_a_grid_finding_holds_for():
    proc = run_irscope("check", fixture_path("grid_of_66.py"), env={"CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0, proc.stderr  # info findings do not fail the check
    said = [line for line in proc.stdout.splitlines() if "info[" in line]
    assert len(said) == 2 and all(
        "in add_kernel: in 1 of 2 launches: grid " in line for line in said
    )


def test_the_grids_of_launches_a_gpu_run_did_not_keep_are_counted():
    """On a GPU a later launch of a specialization already captured is not kept (its tensors would stay in GPU
    memory): its grid is counted on the first launch (`repeat_grids`), so the launch statistics have its row. On
    the H200 the 2,400-program launch of grid_of_66.py had no row before
    (validation/data/h200_device_chip/first_call/report_gpu.txt; second_call/: both rows)."""
    from irscope.analysis.launch_stats import launch_stats
    from irscope.engine.session import open_file

    ws = open_file(fixture_path("grid_of_66.py"), target="sm_90", compile_ahead=False)
    first = ws.launches[0]
    ws.launches[:] = [first]  # as a GPU run keeps it: the second launch's grid on the first
    first.repeat_grids = {(2400, 1, 1): 3}
    (comp,) = ws.compile(first.kernel)
    assert comp.grid_launches == {(66, 1, 1): 1, (2400, 1, 1): 3}
    assert [row.blocks for row in launch_stats(comp)] == [66, 2400]
