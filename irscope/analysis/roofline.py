"""What a launch moves and computes, where that puts it on the roofline, and how long it should take.

Predicted with no GPU from the launch's own addresses: the coalescing analysis records a sample of programs
(`coalescing.sectors`), and each recording counts the distinct 32-byte sectors of every argument it read
and wrote and the floating-point work it ran (`recording.work`). Scaled up to the whole grid:

- DRAM traffic: every distinct sector is read from DRAM once, in the 64-byte pair of sectors an NVIDIA
  GPU's L2 fetches (`Target.dram_read_bytes`), and every written one written once (L2 keeps what programs
  share); a sample smaller than the grid is scaled by programs, never past the argument's storage. A launch
  on cold caches also reads its code and constant banks (`ir.elf`): on the H100, Nsight Compute's
  `dram__bytes_read.sum` (it flushes the caches before each launch it measures) was the data sectors plus
  these plus 1.4 to 2.1 KB (LAUNCH_READ_BYTES; docs/validation.md). Written sectors reach DRAM when L2
  evicts them. L2 keeps the last part of a streaming launch's footprint (L2_RESIDENT_SHARE of its size), and
  of it at most L2_DIRTY_SHARE of its size dirty (its write-back keeps the rest clean): the written share of
  what it keeps, up to that, reaches DRAM after the launch, the rest during it. Where programs share data
  larger than L2 (a matmul's operands), the re-reads are not counted and the reads are said to be a floor.
- FLOPs counted as Nsight Compute's roofline counts them (recording.work): adds, multiplies, two per FMA,
  two per multiply-accumulate of a dot; divisions, square roots, transcendental functions and the adds of
  reductions (`tl.sum`, which the interpreter runs in NumPy) are not counted.
- Arithmetic intensity (FLOPs per DRAM byte) against the ridge point of the chip (peak FLOP/s of the pipe
  the dots or the elementwise math run on, over peak DRAM bandwidth: `occupancy.Chip`).
- Time: the launch's fixed cost (LAUNCH_SECONDS) plus the largest of the memory time (bytes over the
  bandwidth of the SMs the grid keeps busy), the compute time (FLOPs over the peak of those SMs, each wave as
  long as a full one) and the time the SMs take to start its blocks (BLOCK_START_SECONDS each, one after
  another on an SM: what bounds a grid of many short programs, whatever its bytes). Two states of the
  caches: cold and clean (what Nsight Compute measures: it flushes and invalidates L2 before each launch),
  and after earlier work (in a program, and under `triton.testing.do_bench`, which zeroes a 256 MB buffer
  before each run): L2 then holds as much of that work's dirty lines as it keeps dirty, and the dirty share
  of what the launch displaces is written back during it. The second is the estimate. Both are predictions
  from this model, never measurements; what it leaves out (a program's chain of dependent loads, pipelining,
  clocks) is said with it.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from irscope.analysis.coalescing.sectors import analyze_coalescing
from irscope.analysis.launch_stats import LaunchStats, chip_of
from irscope.analysis.occupancy import Chip, occupancy
from irscope.analysis.recording.trace import launch_grid
from irscope.analysis.recording.work import SampledWork
from irscope.base.compiled import LaunchedKernel
from irscope.base.names import unrecordable
from irscope.base.target import SECTOR_BYTES
from irscope.ir.elf import kernel_image_bytes

# A launch's fixed cost: what Nsight Compute's gpu__time_duration gives a launch that does almost nothing
# (one block copying 4 KB: 2.72 us on the H100, validation/data/h100_launch_stats). Used for every chip.
LAUNCH_SECONDS = 2.7e-6
# What a launch reads from DRAM beside its data, code and constants (its descriptor and the driver's constant
# banks, as far as Nsight Compute shows): the median over the 26 launches of the first H100 call
# (validation/data/h100_launch_stats/roofline.md, 1.4 to 2.1 KB); checked on the 29 of the second.
LAUNCH_READ_BYTES = 1700
# L2's two shares, measured rather than taken from a datasheet, as shares of the chip's L2 size; fitted by
# `python validation/roofline_calibration.py` and checked on launches they were not fitted on, on the H100 and the
# H200 (60 MiB of L2; docs/validation.md).
# What L2 keeps of a streaming launch's footprint at its end: 40 to 47 MB of the H100's 50 MiB, median 41.7 MB,
# over the grid probe's 12 launches past L2 in three calls.
L2_RESIDENT_SHARE = 0.80
# The most dirty bytes L2 holds at once: what the H200 held dirty at the end of write-only fills of 42 and 134 MB
# that wrote lines back during the launch (27.0 to 27.1 MB in three calls: 0.43 of 60 MiB). do_bench's flush (a
# 256 MB zero fill) leaves this much, which the next launch writes back as it displaces it: the H100's seven
# timed launches and the H200's 23 check it.
L2_DIRTY_SHARE = 0.43
# How often an SM starts a block, at most: a launch of many short programs takes at least its blocks per SM
# times this, however few bytes they move. Fitted on the H200 by `python validation/roofline_calibration.py`:
# the median over the launches of 256 or more blocks per SM, of at most 4 warps a block (copies and row sums of
# 0.5 to 2 KB a program, 497 to 1,986 blocks per SM: 80 to 83 ns each). Each of the 661 launches of more than 32
# blocks per SM in the committed Nsight Compute data, on both chips, took at least 0.91 of LAUNCH_SECONDS plus
# its blocks' starts. Used for every chip.
BLOCK_START_SECONDS = 81e-9
# What a read in which nearly every lane of a request has its own 128-byte line costs DRAM, over its bytes'
# time at full bandwidth (a column of a row-major matrix, a gather through indices, a stride of 32 bytes or
# more with one element a lane: 64-byte pieces fetched one by one). Fitted on the H200 by
# `python validation/roofline_calibration.py`: the median over the strided gathers of its latency call (1.30 to
# 1.51); lanes two to a line (a stride of 16 bytes, or of 32 bytes with two elements a thread) ran at full
# bandwidth there. Used for every chip.
SCATTERED_READ_COST = 1.38
# "Nearly every lane": a request's lines at least this share of its active lanes (random indices meet now and
# then).
SCATTERED_LINES_PER_LANE = 0.9
# Grids of one compilation given a roofline each (each records programs in the interpreter).
MAX_GRIDS = 16

# Peak FLOP/s of each element type relative to the chip's datasheet figure for its pipe: dots run on the
# tensor cores (FP32 operands as TF32, half the FP16 rate; FP8 twice it), elementwise math on the CUDA
# cores (packed FP16/BF16 twice the FP32 rate; FP64 half of it, as on the data-centre chips).
TENSOR_RATE = {"fp16": 1.0, "bf16": 1.0, "fp32": 0.5, "fp64": 1 / 16}
ELEMENTWISE_RATE = {"fp32": 1.0, "fp16": 2.0, "bf16": 2.0, "fp64": 0.5}


@dataclass(frozen=True)
class ArgumentTraffic:
    """One pointer argument's bytes, over the whole grid."""

    name: str
    read_bytes: int
    write_bytes: int
    storage_bytes: int  # its whole storage: what no launch can move more of


