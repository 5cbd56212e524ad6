"""The roofline (analysis/roofline.py) on real compilations whose bytes and FLOPs are known by hand, and its
reading of the cubin's section table (ir/elf.py). Against Nsight Compute:
tests/functional/test_validation_roofline.py."""

import math
import os

import pytest
from conftest import fixture_path

from irscope.analysis.occupancy import NVIDIA_LIMITS
from irscope.analysis.roofline import (
    BLOCK_START_SECONDS,
    L2_DIRTY_SHARE,
    L2_RESIDENT_SHARE,
    LAUNCH_READ_BYTES,
    LAUNCH_SECONDS,
    SCATTERED_READ_COST,
    ArgumentTraffic,
    Roofline,
    roofline,
)
from irscope.engine.session import open_file
from irscope.ir.elf import kernel_image_bytes, section_sizes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def rooflines():
    comps = open_file(fixture_path("roofline_kernels.py"), target="sm_90").compile_all()
    return {comp.kernel.name: (comp, roofline(comp)) for comp in comps}


def test_a_sampled_grid_scales_to_the_exact_bytes_of_every_program(rooflines):
    comp, roof = rooflines["scale_copy"]
    assert roof.error is None
    assert roof.programs == 100 and 1 < roof.sampled < 100  # scaled, not recorded whole
    floats = 100 * 256 - 128  # the last program is half masked off
    by_name = {a.name: a for a in roof.arguments}
    assert by_name["src"].read_bytes == floats * 4 and by_name["src"].write_bytes == 0
    assert by_name["dst"].write_bytes == floats * 4 and by_name["dst"].read_bytes == 0
    assert roof.read_bytes == floats * 4 + roof.image_bytes + LAUNCH_READ_BYTES


def test_code_and_constant_banks_come_from_the_cubin(rooflines):
    comp, roof = rooflines["scale_copy"]
    sizes = section_sizes(comp.asm["cubin"])
    assert sizes[".text.scale_copy"] > 0 and sizes[".nv.constant0.scale_copy"] > 0
    assert roof.image_bytes == kernel_image_bytes(comp.asm["cubin"], "scale_copy")
    assert roof.image_bytes >= sizes[".text.scale_copy"] + sizes[".nv.constant0.scale_copy"]


def test_elementwise_flops_count_every_element_of_each_block(rooflines):
    comp, roof = rooflines["scale_copy"]
    # a multiply and an add per element (or one FMA: two), masked-off lanes computing too
    assert roof.flops == {("fp32", False): 2 * 256 * 100}


def test_a_dot_counts_two_flops_per_multiply_accumulate_on_the_tensor_cores(rooflines):
    comp, roof = rooflines["tile_dot"]
    assert roof.flops == {("fp16", True): 2 * 64 * 64 * 64}
    assert roof.main_pipe == ("fp16", True)
    h100 = NVIDIA_LIMITS["sm_90"].chip
    assert roof.ridge == pytest.approx(989.4e12 / h100.bandwidth)


def test_a_sum_counts_the_threads_adds_and_their_shuffles_and_a_division_one_multiply(rooflines):
    comp, roof = rooflines["row_share"]
    assert comp.num_warps == 4
    per_row = (256 - 128) + 128 * 7 + 256
    assert roof.flops == {("fp32", False): 4 * per_row}


def test_a_small_grid_gets_the_share_of_bandwidth_its_busy_sms_have(rooflines):
    comp, roof = rooflines["tile_dot"]
    h100 = NVIDIA_LIMITS["sm_90"].chip
    assert roof.busy_share == pytest.approx(4 / h100.units)
    assert roof.memory_seconds == pytest.approx(roof.dram_bytes / (h100.bandwidth * 4 / h100.units))
    assert roof.bound == "latency"  # a few KB: the launch's fixed cost is the larger part
    assert roof.estimate_seconds > LAUNCH_SECONDS > roof.floor_seconds


