"""A file that launches nothing on the default virtual GPU after asking what it is, is run again on the
other NVIDIA targets, newest first (engine/capture/retarget.py). Real files, real Triton, the real virtual GPU."""

import json

import pytest
from conftest import fixture_path, run_irscope

from irscope.base.errors import IrscopeError
from irscope.engine.capture.budget import CaptureBudget
from irscope.engine.capture.discover import read_user_file
from irscope.engine.capture.retarget import other_targets
from irscope.engine.capture.run import run_user_file
from irscope.engine.session import open_file
from irscope.engine.triton_compat import Target


def test_other_targets_are_the_nvidia_ones_newest_first_data_center_before_consumer():
    assert [t.name for t in other_targets(Target("sm_90"))] == [
        "sm_100",
        "sm_120",
        "sm_89",
        "sm_80",
    ]
    assert [t.name for t in other_targets(Target("sm_100"))] == [
        "sm_120",
        "sm_90",
        "sm_89",
        "sm_80",
    ]


def test_a_file_for_another_gpu_is_shown_for_the_newest_target_where_it_launches():
    ws = open_file(fixture_path("needs_sm100.py"), compile_ahead=False)
    assert ws.target.name == "sm_100" and len(ws.launches) == 1
    note = ws.notes[0]
    assert note == (
        f"{ws.user_file.shown} launched nothing on a virtual sm_90, whose capability it asked; shown "
        f"for a virtual sm_100, where it launches; --target to choose"
    )
    assert "B200 (sm_100)" in ws.device and ws.device.endswith(
        "irscope chose sm_100: the file launched nothing on the default sm_90"
    )
    (comp,) = ws.compile_all()
    assert comp.ok and comp.target.name == "sm_100" and "ld.global" in comp.stage("ptx")


def test_a_chosen_target_is_never_changed():
    ws = open_file(fixture_path("needs_sm100.py"), target="sm_90", compile_ahead=False)
    assert ws.target.name == "sm_90" and not ws.launches and not ws.notes
    with pytest.raises(IrscopeError, match="launches no kernel"):
        ws.compile_all()


def test_a_file_that_asks_nothing_is_not_run_again():
    ws = open_file(fixture_path("no_launch.py"), compile_ahead=False)
    assert ws.target.name == "sm_90" and not ws.notes and "chose" not in ws.device


def test_a_file_that_launches_on_no_target_says_which_were_tried():
    ws = open_file(fixture_path("needs_big_gpu.py"), compile_ahead=False)
    assert ws.target.name == "sm_90" and not ws.launches
    assert ws.notes == [
        f"{ws.user_file.shown} launched nothing on a virtual sm_90, whose properties it asked, "
        f"nor on a virtual sm_100, sm_120, sm_89, sm_80"
    ]
    with pytest.raises(IrscopeError, match="launches no kernel"):
        ws.compile_all()


def test_a_run_again_stopped_in_its_setup_is_shown_with_where_it_was_stopped(monkeypatch):
    """On sm_100 the file works for minutes before its launch: the limit stops it there, and that is what
    irscope says (not "launched nothing"), with the line and how to give it longer."""
    monkeypatch.setenv("IRSCOPE_CAPTURE_LIMIT", "2")
    ws = open_file(fixture_path("needs_sm100_slow_setup.py"), compile_ahead=False)
    assert ws.target.name == "sm_100" and not ws.launches
    assert ws.notes[0] == (
        f"{ws.user_file.shown} launched nothing on a virtual sm_90, whose capability it asked; on a "
        f"virtual sm_100 it was stopped (the 2 s limit) before it launched anything; --target to choose"
    )
    with pytest.raises(IrscopeError, match=r"stopped at line 2[34] \(the 2 s limit\)"):
        ws.compile_all()


def test_a_file_that_raises_on_the_default_target_is_shown_where_it_runs_through():
    """Gluon tutorial 09's way: it raises "requires a Blackwell GPU" on sm_90, and on sm_100 runs through
    launching nothing (its tests launch the kernel): shown for sm_100, with a line that says which of its
    runs raised, and the error names the test functions."""
    ws = open_file(fixture_path("needs_sm100_tests_launch.py"), compile_ahead=False)
    assert ws.target.name == "sm_100" and not ws.launches
    assert ws.notes[0] == (
        f"{ws.user_file.shown} raised RuntimeError on a virtual sm_90, whose capability it asked, and "
        f"launched nothing on a virtual sm_100, sm_120, sm_89, sm_80; on sm_100 it runs through without an "
        f"error, shown here; --target to choose"
    )
    with pytest.raises(IrscopeError) as caught:
        ws.compile_all()
    assert str(caught.value).endswith(
        f"its test functions launch them: irscope -m pytest {ws.user_file.shown}"
    )


def test_the_report_says_so_in_its_notes_and_device_line():
    """Through the real front end and its worker, as a user runs it."""
    proc = run_irscope(
        "report", fixture_path("needs_sm100.py"), "--json", env={"CUDA_VISIBLE_DEVICES": ""}
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [k["target"] for k in doc["kernels"]] == ["sm_100"]
    assert (
        "shown for a virtual sm_100" in doc["notes"][0] and "irscope chose sm_100" in doc["device"]
    )
    assert "irscope: note: " in proc.stderr and "shown for a virtual sm_100" in proc.stderr


def test_each_run_of_a_budget_is_watched_afresh():
    """A run again gets its own budget: the same CaptureBudget stops the second run too."""
    budget = CaptureBudget(fixture_path("runs_forever.py"), quiet_s=0.5, limit_s=5)
    user_file = read_user_file(fixture_path("runs_forever.py"))
    for _ in range(2):
        result = run_user_file(
            user_file, run_main=True, use_interpreter=True, target=Target("sm_90"), budget=budget
        )
        assert (
            result.stopped
            and "nothing launched in the last 1.5 s" in result.stopped
            and len(result.launches) == 1
        )  # stopped by the quiet time (the 5 s limit would give another reason), not by how fast it ran
