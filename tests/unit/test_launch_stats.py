"""Launch statistics from the occupancy model and the chip's SM count (analysis/launch_stats.py), against
what Nsight Compute measured on the H100 for a 4-warp, 26-register vector kernel (the issue's numbers):
grids of 66, 2112, 2400 and 8448 blocks give 0.03, 1, 1.14 and 4 waves per SM."""

import math

from irscope.analysis.launch_stats import LaunchStats, waves_text
from irscope.analysis.occupancy import NVIDIA_LIMITS, nvidia_occupancy

H100 = NVIDIA_LIMITS["sm_90"].chip


def stats(blocks: int, registers: int = 26, warps: int = 4, shared: int = 0) -> LaunchStats:
    occ = nvidia_occupancy("sm_90", registers, warps, shared)
    return LaunchStats((blocks, 1, 1), occ.blocks_per_sm, H100, "SM")


def test_waves_per_sm_are_nsight_computes_for_the_measured_grids():
    assert stats(1).wave_blocks == 2112  # 16 blocks per SM x 132 SMs
    assert [waves_text(stats(g).waves) for g in (66, 2112, 2400, 8448)] == [
        "0.03",
        "1.00",
        "1.14",
        "4.00",
    ]


def test_a_partial_wave_is_counted_exactly():
    """2,400 blocks: one wave of 2,112 and 288 more (Nsight Compute's rule text says 289: its float rounding)."""
    s = stats(2400)
    assert (s.full_waves, s.partial_blocks) == (1, 288)
    assert math.isclose(s.tail_share, 0.5) and math.isclose(s.idle_share, 1 - 288 / 2112)
    assert not s.small
    assert s.describe().startswith(
        "1.14 waves: 1 full wave of 2112 blocks (16 per SM x 132 SMs of an NVIDIA H100"
    )


def test_whole_waves_have_no_tail_and_a_grid_under_one_wave_is_small():
    whole = stats(8448)
    assert (whole.full_waves, whole.partial_blocks, whole.tail_share) == (4, 0, 0.0)
    small = stats(66)
    assert small.small and small.full_waves == 0 and small.tail_share == 0.0
    assert small.busy_units == 66
    assert "66 of 132 SMs get no block" in small.describe()
    # more blocks than SMs but under one wave: small, every SM busy
    assert stats(1000).small and "get no block" not in stats(1000).describe()


def test_the_wave_follows_what_limits_the_blocks_per_sm():
    """96 KB of shared memory per block: 2 blocks per SM, a wave of 264; 1 warp: 32 blocks (the block limit)."""
    assert stats(265, registers=128, warps=8, shared=96 * 1024).wave_blocks == 264
    assert stats(4225, warps=1).wave_blocks == 4224
    five = stats(5 * 264 + 1, registers=128, warps=8, shared=96 * 1024)
    assert (five.full_waves, five.partial_blocks) == (5, 1)
    assert math.isclose(
        five.tail_share, 1 / 6
    )  # under Nsight Compute's 20%: no tail-effect finding