@dataclass
class Roofline:
    kernel: str
    grid: tuple[int, int, int]
    chip: Chip | None
    programs: int  # in the grid
    sampled: int  # recorded (the rest scaled from them)
    arguments: list[ArgumentTraffic] = field(default_factory=list)
    image_bytes: int = 0  # code and constant banks, read once on cold caches
    flops: dict[tuple[str, bool], int] = field(
        default_factory=dict
    )  # (dtype, tensor cores) -> FLOPs
    requested_read_bytes: int = (
        0  # the sectors the programs' loads ask L2 for, over the grid (reuse counted)
    )
    # the distinct bytes of the arguments programs read the same sectors of (each program's own reads, summed
    # over the grid, at least 1.5 times the distinct ones)
    shared_read_bytes: int = 0
    # the DRAM reads of loads that put nearly every lane of a request in its own 128-byte line
    scattered_read_bytes: int = 0
    busy_share: float = 1.0  # the share of the chip's SMs the grid keeps busy
    blocks_per_unit: int = 0  # the most blocks one SM (CU) runs over the launch
    unit: str = "SM"
    waves_factor: float = 1.0  # the waves run, each as long as a full one, over the waves
    error: str | None = None

    @property
    def data_read_bytes(self) -> int:
        return sum(a.read_bytes for a in self.arguments)

    @property
    def read_bytes(self) -> int:
        """What the launch reads from DRAM on cold caches: its data, its code and the launch's own few KB."""
        return self.data_read_bytes + self.image_bytes + LAUNCH_READ_BYTES

    @property
    def write_bytes(self) -> int:
        return sum(a.write_bytes for a in self.arguments)

    @property
    def dram_bytes(self) -> int:
        return self.read_bytes + self.write_bytes

    @property
    def l2_resident_bytes(self) -> int:
        """What L2 keeps of a streaming launch's footprint (L2_RESIDENT_SHARE of its size)."""
        return round(self.chip.l2_bytes * L2_RESIDENT_SHARE) if self.chip is not None else 0

    @property
    def l2_dirty_bytes(self) -> int:
        """The most dirty bytes L2 holds at once (L2_DIRTY_SHARE of its size)."""
        return round(self.chip.l2_bytes * L2_DIRTY_SHARE) if self.chip is not None else 0

    @property
    def fits_l2(self) -> bool:
        """Its footprint fits in what L2 keeps, and its writes in what it keeps dirty: its writes reach DRAM
        after the launch, not during it."""
        return (
            self.chip is not None
            and self.dram_bytes <= self.l2_resident_bytes
            and self.write_bytes <= self.l2_dirty_bytes
        )

    @property
    def reads_are_a_floor(self) -> bool:
        """Programs read sectors other programs read too, of more data than L2 keeps: the reuse may miss L2 and
        come from DRAM again (a matmul whose operands are larger than L2), which the model does not count. A
        norm's weights, which every program reads, fit in L2 and are read from DRAM once."""
        return self.chip is not None and self.shared_read_bytes > self.l2_resident_bytes

    @property
    def write_bytes_during(self) -> int:
        """Written bytes that reach DRAM before the launch ends, an estimate: at its end L2 holds the written
        share of the footprint it keeps (reads and writes interleave), at most what it keeps dirty; the rest
        of the writes were written back during the launch."""
        if self.chip is None or self.fits_l2 or not self.dram_bytes:
            return 0
        kept = min(self.dram_bytes, self.l2_resident_bytes)
        dirty_at_end = min(self.write_bytes * kept / self.dram_bytes, self.l2_dirty_bytes)
        return round(self.write_bytes - dirty_at_end)

    @property
    def total_flops(self) -> int:
        return sum(self.flops.values())

    @property
    def intensity(self) -> float | None:
        """FLOPs per DRAM byte."""
        return self.total_flops / self.dram_bytes if self.dram_bytes else None

    def peak_flops(self, dtype: str, tensor: bool) -> float:
        if self.chip is None:
            return 0.0
        if tensor:
            rate = TENSOR_RATE.get(dtype, 2.0)  # the 8-bit floats: twice FP16
            return self.chip.tensor_tflops * 1e12 * rate
        return self.chip.fp32_tflops * 1e12 * ELEMENTWISE_RATE.get(dtype, 1.0)

    @property
    def main_pipe(self) -> tuple[str, bool]:
        """The (dtype, tensor cores) doing most of the FLOPs; FP32 on the CUDA cores when there are none."""
        if not self.flops:
            return ("fp32", False)
        return max(self.flops.items(), key=lambda kv: kv[1])[0]

    @property
    def ridge(self) -> float | None:
        """FLOPs per byte where the main pipe's peak meets the DRAM bandwidth."""
        if self.chip is None or not self.chip.bandwidth:
            return None
        return self.peak_flops(*self.main_pipe) / self.chip.bandwidth

    @property
    def memory_seconds(self) -> float:
        if self.chip is None or not self.chip.bandwidth:
            return 0.0
        cost = self.dram_bytes + (SCATTERED_READ_COST - 1) * self.scattered_read_bytes
        return cost / (self.chip.bandwidth * self.busy_share)

    @property
    def writeback_bytes(self) -> int:
        """Earlier work's dirty lines the launch displaces from L2 and writes back during it: of what L2 keeps,
        the part its footprint displaces, times the share of it that is dirty. L2 writes them, not the SMs:
        at the chip's whole bandwidth, however few SMs the grid keeps busy."""
        kept = self.l2_resident_bytes
        if not kept:
            return 0
        return round(self.l2_dirty_bytes * min(self.dram_bytes, kept) / kept)

    @property
    def writeback_seconds(self) -> float:
        if self.chip is None or not self.chip.bandwidth:
            return 0.0
        return self.writeback_bytes / self.chip.bandwidth

    @property
    def compute_seconds(self) -> float:
        seconds = 0.0
        for (dtype, tensor), flops in self.flops.items():
            peak = self.peak_flops(dtype, tensor)
            if peak:
                seconds += flops / (peak * self.busy_share)
        return seconds * self.waves_factor

    @property
    def block_start_seconds(self) -> float:
        """The least time the SMs take to start the launch's blocks, one after another on each SM."""
        return self.blocks_per_unit * BLOCK_START_SECONDS

    @property
    def floor_seconds(self) -> float:
        """The roofline's bound alone: the whole chip at its peaks, no fixed cost."""
        if self.chip is None or not self.chip.bandwidth:
            return 0.0
        compute = sum(
            flops / peak
            for (dtype, tensor), flops in self.flops.items()
            if (peak := self.peak_flops(dtype, tensor))
        )
        return max(self.dram_bytes / self.chip.bandwidth, compute)

    @property
    def clean_caches_seconds(self) -> float:
        """On cold, clean caches (as Nsight Compute measures a launch)."""
        return LAUNCH_SECONDS + max(
            self.memory_seconds, self.compute_seconds, self.block_start_seconds
        )

    @property
    def estimate_seconds(self) -> float:
        """After earlier work left L2 full of its dirty lines (in a program, and under do_bench)."""
        return LAUNCH_SECONDS + max(
            self.memory_seconds + self.writeback_seconds,
            self.compute_seconds,
            self.block_start_seconds,
        )

    @property
    def bound(self) -> str:
        """'memory', 'compute', 'blocks' where starting its blocks takes longer than its bytes and FLOPs, or
        'latency' where the launch's fixed cost outweighs all three (on clean caches: the launch's own bytes
        and FLOPs)."""
        memory, compute, blocks = (
            self.memory_seconds,
            self.compute_seconds,
            self.block_start_seconds,
        )
        if max(memory, compute, blocks) < LAUNCH_SECONDS:
            return "latency"
        if blocks > max(memory, compute):
            return "blocks"
        return "compute" if compute > memory else "memory"

    @property
    def bound_text(self) -> str:
        if self.bound == "blocks":
            return "bound by how fast the SMs start blocks"
        return f"{self.bound}-bound"

    def traffic_text(self) -> str:
        writes = (
            "written back after the launch (it fits in what L2 keeps)"
            if self.fits_l2
            else f"about {human_bytes(self.write_bytes_during)} of them during it, as L2 evicts them"
        )
        scaled = (
            f"; scaled from {self.sampled} of {self.programs} programs"
            if self.sampled < self.programs
            else ""
        )
        floor = (
            " at least (the data programs share is larger than L2: re-reads not counted)"
            if self.reads_are_a_floor
            else ""
        )
        return (
            f"reads {human_bytes(self.read_bytes)}{floor} from DRAM ({human_bytes(self.data_read_bytes)} of data, "
            f"{human_bytes(self.image_bytes)} of code and constants, {human_bytes(LAUNCH_READ_BYTES)} the launch's "
            f"own), writes {human_bytes(self.write_bytes)}, "
            f"{writes}{scaled}"
        )

    def roofline_text(self) -> str:
        dtype, tensor = self.main_pipe
        pipe = f"{dtype} {'tensor cores' if tensor else 'CUDA cores'}"
        intensity = self.intensity
        ridge = self.ridge
        if intensity is None or ridge is None:
            return "no DRAM traffic or no chip to place it against"
        if not self.flops:
            return f"no floating-point arithmetic: {self.bound_text}"
        side = "under" if intensity < ridge else "over"
        return (
            f"{human_count(self.total_flops)}FLOP, {intensity:.3g} FLOP/B: {side} the ridge of {ridge:.3g} "
            f"FLOP/B ({pipe}); {self.bound_text}"
        )

    def time_text(self) -> str:
        parts = [f"launch {_us(LAUNCH_SECONDS)}"]
        share = f" at {self.busy_share:.0%} of the SMs" if self.busy_share < 1 else ""
        scattered = (
            f" with {human_bytes(self.scattered_read_bytes)} read one line a lane at "
            f"1/{SCATTERED_READ_COST:g} of the bandwidth"
            if self.scattered_read_bytes
            else ""
        )
        parts.append(f"memory {_us(self.memory_seconds)}{share}{scattered}")
        parts.append(f"earlier work's dirty lines {_us(self.writeback_seconds)}")
        if self.flops:
            parts.append(f"compute {_us(self.compute_seconds)}")
        if self.block_start_seconds >= 0.25 * max(self.memory_seconds, self.compute_seconds):
            parts.append(
                f"starting its blocks {_us(self.block_start_seconds)} ({self.blocks_per_unit} per "
                f"{self.unit}, one each {BLOCK_START_SECONDS * 1e9:.0f} ns at most)"
            )
        after, clean = _us(self.estimate_seconds), _us(self.clean_caches_seconds)
        states = (
            f"{after} after earlier work, as in a program or do_bench, and on cold, clean caches alike"
            if after == clean
            else f"{after} after earlier work, as in a program or do_bench; {clean} on cold, clean "
            "caches, as Nsight Compute measures"
        )
        return (
            f"predicted {states} ({', '.join(parts)}; roofline floor {_us(self.floor_seconds)}): a model, "
            "not a measurement"
        )

    def to_json(self) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error}
        return {
            "grid": list(self.grid),
            "programs": self.programs,
            "programs_recorded": self.sampled,
            "chip": self.chip.name if self.chip else None,
            "bandwidth": self.chip.bandwidth if self.chip else None,  # peak, bytes per second
            "busy_share": self.busy_share,
            "arguments": [
                {
                    "name": a.name,
                    "read_bytes": a.read_bytes,
                    "write_bytes": a.write_bytes,
                    "storage_bytes": a.storage_bytes,
                }
                for a in self.arguments
            ],
            "dram_read_bytes": self.read_bytes,
            "code_bytes": self.image_bytes,
            "dram_write_bytes": self.write_bytes,
            "dram_write_bytes_during_launch": self.write_bytes_during,
            "l2_resident_bytes": self.l2_resident_bytes,
            "l2_dirty_bytes": self.l2_dirty_bytes,
            "dirty_writeback_bytes": self.writeback_bytes,
            "requested_read_bytes": self.requested_read_bytes,
            "shared_read_bytes": self.shared_read_bytes,
            "scattered_read_bytes": self.scattered_read_bytes,
            "reads_are_a_floor": self.reads_are_a_floor,
            "fits_l2": self.fits_l2,
            "flops": [
                {"dtype": dtype, "tensor_cores": tensor, "flops": flops}
                for (dtype, tensor), flops in sorted(self.flops.items())
            ],
            "intensity": self.intensity,
            "ridge": self.ridge,
            "bound": self.bound,
            "seconds": {
                "estimate": self.estimate_seconds,
                "clean_caches": self.clean_caches_seconds,
                "floor": self.floor_seconds,
                "launch": LAUNCH_SECONDS,
                "memory": self.memory_seconds,
                "dirty_writeback": self.writeback_seconds,
                "compute": self.compute_seconds,
                "block_starts": self.block_start_seconds,
            },
            "blocks_per_unit": self.blocks_per_unit,
            "text": [self.traffic_text(), self.roofline_text(), self.time_text()],
        }


