"""The capture budget (irscope/engine/capture/budget.py) on a real run of a file in the interpreter, and the rule a
run on a real GPU follows."""

import time

import pytest
from conftest import fixture_path

from irscope.engine.capture.budget import CaptureBudget
from irscope.engine.session import open_file


def test_a_long_interpreted_launch_is_cut_short_and_the_launch_after_it_is_captured(monkeypatch):
    # The first launch runs 4096 programs in the interpreter, longer than the quiet time (Triton's
    # fused-attention tutorial interprets a benchmark-sized launch for minutes). Its programs stop after the
    # interpreter's time for a launch, no quiet time counts while it runs, and the file's next launch (after
    # 0.6 s of its own work, within the quiet time) is captured. Counted from the capture, the quiet time
    # ran out inside the first launch, and the second was lost.
    monkeypatch.setenv("IRSCOPE_INTERPRET_S", "1.5")
    path = fixture_path("slow_first_launch.py")
    started = time.monotonic()
    ws = open_file(
        path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, quiet_s=2.0)
    )
    assert len(ws.launches) == 2, ws.notes
    run, total = ws.launches[0].programs
    assert 1 <= run < total == 4096 and ws.launches[1].programs is None
    assert any(
        "double_kernel: 1 launch(es) cut short in the interpreter" in note for note in ws.notes
    ), ws.notes
    assert time.monotonic() - started < 30


def test_on_a_gpu_or_in_the_interpreter_the_quiet_time_counts_from_the_return_of_a_new_launch():
    # A new launch compiles inside the file's run on a GPU (seconds when the cache is cold), and is interpreted
    # in it with no GPU: no quiet time counts until it returns, so the launches after it are still captured.
    budget = CaptureBudget("file.py", quiet_s=0.2, limit_s=60)
    kernel = object()
    budget.launched(kernel, (1,), {}, None)
    with budget.executing():
        # compiling or interpreting for 5 s: not quiet
        assert budget._spent(time.monotonic() + 5) is None
    assert budget._spent(time.monotonic() + 0.1) is None
    assert "nothing launched in the last 0.6 s" in budget._spent(time.monotonic() + 0.7)
    for _ in range(6):  # repeats of a specialization already seen: their time is the file's
        budget.launched(kernel, (1,), {}, None)
        with budget.executing():
            time.sleep(0.05)
    assert "nothing new launched in the last 0.2 s" in budget._spent(time.monotonic())