def test_bound_follows_the_larger_of_memory_and_compute_time():
    h100 = NVIDIA_LIMITS["sm_90"].chip
    streaming = Roofline("k", (100_000, 1, 1), h100, 100_000, 8, image_bytes=10**9)
    assert streaming.bound == "memory"
    moved = 10**9 + LAUNCH_READ_BYTES
    assert streaming.clean_caches_seconds == pytest.approx(LAUNCH_SECONDS + moved / h100.bandwidth)
    # after earlier work, L2's dirty lines it displaces (all it keeps dirty: the footprint is past it) too
    dirty = round(h100.l2_bytes * L2_DIRTY_SHARE)
    assert streaming.writeback_bytes == dirty
    assert streaming.estimate_seconds == pytest.approx(
        LAUNCH_SECONDS + (moved + dirty) / h100.bandwidth
    )
    dense = Roofline(
        "k", (100_000, 1, 1), h100, 100_000, 8, image_bytes=10**6, flops={("fp16", True): 10**15}
    )
    assert dense.bound == "compute" and dense.intensity == pytest.approx(
        10**15 / (10**6 + LAUNCH_READ_BYTES)
    )
    assert dense.compute_seconds == pytest.approx(10**15 / 989.4e12)
    tail = Roofline("k", (1, 1, 1), h100, 1, 1, flops={("fp32", False): 10**12}, waves_factor=2.0)
    assert tail.compute_seconds == pytest.approx(2 * 10**12 / 67e12)
    assert math.isclose(tail.floor_seconds, 10**12 / 67e12)


def test_writes_reach_dram_during_the_launch_past_what_l2_keeps_and_keeps_dirty():
    """L2 keeps the last L2_RESIDENT_SHARE of a streaming launch's footprint, at most L2_DIRTY_SHARE of its size
    dirty: a copy past the first writes its share of the rest during the launch, a write-only fill past the
    second all but what L2 keeps dirty, and either within both nothing (numbers on the H100's 50 MiB)."""
    h100 = NVIDIA_LIMITS["sm_90"].chip
    kept, dirty = h100.l2_bytes * L2_RESIDENT_SHARE, h100.l2_bytes * L2_DIRTY_SHARE

    def launch(read: int, written: int) -> Roofline:
        traffic = ArgumentTraffic("x", read, written, read + written)
        return Roofline("k", (8448, 1, 1), h100, 8448, 8, arguments=[traffic])

    copy = launch(34_603_008, 34_603_008)  # the grid probe's copy of 8,448 blocks
    footprint = copy.dram_bytes
    assert copy.write_bytes_during == pytest.approx(34_603_008 * (1 - kept / footprint), abs=1)
    fill = launch(0, 134_217_728)
    assert fill.write_bytes_during == pytest.approx(134_217_728 - dirty, abs=1)
    small = launch(0, int(dirty) - 4096)
    assert small.fits_l2 and small.write_bytes_during == 0
    past_dirty = launch(0, int(dirty) + 10**6)  # fits what L2 keeps, not what it keeps dirty
    assert not past_dirty.fits_l2 and past_dirty.write_bytes_during == pytest.approx(10**6, abs=1)


def test_the_time_line_gives_both_states_of_the_caches_or_one_where_they_agree():
    h100 = NVIDIA_LIMITS["sm_90"].chip
    streaming = Roofline("k", (100_000, 1, 1), h100, 100_000, 8, image_bytes=10**9)
    text = streaming.time_text()
    assert f"predicted {streaming.estimate_seconds * 1e6:.3g} us after earlier work" in text
    assert f"; {streaming.clean_caches_seconds * 1e6:.3g} us on cold, clean caches" in text
    assert text.endswith("a model, not a measurement")
    small = Roofline(
        "k", (1, 1, 1), h100, 1, 1, image_bytes=1000
    )  # a few KB: the same to three figures
    assert "predicted 2.7 us after earlier work" in small.time_text()
    assert "and on cold, clean caches alike" in small.time_text()


