"""The four constants of irscope's roofline model that come from measurements rather than datasheets, derived
again from the committed data (`analysis/roofline.py` holds them; a test checks they are what this gives).
Each is fitted on one measurement that shows it alone, and checked on the others.

- L2_RESIDENT_SHARE: what L2 keeps of a streaming launch's footprint at its end. For a launch of footprint F
  (reads and writes) whose W written bytes are interleaved with its reads, L2 keeps its last C bytes and
  evicts the written share of the rest during the launch, so Nsight Compute's `dram__bytes_write.sum` during it
  is Wd = W (F - C) / F, and C = F - Wd F / W. Fitted on the grid probe's copies whose footprint is past L2's
  size (`validation/probes/grid_waves.py`, three calls), as a share of the H100's 50 MiB.
- L2_DIRTY_SHARE: the most dirty bytes L2 holds at once. Measured where it shows alone: a write-only launch
  during which L2 wrote some lines back held as many dirty bytes as it could at its end, its writes less Nsight
  Compute's `dram__bytes_write.sum` during it. Fitted on the H200's fills (134 MB and 42 MB, three calls of
  `validation/data/h200_roofline_holdout`), as a share of its 60 MiB. Until stop 51 it was fitted on the
  H100's do_bench times less the model's own clean-cache estimate, which made it absorb that estimate's errors
  (the strided gather's, 1.26x, once reads one line a lane cost more); those seven launches now check it,
  with the H200's timed ones.
- BLOCK_START_SECONDS: how often an SM starts a block, at most. Fitted on the H200 (its `latency` call: copies
  and row sums whose programs move 0.5 to 32 KB each, `validation/probes/roofline_latency.py`): the launches
  of at least MANY_BLOCKS blocks per SM (at one every 80 ns, 20 us of starting blocks), of at most 4 warps a
  block; per launch, (Nsight Compute's duration - LAUNCH_SECONDS) / blocks per SM. A launch of 8-warp blocks
  is printed and left out: it took longer still (each SM holds 8 such blocks, and a block's own latency then
  bounds it; the model has no term for that).
- SCATTERED_READ_COST: what DRAM reads cost when nearly every lane of a request has its own 128-byte line, over
  their bytes' time at full bandwidth. Fitted on the same H200 call's strided gathers of a wave or more whose
  reads are mostly such (irscope's `scattered_read_bytes`): per launch, the time Nsight Compute measured beyond
  the launch's fixed cost and its other bytes' time, over the scattered bytes' time.

Each constant is the median over its launches (printed one by one). The other launches of these calls, and the
H200's calls (`validation/data/h200_roofline_holdout`, probes written after each fit), check them.

    python validation/roofline_calibration.py
"""

from __future__ import annotations

import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from irscope.analysis.measured.ncu_parse import number  # noqa: E402
from irscope.analysis.occupancy import NVIDIA_LIMITS  # noqa: E402
from irscope.analysis.roofline import LAUNCH_SECONDS  # noqa: E402
from validation.ncu_roofline import _timings, matched_launches  # noqa: E402

DATA = os.path.join(ROOT, "validation", "data")
RESIDENT_CALLS = ("h100_launch_stats", "h100_roofline", "h100_tensor_flops")
RESIDENT_FILE = "validation__probes__grid_waves"
HOLDOUT = "h200_roofline_holdout"
DIRTY_CALLS = tuple(os.path.join(HOLDOUT, call) for call in ("call1", "call2", "call3"))
DIRTY_FILES = ("validation__probes__roofline_holdout", "validation__probes__roofline_holdout2")
H200_L2_BYTES = 60 * 2**20  # as its driver reports it (validation/data/h200_device_chip)
BLOCK_CALL = os.path.join(HOLDOUT, "latency")
BLOCK_FILE = "validation__probes__roofline_latency"
MANY_BLOCKS = 256  # blocks per SM from which starting them takes 20 us or more


