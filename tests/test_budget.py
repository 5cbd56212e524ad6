"""The capture budget (irscope/core/budget.py) on a real run of a file in the interpreter, and the rule a
run on a real GPU follows."""

import time

from conftest import fixture_path
from irscope.core.budget import CaptureBudget
from irscope.core.session import open_file


def test_in_the_interpreter_the_quiet_time_counts_from_the_capture():
    # The first launch runs 4096 programs in the interpreter, longer than the quiet time. irscope compiles
    # it elsewhere; the file is stopped a quiet time after it was captured, not after minutes of
    # interpreting (Triton's fused-attention tutorial interprets a benchmark-sized launch for minutes).
    path = fixture_path("slow_first_launch.py")
    budget = CaptureBudget(path, quiet_s=0.3)
    ws = open_file(path, target="sm_90", compile_ahead=False, budget=budget)
    assert len(ws.launches) == 1
    assert any("nothing new launched in the last 0.3 s" in note for note in ws.notes), ws.notes


def test_on_a_gpu_the_quiet_time_counts_from_the_return_of_a_new_launch():
    # On a GPU a new launch compiles inside the file's run (seconds when the cache is cold): no quiet time
    # counts until it returns, so the launches after it are still captured.
    budget = CaptureBudget("file.py", quiet_s=0.2, limit_s=60)
    assert budget.quiet_from_return  # capture.py turns it off for the interpreter
    budget.launched(object(), (1,), {}, None)
    now = time.monotonic()
    assert budget._spent(now + 5) is None  # compiling for 5 s: not quiet
    budget.returned()
    assert budget._spent(time.monotonic() + 0.1) is None
    assert "nothing new launched in the last 0.2 s" in budget._spent(time.monotonic() + 0.3)


def test_a_file_that_goes_on_without_launching_still_ends_after_the_quiet_time():
    path = fixture_path("runs_forever.py")
    ws = open_file(path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, quiet_s=0.5))
    assert any("nothing new launched in the last 0.5 s" in note for note in ws.notes), ws.notes