def roofline(comp: LaunchedKernel, launch: Any = None) -> Roofline:
    """The roofline of one launch of the compilation (default: its own), cached on the compilation."""
    if launch is None or launch is comp.launch:
        return comp.analyses.get("roofline", lambda: _roofline(comp, None))
    grid = launch_grid(launch)
    return comp.analyses.get(f"roofline {grid}", lambda: _roofline(comp, launch))


def rooflines(comp: LaunchedKernel) -> list[Roofline]:
    """One roofline per grid the compilation ran with (the first launch with each; its own launch first), at
    most MAX_GRIDS: each records programs of its launch in the interpreter."""
    out = [roofline(comp)]
    seen = {out[0].grid}
    for launch in comp.first_launch_by_grid.values():
        grid = launch_grid(launch)
        if grid in seen or len(out) >= MAX_GRIDS:
            continue
        seen.add(grid)
        out.append(roofline(comp, launch))
    return out


def roofline_entries(comp: LaunchedKernel) -> list[dict[str, Any]]:
    """The report's `rooflines` field: each grid's roofline as JSON, or [{"error": ...}] where it has none."""
    try:
        return [one.to_json() for one in rooflines(comp)]
    except Exception as exc:  # an analysis failure must not take the report down with it
        return [{"error": f"{type(exc).__name__}: {exc}"}]


