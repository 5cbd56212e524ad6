"""What the capture reaches, and what it says of what it did not reach (irscope/base/missing.py,
triton_compat/program_budget.py, capture.py's comparisons after a launch cut short)."""

import json
import os
import subprocess
import sys

from conftest import fixture_path

from irscope.engine.capture.budget import CaptureBudget
from irscope.engine.session import open_file


def test_a_check_after_a_launch_cut_short_does_not_lose_the_launches_after_it(monkeypatch):
    # The first launch is cut short in the interpreter, so its output is incomplete and the file's own
    # assert_close / allclose would fail where a GPU passes, and the second kernel would never launch.
    monkeypatch.setenv("IRSCOPE_INTERPRET_S", "0.2")
    path = fixture_path("checked_after_long_launch.py")
    ws = open_file(path, target="sm_90", compile_ahead=False)
    assert [launch.kernel.name for launch in ws.launches] == ["scale_kernel", "shift_kernel"], (
        ws.run_warning
    )
    assert ws.launches[0].programs is not None and ws.run_warning is None
    assert any(
        "3 result comparison(s) the file made after a launch was cut short" in n for n in ws.notes
    ), ws.notes
    # unused_kernel is missing, and why; twice() is a helper scale_kernel calls, not a kernel of its own
    assert [(m.kernel, m.ended) for m in ws.missing] == [("unused_kernel", "ended")]
    assert (
        "ended without launching it" in ws.missing[0].reason
        and "--kernel unused_kernel" in ws.missing[0].how
    )


def test_a_whole_launch_is_interpreted_whole_and_checked_for_real(monkeypatch):
    # With time enough for the whole grid nothing is cut, and the file's checks compare for real: a wrong
    # result still fails the way it does on a GPU.
    import torch

    monkeypatch.setenv("IRSCOPE_INTERPRET_S", "600")
    path = fixture_path("checked_after_long_launch.py")
    # a quiet time to spare: assert_close's first use imports much of torch, slow on a busy machine
    ws = open_file(
        path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, quiet_s=30)
    )
    assert all(launch.programs is None for launch in ws.launches) and len(ws.launches) == 2
    assert not any("cut short" in n for n in ws.notes)
    assert torch.testing.assert_close is not None and torch.allclose(torch.ones(2), torch.ones(2))


def test_a_stopped_run_names_its_line_and_the_kernels_it_did_not_reach():
    path = fixture_path("stops_before_second_kernel.py")
    ws = open_file(
        path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, quiet_s=0.5)
    )
    assert [launch.kernel.name for launch in ws.launches] == ["first_kernel"]
    (missing,) = ws.missing
    assert (missing.kernel, missing.ended) == ("second_kernel", "stopped")
    # the loop's `for` or its body
    assert any(
        f"stopped at line {line} (nothing launched in the last 1.5 s)" in missing.reason
        for line in (24, 25)
    ), missing.reason
    assert "IRSCOPE_CAPTURE_QUIET" in missing.how


def test_a_kernel_whose_def_the_stopped_run_never_reached_is_named_from_the_files_text():
    """A run stopped before a kernel's `def` has no kernel object for it (Gluon's layout tutorial, stopped while
    it made its inputs, listed nothing of its two later kernels): it is found in the text and named, with the
    line the run was on; a jit helper another kernel calls is not a launch of its own."""
    path = fixture_path("stops_before_a_later_def.py")
    ws = open_file(
        path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, quiet_s=0.3)
    )
    assert [launch.kernel.name for launch in ws.launches] == ["first_kernel"]
    (missing,) = ws.missing
    assert (missing.kernel, missing.line, missing.ended) == ("later_kernel", 28, "stopped")
    assert "before it reached its def" in missing.reason
    assert any(f"stopped at line {n} (" in missing.reason for n in (18, 19)), missing.reason


def test_a_file_that_raises_before_a_kernel_says_so():
    from irscope.base.missing import missing_kernels
    from irscope.base.model import Kernel

    kernels = [Kernel("k", "/f.py", 3, None), Kernel("other", "/lib.py", 9, None)]
    (missing,) = missing_kernels(
        kernels, [], "/f.py", ran=True, raised="ValueError: no input at line 12"
    )
    assert missing.ended == "raised" and "raised ValueError: no input at line 12" in missing.reason
    # --no-run launches nothing by design
    assert missing_kernels(kernels, [], "/f.py", ran=False) == []


