"""Registers and theoretical occupancy, checked against cases worked out by hand."""

import re
import subprocess

import pytest
from conftest import kernel_path

from irscope.analysis.occupancy import amd_occupancy, nvidia_occupancy, occupancy
from irscope.engine.session import open_file
from irscope.engine.triton_compat import find_tool


def test_sm90_small_kernel_reaches_full_occupancy():
    # 26 regs x 32 lanes = 832 -> rounded up to the 256-register unit = 1024 per warp.
    # One sub-partition holds 65536 / 4 = 16384 registers -> 16 warps; 4 partitions -> 64 warps -> 16 blocks of 4.
    # Warp slots: 64 / 4 = 16 blocks. Block slots: 32. Shared: (0 + 1024 reserved) -> 233472 / 1024 = 228.
    # min = 16 blocks = 64 warps = the SM's maximum.
    occ = nvidia_occupancy("sm_90", registers=26, num_warps=4, shared_bytes=0)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.max_warps_per_sm) == (16, 64, 64)
    assert occ.block_limits == {"registers": 16, "shared_memory": 228, "blocks": 32, "warps": 16}
    assert occ.limited_by == "warps" and occ.fraction == 1.0


def test_sm80_register_limited():
    # 96 regs x 32 = 3072 (already a multiple of 256). 16384 / 3072 = 5 warps per partition -> 20 per SM
    # -> 20 // 4 = 5 blocks. Shared: 16384 + 1024 = 17408 (multiple of 128) -> 167936 // 17408 = 9 blocks.
    # Warps: 64 // 4 = 16. Blocks: 32. min = 5 blocks -> 20 of 64 warps, limited by registers.
    occ = nvidia_occupancy("sm_80", registers=96, num_warps=4, shared_bytes=16384)
    assert occ.block_limits == {"registers": 5, "shared_memory": 9, "blocks": 32, "warps": 16}
    assert (occ.warps_per_sm, occ.limited_by, occ.registers_per_warp, occ.shared_per_block) == (
        20,
        "registers",
        3072,
        17408,
    )


def test_sm80_shared_memory_limited():
    # 32 regs -> 1024 per warp -> 16 per partition -> 64 warps -> 8 blocks of 8 warps.
    # Shared 48 KB: 49152 + 1024 = 50176 -> 167936 // 50176 = 3 blocks -> 24 of 64 warps.
    occ = nvidia_occupancy("sm_80", registers=32, num_warps=8, shared_bytes=48 * 1024)
    assert occ.block_limits["shared_memory"] == 3 and occ.block_limits["registers"] == 8
    assert (occ.warps_per_sm, occ.limited_by) == (24, "shared_memory")


def test_sm90_tie_between_registers_and_shared_names_registers():
    # 62 regs x 32 = 1984 -> 2048 per warp -> 8 per partition -> 32 warps -> 8 blocks of 4.
    # Shared 25600 + 1024 = 26624 -> 233472 // 26624 = 8 blocks. Both allow 8: 32 of 64 warps.
    occ = nvidia_occupancy("sm_90", registers=62, num_warps=4, shared_bytes=25600)
    assert occ.block_limits["registers"] == occ.block_limits["shared_memory"] == 8
    assert (occ.warps_per_sm, occ.limited_by) == (32, "registers")


def test_sm90_register_ceiling_and_overflow():
    # 255 regs x 32 = 8160 -> 8192 per warp -> 2 per partition -> 8 warps -> 1 block of 8 warps.
    occ = nvidia_occupancy("sm_90", registers=255, num_warps=8, shared_bytes=0)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limited_by) == (1, 8, "registers")
    # 168 regs -> 5376 per warp -> 3 per partition -> 12 warps; a block of 16 warps does not fit
    # (and the hardware check: 5376 x 16 = 86016 > 65536 registers per block).
    assert nvidia_occupancy("sm_90", registers=168, num_warps=16, shared_bytes=0).warps_per_sm == 0


def test_sm89_has_fewer_warp_and_block_slots():
    # 16 regs -> 512 per warp -> 32 per partition -> 128 warps: not a limit. 1 warp per block:
    # block slots (24) bind before warp slots (48).
    occ = nvidia_occupancy("sm_89", registers=16, num_warps=1, shared_bytes=0)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limited_by) == (24, 24, "blocks")


def test_gfx942_vgpr_limited():
    # 70 VGPRs -> 72 (granule 8); 512 // 72 = 7 waves per SIMD. 4-wave workgroups put one wave on each
    # SIMD, so 7 workgroups -> 28 of 32 waves per CU. LDS 16384 -> 65536 // 16384 = 4 workgroups, which
    # binds first: 16 waves per CU, 4 per SIMD, limited by LDS.
    occ = amd_occupancy("gfx942", vgprs=70, num_warps=4, lds_bytes=16384, sgprs=47)
    assert occ.block_limits["registers"] == 7 and occ.block_limits["shared_memory"] == 4
    assert (occ.warps_per_sm, occ.waves_per_simd, occ.limited_by) == (16, 4, "shared_memory")
    occ = amd_occupancy("gfx942", vgprs=70, num_warps=4, lds_bytes=0, sgprs=47)
    assert (occ.warps_per_sm, occ.waves_per_simd, occ.limited_by) == (28, 7, "registers")
    assert (
        amd_occupancy("gfx950", vgprs=70, num_warps=4, lds_bytes=16384).block_limits[
            "shared_memory"
        ]
        == 10
    )


@pytest.fixture(scope="module")
def matmul_sm90():
    return open_file(kernel_path("matmul.py"), target="sm_90").compile_all()[0]


def test_registers_match_the_cubin(matmul_sm90, tmp_path):
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(matmul_sm90.asm["cubin"])
    tool = find_tool("cuobjdump")
    out = subprocess.run([tool, "-res-usage", str(cubin)], capture_output=True, text=True).stdout
    assert int(re.search(r"REG:(\d+)", out).group(1)) == matmul_sm90.resources.registers
    assert (
        matmul_sm90.metadata.get("n_regs", matmul_sm90.resources.registers)
        == matmul_sm90.resources.registers
    )


def test_occupancy_of_a_compilation(matmul_sm90):
    # the numbers themselves are checked against the driver's in test_validation_occupancy_driver.py
    occ = occupancy(matmul_sm90)
    assert occ.to_json()["limited_by"] in ("registers", "shared_memory", "blocks", "warps")
    assert "warps per SM" in occ.describe()


def test_agrees_with_the_h100_driver():
    # validation/data/h100_occupancy.json: cuOccupancyMaxActiveBlocksPerMultiprocessor on an H100 for every
    # example kernel (Triton 3.6), with its own dynamic shared memory and 8000 / 20000 bytes more.
    import json
    import os

    from conftest import ROOT

    with open(os.path.join(ROOT, "validation", "data", "h100_occupancy.json")) as f:
        rows = json.load(f)
    assert len(rows) == 36
    for r in rows:
        occ = nvidia_occupancy("sm_90", r["regs"], r["warps"], r["shared"] + r["extra"])
        assert occ.blocks_per_sm == r["blocks"], r


def test_reserved_shared_memory_is_counted_once_on_sm90(matmul_sm90):
    # ptxas for sm_90 lists the driver's reserved 1 KB in the cubin's SHARED; irscope's shared_bytes is
    # what the block asks for (Triton's dynamic shared memory here), as the driver counts it.
    assert matmul_sm90.resources.shared_bytes == matmul_sm90.metadata["shared"]