def test_a_launch_is_new_only_for_a_specialization_not_seen_in_this_run():
    """What capture.py keeps on a GPU: a benchmark loop's repeats of one specialization are not kept (their
    tensors would stay in GPU memory), a new alignment, int class or constexpr is."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 0.0, mask=tl.arange(0, BLOCK) < n)

    # not watching a thread: nothing is stopped
    budget = CaptureBudget("file.py", quiet_s=1, limit_s=60)
    jit = kernel
    x = torch.empty(64)
    assert budget.launched(jit, (x, 1024), {"BLOCK": 128}, None)
    # another size, same binary
    assert not budget.launched(jit, (torch.empty(64), 2048), {"BLOCK": 128}, None)
    assert budget.launched(jit, (x[1:], 2048), {"BLOCK": 128}, None)  # not 16-byte aligned
    assert budget.launched(jit, (x, 1000), {"BLOCK": 128}, None)  # not a multiple of 16
    assert budget.launched(jit, (x, 1024), {"BLOCK": 256}, None)  # another constexpr
    long_a, long_b = "a" * 70 + "1", "a" * 70 + "2"  # told apart past 64 characters
    assert budget.launched(jit, (x, 1024), {"BLOCK": long_a}, None) and budget.launched(
        jit, (x, 1024), {"BLOCK": long_b}, None
    )
    assert budget.launched(jit, (x, 1024, 128), {}, None)  # BLOCK given by position
    assert not budget.launched(jit, (x, 4096, 128), {}, None)
    assert budget.launched(jit, (x, 1024, 128), {"num_warps": 8}, None)  # a launch option
    assert budget.launched(object(), (x, 1024), {"BLOCK": 128}, None)  # another kernel


def test_an_object_argument_is_keyed_by_its_fields_and_never_printed():
    """A TensorDescriptor is keyed by its tensor's dtype and alignment, its shape and block shape: told apart
    where those differ, a repeat where they do not. Its repr (which prints the whole tensor) is never asked."""
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor

    class NoRepr(TensorDescriptor):
        def __repr__(self):
            raise AssertionError("the key printed the descriptor")

    budget = CaptureBudget("file.py", quiet_s=1, limit_s=60)
    jit = object()
    a = torch.empty(64, 64)
    assert budget.launched(jit, (NoRepr(a, [64, 64], [64, 1], [16, 16]),), {}, None)
    assert not budget.launched(
        jit, (NoRepr(torch.empty(64, 64), [64, 64], [64, 1], [16, 16]),), {}, None
    )
    assert budget.launched(jit, (NoRepr(a, [64, 64], [64, 1], [32, 16]),), {}, None)  # block shape
    assert budget.launched(jit, (NoRepr(a.half(), [64, 64], [64, 1], [16, 16]),), {}, None)  # dtype


def test_a_stop_never_lands_while_a_launch_is_recorded():
    """The quiet time ran out before the first launch (a file that works long before it launches), and the
    launch's key takes a while to work out in code a stop may land in (here a slow `dtype`; a big
    TensorDescriptor's repr was). The launch must be counted whole, with the quiet time counting from it,
    and the stop may land only after it. Before, the watcher saw the launch counted with the old quiet
    time and stopped the run inside the key: tutorial 10 lost its one launch about one run in four."""
    from irscope.engine.capture.budget import CaptureStopped

    class SlowTensor:
        def data_ptr(self):
            return 0

        @property
        def dtype(self):
            time.sleep(0.8)
            return "fp32"

    budget = CaptureBudget("file.py", quiet_s=0.2, limit_s=60)
    budget.watch()
    counted = stopped_after = False
    try:
        time.sleep(0.6)  # quiet since the start, but nothing launched: no stop yet
        with budget.recording():
            new = budget.launched(object(), (SlowTensor(),), {}, None)
        counted = True
        for _ in range(40):  # now the quiet time runs from the launch, and the stop may land
            time.sleep(0.05)
    except CaptureStopped:
        stopped_after = counted
    finally:
        budget.done()
    assert counted and new and stopped_after
    assert "1 launch(es) of 1 kernel(s) captured" in budget.reason


def test_a_file_that_goes_on_without_launching_still_ends_after_three_times_the_quiet_time():
    path = fixture_path("runs_forever.py")
    ws = open_file(
        path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, quiet_s=0.5)
    )
    assert any("nothing launched in the last 1.5 s" in note for note in ws.notes), ws.notes


def test_work_without_launches_between_kernels_is_not_taken_for_a_loop():
    """The quiet time ends a file that repeats launches it has made; a file busy with work of its own between
    two kernels (torch's first backward on a GPU, a library generating a kernel's code: three H100 files were
    stopped inside such work, their next kernel lost) gets three times the quiet time."""
    budget = CaptureBudget("file.py", quiet_s=0.2, limit_s=60)
    first, second = object(), object()
    budget.launched(first, (1,), {}, None)
    budget.launched(first, (1,), {}, None)  # a repeat, then work with no launch
    later = time.monotonic()
    assert budget._spent(later + 0.1) is None
    # 0.5 s of work with nothing launched: past the quiet time, within three times it
    assert budget._spent(later + 0.5) is None
    assert "nothing launched in the last 0.6 s" in budget._spent(later + 0.7)
    budget.launched(second, (1,), {}, None)  # the next kernel, reached
    for _ in range(
        6
    ):  # then a loop of its repeats, skipped as the same as the last: stopped at the quiet time
        budget.repeated()
        time.sleep(0.05)
    assert "nothing new launched in the last 0.2 s" in budget._spent(time.monotonic())


def _language_state() -> dict:
    import sys

    import triton.language as tl

    state = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("triton.language") and module is not None:
            state.update({(name, key): id(value) for key, value in vars(module).items()})
    state.update({("tensor", key): id(value) for key, value in vars(tl.tensor).items()})
    return state


def test_a_stop_in_the_middle_of_an_interpreted_launch_leaves_triton_language_as_it_was():
    # The interpreter patches triton.language for each launch and puts it back in a `finally`; a stop that
    # landed while it patched or restored left it patched, and every later compile in the process failed
    # ("'ir.value' object has no attribute 'dtype'"). Stops at many points of the launch, then a compile.
    path = fixture_path("slow_first_launch.py")
    open_file(path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, quiet_s=5))
    before = _language_state()
    stopped = 0
    for n in range(4):
        ws = open_file(
            path,
            target="sm_90",
            compile_ahead=False,
            budget=CaptureBudget(path, quiet_s=0.02 + n * 0.08),
        )
        # the budget's thread may get the interpreter lock only after the launch (seen in CI, and here with
        # irscope's capture: not with plain Triton; cause not found): the stop then lands between launches
        stopped += any("launched in the last" in note for note in ws.notes)
        changed = {key for key, value in _language_state().items() if before.get(key) != value}
        assert not changed, sorted(changed)[:5]
    assert stopped, "no run was stopped: the test checked nothing"
    assert ws.compile(ws.kernels[0])[0].ok


def test_a_stop_never_lands_while_the_interpreter_patches_the_language_nor_in_irscope():
    import os
    import threading

    from irscope.engine.capture import budget as budget_module

    def frame_in(filename: str, name: str):
        """A thread parked in a function that claims to live in `filename` under `name`."""
        namespace, release = {}, threading.Event()
        exec(compile(f"def {name}(event):\n    event.wait()\n", filename, "exec"), namespace)
        thread = threading.Thread(target=namespace[name], args=(release,), daemon=True)
        thread.start()
        time.sleep(0.05)
        return thread, release

    interpreter = os.path.join(budget_module._TRITON_DIR, "runtime", "interpreter.py")
    cases = [
        (interpreter, "_patch_lang", False),
        (interpreter, "restore", False),
        (interpreter, "create_load", True),
        (fixture_path("slow_first_launch.py"), "double_kernel", True),
        (
            os.path.join(budget_module._IRSCOPE_DIR, "engine", "capture", "run.py"),
            "run_user_file",
            False,
        ),
        (
            os.path.join(budget_module._IRSCOPE_DIR, "engine", "virtual_gpu", "tensors.py"),
            "__torch_function__",
            True,
        ),
    ]
    budget = CaptureBudget("file.py")
    for filename, name, stoppable in cases:
        thread, release = frame_in(filename, name)
        budget._thread_id = thread.ident
        assert budget._in_stoppable_code() is stoppable, (name, filename)
        release.set()
        thread.join()


def _watched_run(budget: CaptureBudget, body) -> dict:
    """Run `body(seen)` in a thread the budget watches, as a file's run is; `seen` gets when the stop came."""
    import threading

    from irscope.engine.capture.budget import CaptureStopped

    seen: dict = {}

    def file_thread():
        budget.watch()
        started = time.monotonic()
        try:
            budget.launched(object(), (1,), {}, None)
            with budget.executing():
                pass
            body(seen)
        except CaptureStopped:
            seen["stopped after"] = time.monotonic() - started
        finally:
            budget.done()

    thread = threading.Thread(target=file_thread)
    thread.start()
    thread.join()
    return seen