def test_a_method_of_a_gluon_aggregate_is_never_a_kernel_the_run_did_not_reach(tmp_path):
    """Gluon tutorial 07, stopped by the quiet time in its last benchmark loop, listed its aggregates' methods
    (`WGMMA.initialize`, a scheduler's `get_tile`) as kernels "stopped before it reached its def", defs the
    run had long passed: a kernel calls them through the class it is given; nobody launches them."""
    from irscope.base.missing import jit_definitions, missing_kernels

    path = tmp_path / "aggregate.py"
    path.write_text(
        "from triton.experimental import gluon\n"
        "from triton.experimental.gluon.language._core import aggregate\n\n"
        "@aggregate\nclass Scheduler:\n    @gluon.jit\n    def get_tile(self, idx):\n        return idx\n\n"
        "@gluon.jit\ndef kernel(x):\n    pass\n"
    )
    assert jit_definitions(path.read_text()) == [("kernel", 11)]
    (missing,) = missing_kernels(
        [], [], str(path), ran=True, stopped_line=12, stopped_cause="nothing new launched"
    )
    assert missing.kernel == "kernel"


def test_a_warp_specialize_partition_is_never_a_kernel_the_run_did_not_reach(tmp_path):
    """Gluon tutorial 08 hands its partitions to `gl.warp_specialize` by name, never calling them: a stopped run
    listed them as kernels it had not reached."""
    from irscope.base.missing import missing_kernels

    path = tmp_path / "partitions.py"
    path.write_text(
        "from triton.experimental import gluon\n\n"
        "@gluon.jit\ndef load_partition(x):\n    pass\n\n"
        "@gluon.jit\ndef mma_partition(x):\n    pass\n\n"
        "@gluon.jit\ndef kernel(x):\n"
        "    gluon.language.warp_specialize((x,), load_partition, (x,), [mma_partition], [1], [24])\n\n"
        "@gluon.jit\ndef other_kernel(x):\n    pass\n"
    )
    missing = missing_kernels(
        [], [], str(path), ran=True, stopped_line=14, stopped_cause="nothing new launched"
    )
    assert sorted(m.kernel for m in missing) == ["kernel", "other_kernel"]


