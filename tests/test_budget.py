"""The capture budget (irscope/core/budget.py) on a real run of a file in the interpreter."""

import time

from conftest import fixture_path
from irscope.core.budget import CaptureBudget
from irscope.core.session import open_file


def test_a_launch_that_runs_longer_than_the_quiet_time_does_not_lose_the_launches_after_it():
    # The first launch runs 4096 programs in the interpreter, longer than the quiet time; on a GPU a cold
    # compile does the same. The quiet time counts from its end, so the launch after it is still captured.
    path = fixture_path("slow_first_launch.py")
    budget = CaptureBudget(path, quiet_s=0.3)
    started = time.monotonic()
    ws = open_file(path, target="sm_90", compile_ahead=False, budget=budget)
    assert time.monotonic() - started > 0.6  # the first launch did run past the quiet time
    assert len(ws.launches) == 2
    assert len(ws.compile(ws.kernels[0])) == 2  # two specializations: n a multiple of 16, and not
    assert not any("nothing new launched" in note for note in ws.notes), ws.notes


def test_a_file_that_goes_on_without_launching_still_ends_after_the_quiet_time():
    path = fixture_path("runs_forever.py")
    ws = open_file(path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, quiet_s=0.5))
    assert any("nothing new launched in the last 0.5 s" in note for note in ws.notes), ws.notes
