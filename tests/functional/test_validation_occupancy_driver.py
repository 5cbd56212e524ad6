"""irscope's own path — compile on this CPU machine, extract registers and shared memory from the cubin
(the 1 KB the driver reserves subtracted on sm_90), compute occupancy — against the CUDA driver's answers
recorded on an H100 (validation/data/h100_occupancy.json: `cuOccupancyMaxActiveBlocksPerMultiprocessor` with
the kernel's dynamic shared memory, and with 8000 / 20000 bytes more). Nothing of the driver's is fed into
irscope here: a wrong register count, a wrong shared-memory subtraction or a wrong formula fails."""

import json
import os

import pytest
from conftest import ROOT, kernel_path

from irscope.analysis.occupancy import nvidia_occupancy, occupancy
from irscope.engine.session import open_file

DATA = os.path.join(ROOT, "validation", "data", "h100_occupancy.json")


@pytest.fixture(scope="module")
def driver_rows():
    with open(DATA) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def compared(driver_rows):
    """(driver row, irscope's compilation) for every kernel compiled here to the registers and dynamic
    shared memory the H100's run had (the H100 ran Triton 3.6; a release may allocate differently)."""
    pairs = []
    for rel in sorted({row["f"] for row in driver_rows}):
        for comp in open_file(
            kernel_path(os.path.basename(rel)), target="sm_90", compile_ahead=False
        ).compile_all():
            if not comp.ok:
                continue
            dynamic = comp.metadata.get("shared", 0)
            for row in driver_rows:
                if (row["f"], row["k"], row["regs"], row["shared"]) == (
                    rel,
                    comp.kernel.name,
                    comp.resources.registers,
                    dynamic,
                ):
                    pairs.append((row, comp))
    return pairs


def test_occupancy_from_irscopes_own_extraction_equals_the_drivers(compared):
    wrong = []
    for row, comp in compared:
        extra = row["extra"]
        mine = (
            occupancy(comp)
            if extra == 0
            else nvidia_occupancy(
                "sm_90",
                comp.resources.registers,
                comp.num_warps,
                comp.resources.shared_bytes + extra,
            )
        )
        if mine.blocks_per_sm != row["blocks"]:
            wrong.append((row["f"], row["k"], extra, row["blocks"], mine.blocks_per_sm))
    assert not wrong, wrong


def test_the_comparison_covers_the_kernels_that_use_shared_memory(compared, driver_rows):
    # It cannot pass by comparing nothing: the kernels whose cubin holds the driver's reserved 1 KB
    # (shared memory in use) and the register-bound ones must be among the compared.
    kernels = {(row["f"], row["k"]) for row, _ in compared}
    assert {
        ("kernels/matmul.py", "matmul_kernel"),
        ("kernels/transpose.py", "transpose_kernel"),
        ("kernels/add.py", "add_kernel"),
        ("kernels/strided.py", "strided_gather_kernel"),
    } <= kernels, kernels
    assert len(compared) >= 15


def test_the_static_shared_memory_irscope_extracts_is_the_drivers():
    # The driver's static shared size per kernel (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), recorded by
    # validation/gpu_occupancy.py --collect; data without it must not pass by comparing nothing.
    with open(DATA) as f:
        rows = json.load(f)
    assert rows and all("static_shared" in row for row in rows)
    compared = 0
    for rel in sorted({row["f"] for row in rows}):
        for comp in open_file(
            kernel_path(os.path.basename(rel)), target="sm_90", compile_ahead=False
        ).compile_all():
            if not comp.ok:
                continue
            static = comp.resources.shared_bytes - comp.metadata.get("shared", 0)
            for row in rows:
                if (row["f"], row["k"], row["regs"]) == (
                    rel,
                    comp.kernel.name,
                    comp.resources.registers,
                ):
                    assert static == row["static_shared"], (
                        rel,
                        row["k"],
                        static,
                        row["static_shared"],
                    )
                    compared += 1
    assert compared >= 15  # add, misaligned, strided, matmul and transpose at least, 3 rows each