def test_a_file_that_sleeps_is_stopped_after_three_times_the_quiet_time():
    # Only the time the file's thread waited for a CPU is left out of the quiet time: sleeping counts.
    def body(seen):
        for _ in range(100):
            time.sleep(0.05)

    budget = CaptureBudget("file.py", quiet_s=0.3, limit_s=60)
    seen = _watched_run(budget, body)
    assert 0.9 <= seen["stopped after"] < 3.5, seen
    assert "nothing launched in the last 0.9 s" in budget.reason


def test_a_loaded_machine_captures_what_an_idle_one_does():
    # The first launch of the fixture runs for a second or two in the interpreter, well within the quiet
    # time; busy processes on every core stretch it on the wall clock past the quiet time (its thread waits
    # for a CPU), and the launch after it must still be captured: counted on the wall clock alone, the H100
    # corpus run with 12 files at once stopped files inside such launches.
    import os
    import subprocess
    import sys

    path = fixture_path("slow_first_launch.py")
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(2 * (os.cpu_count() or 1))
    ]
    try:
        started = time.monotonic()
        ws = open_file(
            path, target="sm_90", compile_ahead=False, budget=CaptureBudget(path, quiet_s=3.0)
        )
        wall = time.monotonic() - started
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert len(ws.launches) == 2, (wall, ws.notes)
    assert not any("nothing new launched" in note for note in ws.notes), ws.notes
    if wall < 3.0:
        pytest.skip(
            f"the busy processes did not stretch the run past the quiet time ({wall:.1f} s)"
        )