def measured_launches(folders, files):
    """(folder, compilation, its roofline, ncu's row) for each launch of these probe files that Nsight Compute
    measured in these folders of validation/data (a folder that did not run a file is passed over)."""
    for folder in folders:
        data = os.path.join(DATA, folder)
        for name in files:
            if not os.path.exists(os.path.join(data, name + ".raw.csv.gz")):
                continue
            for entry, roof, row in matched_launches(data, name):
                if row is not None:
                    yield folder, entry, roof, row


def duration(row: dict) -> float:
    """Nsight Compute's duration of a launch, in seconds."""
    return (number(row["gpu__time_duration.sum"]) or 0.0) * 1e-6


def resident_share(lines: list[str]) -> float:
    l2 = NVIDIA_LIMITS["sm_90"].chip.l2_bytes
    kept = []
    for call, entry, roof, row in measured_launches(RESIDENT_CALLS, (RESIDENT_FILE,)):
        reads, writes = roof["dram_read_bytes"], roof["dram_write_bytes"]
        footprint = reads + writes
        if footprint <= l2 or not writes:
            continue
        during = number(row["dram__bytes_write.sum"]) or 0.0
        resident = footprint - during * footprint / writes
        kept.append(resident)
        lines.append(
            f"- {call} {entry['name']} grid {roof['grid'][0]}: footprint {footprint / 1e6:.1f} MB, written "
            f"{writes / 1e6:.1f} MB, ncu's writes during {during / 1e6:.2f} MB: L2 kept {resident / 1e6:.1f} MB"
        )
    share = round(statistics.median(kept) / l2, 2)
    lines.append(
        f"L2_RESIDENT_SHARE: median {statistics.median(kept) / 1e6:.1f} MB of {l2 / 2**20:.0f} MiB over "
        f"{len(kept)} launches = {statistics.median(kept) / l2:.3f}, {share:.2f} to two places"
    )
    return share


def dirty_share(lines: list[str]) -> float:
    l2 = H200_L2_BYTES
    held = []
    for call, entry, roof, row in measured_launches(DIRTY_CALLS, DIRTY_FILES):
        writes = roof["dram_write_bytes"]
        during = number(row["dram__bytes_write.sum"]) or 0.0
        reads = number(row["dram__bytes_read.sum"]) or 0.0
        # write-only, and L2 wrote some back during it: it held all the dirty lines it could
        if not writes or reads > writes / 100 or during < 2**20:
            continue
        held.append(writes - during)
        lines.append(
            f"- {call} {entry['name']} grid {roof['grid'][0]}: wrote {writes / 1e6:.2f} MB, "
            f"{during / 1e6:.2f} MB of it during the launch: L2 held {(writes - during) / 1e6:.2f} MB dirty"
        )
    share = round(statistics.median(held) / l2, 2)
    lines.append(
        f"L2_DIRTY_SHARE: median {statistics.median(held) / 1e6:.2f} MB of {l2 / 2**20:.0f} MiB over "
        f"{len(held)} launches = {statistics.median(held) / l2:.3f}, {share:.2f} to two places"
    )
    return share


# The timed launches that check L2_DIRTY_SHARE: (folder, probe files, the chip's L2 bytes)
TIMED_CHECKS = (
    (
        "h100_roofline",
        ("validation__probes__roofline_timing",),
        NVIDIA_LIMITS["sm_90"].chip.l2_bytes,
    ),
    (
        os.path.join(HOLDOUT, "call3"),
        (
            "validation__probes__roofline_holdout",
            "validation__probes__roofline_holdout2",
            "validation__probes__roofline_timing",
        ),
        H200_L2_BYTES,
    ),
)