def test_the_model_constants_are_what_the_calibration_gives():
    """L2_RESIDENT_SHARE and L2_DIRTY_SHARE come from the committed H100 data, BLOCK_START_SECONDS and
    SCATTERED_READ_COST from the H200's (validation/roofline_calibration.py), not from a hand: a change to the
    data or to the fit shows here."""
    import sys

    sys.path.insert(0, ROOT)
    from validation.roofline_calibration import calibrate

    resident, dirty, start, scattered, lines = calibrate()
    assert (resident, dirty, start, scattered) == (
        L2_RESIDENT_SHARE,
        L2_DIRTY_SHARE,
        BLOCK_START_SECONDS,
        SCATTERED_READ_COST,
    )
    # the dirty share, fitted on the H200's fills, against what the timed launches of both chips say L2 held
    # dirty (do_bench less ncu's duration): the median of each within a quarter of it
    checks = [line for line in lines if line.startswith("check, ")]
    assert len(checks) == 2
    for line in checks:
        said = float(line.split("L2 held ")[1].split(" ")[0])
        assert 0.75 * L2_DIRTY_SHARE <= said <= 1.25 * L2_DIRTY_SHARE, line


def test_anything_but_an_elf_file_has_no_sections():
    assert section_sizes(b"") == {} and section_sizes(b"\x7fELF" + b"\0" * 10) == {}
    assert kernel_image_bytes(b"not a cubin", "k") == 0


def test_an_amd_code_object_gives_its_text_and_kernel_descriptor():
    from conftest import kernel_path

    comp = open_file(kernel_path("add.py"), target="gfx942").compile_all()[0]
    sections = section_sizes(comp.asm["hsaco"])
    assert sections[".text"] > 0 and sections[".rodata"] > 0
    assert roofline(comp).image_bytes == sections[".text"] + sections[".rodata"]


# An H200's properties as Triton's driver and torch reported them on the device machine
# (validation/data/h200_device_chip/first_call/properties.json, validation/h200_device_chip.sh): the GPU that
# `Target.chip` carries when irscope runs on it
H200_PROPERTIES = {
    "name": "NVIDIA H200",
    "multiprocessor_count": 132,
    "sm_clock_rate": 1980000,
    "mem_clock_rate": 3201000,
    "mem_bus_width": 6016,
    "total_memory": 150_109_880_320,
    "l2_cache_size": 62_914_560,
}


def test_a_target_carrying_this_machines_gpu_is_described_and_timed_as_that_gpu():
    """On an H200 the launch statistics named an H100 (the target's representative chip) and timed its
    memory at an H100's 3.35 TB/s: the target now carries the GPU it runs on, as its driver describes it."""
    import dataclasses

    from irscope.analysis.launch_stats import launch_stats
    from irscope.base.chip import Chip
    from irscope.base.compiled import AnalysisCache
    from irscope.base.target import Target

    comp = open_file(fixture_path("grid_of_66.py"), target="sm_90").compile_all()[0]
    h200 = Chip.of_device(H200_PROPERTIES, NVIDIA_LIMITS["sm_90"].chip)
    assert h200.bandwidth == pytest.approx(
        4_814.304e9
    )  # what the report on the H200 used, not 3.35 TB/s
    # the same compilation on that machine (its own analyses: they are cached per compilation)
    on_h200 = dataclasses.replace(comp, target=Target("sm_90", chip=h200), analyses=AnalysisCache())
    assert on_h200.target == comp.target  # the same target: the same compilation
    mine, table = launch_stats(on_h200)[0], launch_stats(comp)[0]  # the grid of 66 (2,400 follows)
    assert "of an NVIDIA H200)" in mine.describe() and "of an NVIDIA H100" in table.describe()
    assert roofline(on_h200).chip.bandwidth == h200.bandwidth != roofline(comp).chip.bandwidth


def test_a_bf16_constant_is_stored_and_its_bytes_counted():
    """Triton 3.6's interpreter has no bf16 constant: every program of this fill failed, and the roofline said
    it wrote 0 B (on an H200, against Nsight Compute's 14.9 MB during the launch of a 40 MB fill)."""
    from irscope.analysis.coalescing.sectors import analyze_coalescing

    comp = open_file(fixture_path("bf16_fill.py"), target="sm_90").compile_all()[0]
    assert analyze_coalescing(comp).error is None
    roof = roofline(comp)
    assert roof.error is None
    assert (
        roof.write_bytes == 63 * 32
    )  # 1000 bf16 in 32-byte sectors (the last program masked past 1000)