def test_no_quiet_time_counts_while_irscope_explores_a_benchmark_sweep():
    # The later points of a benchmark's sweep are irscope's search for specializations (run_sweep bounds it on
    # its own): the file is not stopped inside it, and its quiet time starts again after it.
    budget = CaptureBudget("file.py", quiet_s=0.2, limit_s=60)
    budget.launched(object(), (1,), {}, None)
    with budget.quiet_paused():
        assert budget._spent(time.monotonic() + 5) is None
        with budget.executing():  # a warmup that compiles inside the sweep does not end the pause
            pass
        assert budget._spent(time.monotonic() + 5) is None
    assert budget._spent(time.monotonic() + 0.1) is None
    assert "nothing launched" in budget._spent(time.monotonic() + 0.7)


def test_torch_work_a_gpu_does_in_microseconds_is_left_out_of_the_quiet_time_which_then_goes_on():
    """The virtual GPU runs torch operations on GPU-sized tensors outside the quiet time (virtual_gpu/tensors.py):
    a cross-entropy benchmark's torch baseline over 8192 x 65536 logits took this CPU seconds between two of its
    kernel's sizes, and the run was stopped there. Unlike a sweep's pause, the quiet time then goes on from
    where it was."""
    budget = CaptureBudget("file.py", quiet_s=0.4, limit_s=60)
    kernel = object()
    budget.launched(kernel, (1,), {}, None)
    time.sleep(0.25)
    with budget.quiet_not_counted():
        time.sleep(0.5)
    now = time.monotonic()
    assert (
        budget._spent(now + 0.8) is None
    )  # 1.05 s counted of 1.55 s; three times the quiet time is 1.2 s
    assert "nothing launched in the last 1.2 s" in budget._spent(now + 1.0)


def test_on_a_gpu_the_limit_leaves_out_the_compiles_of_new_launches():
    """A library whose kernels compile for 3 to 40 s each was stopped at the 60 s limit inside its first call on
    the H100: on a GPU a new launch's compile is not the file's time. In the interpreter it still counts (each
    launch there is bounded on its own; the limit bounds the run)."""
    for counts in (True, False):
        budget = CaptureBudget("file.py", quiet_s=60, limit_s=0.3)
        budget.limit_counts_new_launches = counts
        budget.launched(object(), (1,), {}, None)
        with budget.executing():  # a cold compile that outlasts the limit
            time.sleep(0.4)
        spent = budget._spent(time.monotonic())
        if counts:
            assert spent is not None and "the 0.3 s limit" in spent
        else:
            assert spent is None
            assert "the 0.3 s limit" in budget._spent(time.monotonic() + 0.35)