def dirty_share_by_timing(lines: list[str]) -> None:
    """What each do_bench-timed memory-bound launch of a wave or more says L2 held dirty: do_bench's median
    (after its flush's dirty lines) less Nsight Compute's duration (clean caches), at the chip's bandwidth,
    over the share of what L2 keeps the launch displaced. Printed as a check of L2_DIRTY_SHARE, not fitted: a
    difference of two timings spreads widely launch by launch."""
    for folder, files, l2 in TIMED_CHECKS:
        timings = _timings(os.path.join(DATA, folder))
        shares = []
        for _, entry, roof, row in measured_launches((folder,), files):
            bench = timings.get((entry["name"], roof["programs"]))
            waves = number(row["launch__waves_per_multiprocessor"]) or 0.0
            if bench is None or roof["bound"] != "memory" or waves < 1:
                continue
            kept = roof["l2_resident_bytes"]
            displaced = min(roof["dram_read_bytes"] + roof["dram_write_bytes"], kept)
            dirty = (bench - duration(row)) * roof["bandwidth"] * kept / displaced
            shares.append(dirty / l2)
        lines.append(
            f"check, {folder}: do_bench less ncu's duration says L2 held {statistics.median(shares):.2f} of its "
            f"size dirty (median of {len(shares)} launches, {min(shares):.2f} to {max(shares):.2f})"
        )


def block_start(lines: list[str]) -> float:
    per_block = []
    for _, entry, roof, row in measured_launches((BLOCK_CALL,), (BLOCK_FILE,)):
        seconds = duration(row)
        explained = LAUNCH_SECONDS + max(roof["seconds"]["memory"], roof["seconds"]["compute"])
        threads = int(number(row["launch__block_size"]) or 0)
        blocks = roof["programs"]
        per_sm = -(-blocks // int(number(row["launch__sm_count"]) or 1))
        if per_sm < MANY_BLOCKS:
            continue
        each = (seconds - LAUNCH_SECONDS) / per_sm
        left_out = threads > 128
        if not left_out:
            per_block.append(each)
        lines.append(
            f"- {entry['name']} grid {blocks}, {threads} threads a block{' (left out)' if left_out else ''}: "
            f"ncu {seconds * 1e6:.2f} us, its bytes and FLOPs {explained * 1e6:.2f} us, {per_sm} blocks per SM: "
            f"{each * 1e9:.1f} ns each"
        )
    median = statistics.median(per_block)
    lines.append(
        f"BLOCK_START_SECONDS: median {median * 1e9:.2f} ns over {len(per_block)} launches, "
        f"{round(median * 1e9)} ns to the nanosecond"
    )
    return round(median * 1e9) / 1e9


def scattered_cost(lines: list[str]) -> float:
    costs = []
    for _, entry, roof, row in measured_launches((BLOCK_CALL,), (BLOCK_FILE,)):
        scattered = roof.get("scattered_read_bytes", 0)
        waves = number(row["launch__waves_per_multiprocessor"]) or 0.0
        if scattered <= roof["dram_read_bytes"] / 2 or waves < 1:
            continue
        seconds = duration(row)
        bandwidth = roof["bandwidth"] * roof["busy_share"]
        other = roof["dram_read_bytes"] + roof["dram_write_bytes"] - scattered
        cost = ((seconds - LAUNCH_SECONDS) * bandwidth - other) / scattered
        costs.append(cost)
        lines.append(
            f"- {entry['name']} {entry['constexprs']} grid {roof['grid'][0]}: ncu {seconds * 1e6:.2f} us, "
            f"{scattered / 1e6:.1f} MB of its {roof['dram_read_bytes'] / 1e6:.1f} MB read one line a lane, "
            f"{other / 1e6:.1f} MB other: {cost:.3f}x their bytes' time"
        )
    median = statistics.median(costs)
    lines.append(
        f"SCATTERED_READ_COST: median {median:.3f} over {len(costs)} launches, {median:.2f} to two places"
    )
    return round(median, 2)


def calibrate() -> tuple[float, float, float, float, list[str]]:
    lines: list[str] = []
    resident = resident_share(lines)
    dirty = dirty_share(lines)
    dirty_share_by_timing(lines)
    start = block_start(lines)
    scattered = scattered_cost(lines)
    return resident, dirty, start, scattered, lines


if __name__ == "__main__":
    *_, printed = calibrate()
    print("\n".join(printed))
