"""The Python processes a run starts are said (engine/capture/children.py), Inductor's compile workers aside."""

import os
import subprocess
import sys

import torch._inductor.compile_worker as compile_worker

from irscope.engine.capture.children import (
    _is_inductor_compile_worker,
    children_counted,
    children_note,
)


def test_a_python_the_run_starts_is_counted_and_said():
    started: list[str] = []
    with children_counted(started):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        subprocess.run(["true"], check=True)  # not Python: launches no kernel
    assert started == ["python"]
    assert "started 1 Python process(es) of its own" in children_note(started, "f.py")


def test_inductors_compile_workers_are_not_the_files_own_processes():
    """torch.compile on a machine with cores to spare starts a pool of compile workers (SubprocPool), which
    an H200 run said as "1 Python process of its own ... not captured" though every launch was captured.
    The command line is the one SubprocPool builds: Python, its entry module, then its options."""
    entry = os.path.join(os.path.dirname(compile_worker.__file__), "__main__.py")
    pool = [
        sys.executable,
        entry,
        "--pickler=torch._inductor.compile_worker.subproc_pool.SubprocPickler",
    ]
    assert _is_inductor_compile_worker(pool)
    assert not _is_inductor_compile_worker([sys.executable, "-m", "pytest", "-n", "2"])
    assert not _is_inductor_compile_worker(
        [sys.executable, "train.py", entry]
    )  # the file's own argument
