"""ptxas writes the modification time of each source file the PTX names into the cubin's DWARF line table. A
cubin compiled on another machine (a GPU's, validation/gpu_fidelity.py's record) differs there even where the
PTX is the same: validation/sass_listing.py's `without_file_times` sets those times to 0 for the comparison,
and nothing else. (Triton 3.6's ptxas writes the times; 3.9's writes 0.)"""

import os
import shutil
import sys

from conftest import ROOT, kernel_path

from irscope.engine.session import open_file

sys.path.insert(0, os.path.join(ROOT, "validation"))
from sass_listing import without_file_times  # noqa: E402


def test_a_kernel_file_written_at_another_time_differs_in_the_cubins_file_times_alone(
    tmp_path, monkeypatch
):
    source = tmp_path / "add.py"
    shutil.copy(kernel_path("add.py"), source)

    def cubin_written_at(seconds: int) -> bytes:
        os.utime(source, (seconds, seconds))
        monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / f"cache-{seconds}"))
        comp = open_file(str(source), target="sm_90", compile_ahead=False).compile_all()[0]
        return comp.asm["cubin"]

    first, second = cubin_written_at(1_700_000_000), cubin_written_at(1_800_000_000)
    if first == second:  # a ptxas that writes no times (Triton 3.9's writes 0): nothing to take out
        assert without_file_times(first) == first
        return
    assert len(first) == len(second)
    assert without_file_times(first) == without_file_times(second)
    assert without_file_times(first) != first
    changed = [at for at, (a, b) in enumerate(zip(first, without_file_times(first))) if a != b]
    assert (
        0 < len(changed) <= 2 * 5
    )  # a time's few bytes in each file entry (the kernel's file, Triton's)


def test_flaggems_reproducer_cubin_on_the_h200_is_the_originals_but_for_a_file_time():
    """The H200's cubins of FlagGems' `add_func_kernel_rank_1` (validation/data/h200_repro/repro8/): the
    original run's (A) and its reproducer's (B) differ in the time of the kernel file FlagGems writes again on
    every run, and in nothing else."""
    folder = os.path.join(ROOT, "validation", "data", "h200_repro", "repro8", "kernel_files")

    def cubin(side: str) -> bytes:
        with open(os.path.join(folder, side, "add_func_kernel_rank_1.cubin"), "rb") as f:
            return f.read()

    original, reproducer = cubin("A"), cubin("B")
    assert original != reproducer
    assert without_file_times(original) == without_file_times(reproducer)