def test_a_recording_that_failed_is_an_error_not_zero_bytes():
    """A program whose recording fails leaves its bytes uncounted: the roofline says so rather than a total
    (the coalescing result is the real one, given the error Triton 3.6's interpreter raised on this fill)."""
    import copy

    from irscope.analysis.coalescing.sectors import analyze_coalescing
    from irscope.analysis.roofline import roofline_from

    comp = open_file(fixture_path("bf16_fill.py"), target="sm_90").compile_all()[0]
    failed = copy.copy(analyze_coalescing(comp))
    failed.error = (
        "program (0, 0, 0): AttributeError: 'InterpreterBuilder' object has no attribute 'get_bf16'"
    )
    roof = roofline_from(comp, failed)
    assert roof.error == failed.error and roof.to_json() == {"error": failed.error}


def test_dram_reads_the_pair_of_sectors_a_read_misses_on_nvidia_and_the_sector_on_amd():
    """An H200 read twice the sectors of a gather of one float per 64 bytes from DRAM (its L2 fetches 64-byte
    pairs); one float per 32 bytes reads every sector, and so every pair, once. AMD's fetch is not measured:
    sectors there."""
    comps = open_file(fixture_path("short_programs.py"), target="sm_90").compile_all()
    per_64, per_32 = (c for c in comps if c.kernel.name == "gather")
    assert roofline(per_64).data_read_bytes == 4096 * 64
    assert roofline(per_32).data_read_bytes == 4096 * 32
    amd = open_file(fixture_path("short_programs.py"), target="gfx942").compile_all()[0]
    assert roofline(amd).data_read_bytes == 4096 * 32


def test_many_short_programs_are_bound_by_starting_their_blocks():
    """131,072 programs of 32 floats on an H100's 132 SMs: 993 blocks each, at one every BLOCK_START_SECONDS,
    take 80 us where their 33.6 MB take 10 us; the estimate is the block starts, and says so."""
    copy = next(
        c
        for c in open_file(fixture_path("short_programs.py"), target="sm_90").compile_all()
        if c.kernel.name == "copy"
    )
    roof = roofline(copy)
    assert roof.blocks_per_unit == 993 and roof.bound == "blocks"
    assert roof.block_start_seconds == 993 * BLOCK_START_SECONDS > 5 * roof.memory_seconds
    assert (
        roof.estimate_seconds
        == roof.clean_caches_seconds
        == LAUNCH_SECONDS + roof.block_start_seconds
    )
    assert "starting its blocks 80.4 us (993 per SM" in roof.time_text()
    assert roof.roofline_text().endswith("bound by how fast the SMs start blocks")
    assert roof.to_json()["seconds"]["block_starts"] == roof.block_start_seconds


def test_block_starts_are_left_out_of_the_time_line_where_they_weigh_little():
    """A gather of 4 programs: starting its blocks is 81 ns beside microseconds of bytes."""
    gather = open_file(fixture_path("short_programs.py"), target="sm_90").compile_all()[0]
    roof = roofline(gather)
    assert roof.blocks_per_unit == 1 and roof.bound != "blocks"
    assert "starting its blocks" not in roof.time_text()


def test_reads_with_a_line_a_lane_cost_more_than_their_bytes_at_full_bandwidth():
    """The gathers' lanes are 256 and 128 bytes apart: each lane of a request has its own line, and the time
    counts their reads at 1/SCATTERED_READ_COST of the bandwidth (the roofline floor does not); the copy's
    lanes share lines."""
    by_name: dict[str, list] = {}
    for comp in open_file(fixture_path("short_programs.py"), target="sm_90").compile_all():
        by_name.setdefault(comp.kernel.name, []).append(roofline(comp))
    for gather in by_name["gather"]:
        assert gather.scattered_read_bytes == gather.data_read_bytes > 0
        plain = gather.dram_bytes / (gather.chip.bandwidth * gather.busy_share)
        extra = (SCATTERED_READ_COST - 1) * gather.scattered_read_bytes
        assert gather.memory_seconds == (gather.dram_bytes + extra) / (
            gather.chip.bandwidth * gather.busy_share
        )
        assert gather.memory_seconds > plain
        assert "read one line a lane at 1/" in gather.time_text()
        assert gather.to_json()["scattered_read_bytes"] == gather.scattered_read_bytes
    (copy,) = by_name["copy"]
    assert copy.scattered_read_bytes == 0 and "one line a lane" not in copy.time_text()