def _roofline(comp: LaunchedKernel, launch: Any) -> Roofline:
    return roofline_from(comp, analyze_coalescing(comp, launch=launch), launch)


def roofline_from(comp: LaunchedKernel, coalescing: Any, launch: Any = None) -> Roofline:
    """The roofline of a launch from a coalescing analysis already made of it (measured mode records more
    programs than the default sample); not cached."""
    grid = launch_grid(launch or comp.launch)
    chip = chip_of(comp.target)
    result = Roofline(comp.kernel.name, grid, chip, math.prod(grid), 0)
    work = coalescing.work
    if not work.programs or coalescing.error:  # a program that failed leaves its bytes uncounted
        not_recordable = unrecordable(comp.kernel.language)
        result.error = (
            f"{not_recordable}; the roofline counts the sectors of recorded programs"
            if not_recordable
            else coalescing.error or "no program of the launch was recorded"
        )
        return result
    result.sampled = work.programs
    result.arguments = _arguments(work, result.programs)
    binary = comp.asm.get("cubin") or comp.asm.get("hsaco")
    result.image_bytes = kernel_image_bytes(binary, comp.kernel.name) if binary else 0
    scale = result.programs / work.programs
    result.requested_read_bytes = round(coalescing.loads.sectors * SECTOR_BYTES * scale)
    result.scattered_read_bytes = _scattered_reads(coalescing.accesses, result.arguments)
    # programs' own reads of an argument, scaled to the grid, against its distinct sectors over the grid: a
    # sample of programs that each read other parts of shared operands shows the sharing this way too
    result.shared_read_bytes = sum(
        argument.read_bytes
        for argument in result.arguments
        if work.program_read_sectors.get(argument.name, 0) * SECTOR_BYTES * scale
        >= 1.5 * argument.read_bytes
        > 0
    )
    threads = comp.num_warps * (64 if comp.target.name.startswith("gfx") else 32)
    result.flops = {key: round(flops * scale) for key, flops in work.flops(threads).items()}
    occ = occupancy(comp)
    if chip is not None and occ is not None:
        stats = LaunchStats(grid, occ.blocks_per_sm, chip, occ.unit)
        result.busy_share = stats.busy_units / chip.units if chip.units else 1.0
        result.blocks_per_unit = -(-result.programs // chip.units) if chip.units else 0
        result.unit = occ.unit
        if stats.waves >= 1:
            result.waves_factor = math.ceil(stats.waves) / stats.waves
    return result


def _arguments(work: SampledWork, programs: int) -> list[ArgumentTraffic]:
    """Each argument's bytes over the grid: its written sectors, and its reads in the pieces DRAM moves for them
    (`work.read_piece`: a sector, or the pair of sectors an NVIDIA GPU's L2 fetches). A sample of S of the
    grid's P programs (the first, the last and evenly spaced ones) is scaled as: the distinct pieces of all but
    the last, times (P - 1) / (S - 1), plus what the last one added (the grid's last program is often partial);
    never past the argument's storage."""
    rows = []
    for name, storage in work.storage_sectors.items():
        storage_bytes = storage * SECTOR_BYTES
        counted = {
            "read": (work.read_piece, work.fetched, work.fetched_before_last, name),
            "write": (SECTOR_BYTES, work.distinct, work.before_last, (name, "write")),
        }
        moved = {}
        for direction, (piece, after, before, key) in counted.items():
            pieces, interior = after.get(key, 0), before.get(key, 0)
            most = -(-storage_bytes // piece)
            if 1 < work.programs < programs:
                scaled = interior * (programs - 1) / (work.programs - 1)
                pieces = min(round(scaled) + pieces - interior, most)
            elif work.programs < programs:
                pieces = min(pieces * programs, most)
            moved[direction] = pieces * piece
        rows.append(ArgumentTraffic(name, moved["read"], moved["write"], storage_bytes))
    return rows


def _scattered_reads(accesses: list, arguments: list[ArgumentTraffic]) -> int:
    """Of each argument's DRAM reads, the share its scattered loads ask for (nearly every lane of a request in
    its own line): their sectors over those of all its loads."""
    sectors: Counter = Counter()
    scattered: Counter = Counter()
    for access in accesses:
        counts = access.counts
        if access.kind != "load" or not access.param or not counts.requests:
            continue
        sectors[access.param] += counts.sectors
        if counts.lines >= SCATTERED_LINES_PER_LANE * counts.active_lanes > 0:
            scattered[access.param] += counts.sectors
    return round(
        sum(
            argument.read_bytes * scattered[argument.name] / sectors[argument.name]
            for argument in arguments
            if sectors[argument.name]
        )
    )


def human_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def human_count(n: float) -> str:
    """1.23 G, 456 M, 7.8 K, 12 (a prefix for a unit that follows)."""
    for unit, size in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} "


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} us"