def test_report_says_what_it_did_not_reach_in_text_and_json():
    env = {**os.environ, "IRSCOPE_CAPTURE_QUIET": "0.5"}
    path = fixture_path("stops_before_second_kernel.py")
    run = subprocess.run(
        [sys.executable, "-m", "irscope", "report", path, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert [m["kernel"] for m in doc["missing"]] == ["second_kernel"]
    assert set(doc["missing"][0]) == {"kernel", "line", "ended", "reason", "how", "file"}
    assert doc["missing"][0]["file"] is None  # defined in the opened file itself
    text = subprocess.run(
        [sys.executable, "-m", "irscope", "report", path],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert "not reached (1 kernel(s) this run did not launch" in text.stdout
    assert "second_kernel (line 16): the run was stopped at line 2" in text.stdout


def test_the_tui_says_what_the_run_did_not_reach_in_its_header_and_picker(monkeypatch):
    import asyncio

    from tui_helpers import wait_until_shown

    from irscope.tui.app import IrscopeApp
    from irscope.tui.screens import PickerScreen

    monkeypatch.setenv("IRSCOPE_CAPTURE_QUIET", "0.5")  # the worker inherits it

    async def scenario():
        app = IrscopeApp(fixture_path("stops_before_second_kernel.py"), target="sm_90")
        async with app.run_test(size=(140, 36)) as pilot:
            await wait_until_shown(app, pilot)
            header = str(app.main.query_one("#header").render())
            assert "1 kernel(s) not reached (p)" in header, header
            # one compilation: the picker opens all the same, to say what is missing
            await pilot.press("p")
            await pilot.pause(0.2)
            assert isinstance(app.screen, PickerScreen)
            said = str(app.screen.query_one("#picker-missing").render())
            assert (
                "not reached: second_kernel (line 16)" in said and "IRSCOPE_CAPTURE_QUIET" in said
            ), said

    asyncio.run(scenario())


def test_a_run_stopped_before_its_first_launch_says_where_and_how_to_go_on():
    # A file that spends its first minute in torch work (a reference timing) before it launches: the limit ends
    # it, and the one line says so, with the line it was on, instead of "launches no kernel".
    import pytest

    from irscope.base.errors import IrscopeError

    path = fixture_path("works_before_launching.py")
    ws = open_file(path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, limit_s=1))
    assert not ws.launches
    with pytest.raises(IrscopeError) as err:
        ws.compile_all()
    line = str(err.value)
    assert (
        "launched no kernel: the run was stopped at line 1" in line and "(the 1 s limit)" in line
    ), line
    assert "IRSCOPE_CAPTURE_LIMIT" in line and "--kernel NAME --no-run" in line, line


def test_a_file_whose_kernels_live_elsewhere_stopped_before_it_launched_says_so():
    # It defines no kernel of its own (they are in sibling_kernels.py): the one line must say the run was
    # stopped before a launch, not that the file has no kernel.
    import pytest

    from irscope.base.errors import IrscopeError

    path = fixture_path("sibling_after_long_work.py")
    with pytest.raises(IrscopeError) as err:
        open_file(path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, limit_s=1))
    line = str(err.value)
    assert (
        "launched no kernel before the run was stopped at line 1" in line
        and "(the 1 s limit)" in line
    ), line
    assert "defines no @triton.jit kernel" not in line


def test_a_benchmark_loop_of_identical_launches_is_not_interpreted_again():
    # 2,000 identical launches: the first runs (and its result is right: the file checks it), the repeats are
    # neither recorded nor run again, and the kernel after the loop is reached within the quiet time.
    path = fixture_path("benchmark_loop.py")
    ws = open_file(
        path,
        target="sm_90",
        compile_ahead=False,
        budget=CaptureBudget(path, quiet_s=3, limit_s=120),
    )
    assert [launch.kernel.name for launch in ws.launches] == ["copy_kernel", "negate_kernel"], (
        ws.notes
    )
    assert ws.run_warning is None and not ws.missing
    assert any(
        "1999 launch(es) the same as the launch of their kernel just before" in n for n in ws.notes
    ), ws.notes


def test_a_launch_with_other_tensors_or_sizes_is_not_a_repeat():
    import torch

    from irscope.engine.triton_compat.repeats import launch_identity

    x, y = torch.empty(64), torch.empty(64)
    same = launch_identity((x, y, 64), {"BLOCK": 16}, (4,))
    assert launch_identity((x, y, 64), {"BLOCK": 16}, (4,)) == same
    assert launch_identity((y, x, 64), {"BLOCK": 16}, (4,)) != same  # other tensors
    # another view of the storage
    assert launch_identity((x[1:], y, 64), {"BLOCK": 16}, (4,)) != same
    assert launch_identity((x, y, 65), {"BLOCK": 16}, (4,)) != same  # another value
    assert launch_identity((x, y, 64), {"BLOCK": 32}, (4,)) != same  # another constexpr
    assert launch_identity((x, y, 64), {"BLOCK": 16}, (8,)) != same  # another grid

    def grid_for(n):  # a wrapper's grid function, made anew at each call as files do
        return lambda meta: (n // meta["B"],)

    assert launch_identity((x,), {}, grid_for(64)) == launch_identity((x,), {}, grid_for(64))
    assert launch_identity((x,), {}, grid_for(64)) != launch_identity((x,), {}, grid_for(128))


def test_two_classes_a_factory_made_that_triton_keys_alike_are_said():
    """Triton's JIT keys a kernel by the text of its specialization; two classes one factory made print alike,
    so on a GPU the second launch silently runs the first's kernel (checked on an H200). irscope shows the one
    compilation Triton makes and says why, naming both classes and the fix."""
    ws = open_file(fixture_path("factory_classes.py"), target="sm_90", compile_ahead=False)
    assert len(ws.compile_all()) == 1  # as Triton compiles: one kernel for both
    (said,) = [n for n in ws.notes if "print alike" in n]
    assert said.startswith(
        "scale_kernel: the classes Scaler(5.0) and Scaler(4.0), given as a constexpr"
    )
    assert "runs the kernel compiled for Scaler(4.0)" in said and "__qualname__" in said


def test_later_launches_of_a_specialization_already_cut_short_get_less_time(monkeypatch):
    """Each chunk's launch would be cut short as the first was, and adds nothing to show: they get
    REPEAT_S, not the whole budget again (program_budget.py), and the note says so."""
    from irscope.engine.triton_compat import program_budget

    monkeypatch.delenv("IRSCOPE_INTERPRET_S", raising=False)
    monkeypatch.setattr(program_budget, "INTERPRET_S", 0.6)
    monkeypatch.setattr(program_budget, "REPEAT_S", 0.06)
    path = fixture_path("chunked_long_launches.py")
    ws = open_file(
        path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, quiet_s=30)
    )
    first, *later = ws.launches
    assert len(later) == 3 and first.programs is not None
    assert all(launch.programs is not None for launch in later)
    assert all(launch.programs[0] * 3 < first.programs[0] for launch in later), [
        launch.programs for launch in ws.launches
    ]
    assert any(
        "4 launch(es) cut short" in n and "already cut short, 0.06 s each" in n for n in ws.notes
    ), ws.notes
