"""Rules about how a launch's grid fills the GPU: `small-grid`, `tail-effect` and `short-programs`.

Both read `analysis/launch_stats.py` (waves from the occupancy model and the target chip's SM count) and,
unlike every other rule, describe the launch's size, not the kernel: a file often launches a small test
size (on fresh real-world code, all 39 launches Nsight Compute measured were under one wave). So they are
`info`, without a weight (they rank after the findings that hold at any size), say so in their message,
and name the grid at which the kernel would fill the GPU. A compilation launched with several grids gets
one finding per rule, for its worst grid, naming how many of its grids the rule holds for.

`tail-effect` follows Nsight Compute's tail-effect rule: a last wave that is partial after at least one
full one, shown where it may take 20% of the run or more (four full waves or fewer).

`short-programs` is the roofline's (`analysis/roofline.py`) for the compilation's own launch: its SMs take
longer to start its blocks, one every BLOCK_START_SECONDS at most, than its bytes and FLOPs take (on an H200,
copies and row sums of 0.5 to 2 KB a program ran 1.4 to 5.4 times their bytes' time). It is the kernel's
program size against the problem's, so it ranks with the findings that hold at any size: a warning where
the block starts take twice the rest or more.
"""

from __future__ import annotations

import dataclasses

from irscope.analysis.launch_stats import TAIL_SHARE_SHOWN, LaunchStats, launch_stats
from irscope.analysis.roofline import BLOCK_START_SECONDS, LAUNCH_SECONDS, human_bytes, roofline
from irscope.base.compiled import CompiledKernel, LaunchedKernel
from irscope.findings.model import Cost, Finding

# the rules that describe the launch's size, not the kernel
LAUNCH_SIZE_RULES = ("small-grid", "tail-effect")
# the rules whose finding is at the kernel's `def` line, not at a statement in it
KERNEL_LINE_RULES = (*LAUNCH_SIZE_RULES, "short-programs")


def launch_findings(comp: CompiledKernel, new) -> list[Finding]:
    all_stats = launch_stats(comp)
    out = []
    small = [s for s in all_stats if s.small]
    if small:
        worst = min(small, key=lambda s: s.blocks)
        out.append(_for(small, _small_grid(comp, new, worst, len(small), len(all_stats))))
    tails = [s for s in all_stats if s.tail_share >= TAIL_SHARE_SHOWN]
    if tails:
        worst = max(tails, key=lambda s: s.tail_share)
        out.append(_for(tails, _tail(comp, new, worst, len(tails), len(all_stats))))
    short = _short_programs(comp, new) if all_stats else None
    if short is not None:
        out.append(short)
    return out


def _for(grids: list[LaunchStats], finding: Finding) -> Finding:
    """The finding, holding for the launches of these grids (check says "in 3 of 40 launches")."""
    return dataclasses.replace(finding, holds_for_launches=sum(s.launches for s in grids))


def _of_grids(count: int, total: int) -> str:
    return f" ({count} of this compilation's {total} grids)" if total > 1 else ""


def _small_grid(comp, new, stats: LaunchStats, count: int, total: int) -> Finding:
    grid = " x ".join(map(str, stats.grid))
    return new(
        "small-grid",
        "info",
        comp.kernel.line,
        f"grid {grid}{_of_grids(count, total)} is under one wave — {stats.describe()}. This is the size "
        f"the launch asked for, not the kernel: from {stats.wave_blocks} blocks on it fills the GPU",
        f"give the GPU at least {stats.wave_blocks} programs: a larger problem, a smaller BLOCK size (more "
        f"programs for the same work) or splitting the reduction (split-K); where the size must stay "
        f"small, several independent launches at once, or a persistent kernel of {stats.wave_blocks} "
        f"programs that loops over the tiles",
        Cost(
            round(stats.idle_share, 4),
            "idle_block_slots",
            f"{stats.wave_blocks - stats.blocks} of {stats.wave_blocks} block slots idle",
        ),
        None,
    )


def _tail(comp, new, stats: LaunchStats, count: int, total: int) -> Finding:
    grid = " x ".join(map(str, stats.grid))
    whole = stats.full_waves * stats.wave_blocks
    return new(
        "tail-effect",
        "info",
        comp.kernel.line,
        f"grid {grid}{_of_grids(count, total)} ends in a partial wave — {stats.describe()}; with every "
        f"block taking the same time, that wave may take up to {stats.tail_share:.0%} of the run. This is "
        f"the size the launch asked for, not the kernel",
        f"make the grid whole waves: {whole} or {whole + stats.wave_blocks} blocks (a BLOCK size that "
        f"divides the work into them), more waves so that the last weighs less, or a persistent kernel of "
        f"{stats.wave_blocks} programs that loops over the tiles",
        Cost(
            round(stats.tail_share, 4),
            "tail_share_of_run",
            f"a partial wave of {stats.partial_blocks} blocks, up to {stats.tail_share:.0%} of the run",
        ),
        None,
    )


def _short_programs(comp: LaunchedKernel, new) -> Finding | None:
    roof = roofline(comp)
    rest = max(roof.memory_seconds, roof.compute_seconds)
    starts = roof.block_start_seconds
    if roof.error or roof.chip is None or starts < LAUNCH_SECONDS or starts <= rest:
        return None
    grid = " x ".join(map(str, roof.grid))
    per_program = roof.dram_bytes / roof.programs
    # what one SM's share of DRAM bandwidth moves while it starts one block
    enough = BLOCK_START_SECONDS * roof.chip.bandwidth / roof.chip.units
    every = f"{BLOCK_START_SECONDS * 1e9:.0f} ns"
    return new(
        "short-programs",
        "warning" if starts >= 2 * rest else "info",
        comp.kernel.line,
        f"grid {grid}: {roof.programs} programs moving {human_bytes(per_program)} each — each {roof.unit} "
        f"starts a block every {every} at most (measured on an H200), so starting {roof.blocks_per_unit} per "
        f"{roof.unit} takes "
        f"{starts * 1e6:.3g} us, where the launch's bytes and arithmetic take {rest * 1e6:.3g} us (the "
        "roofline's model)",
        f"give each program more work, so that it moves {human_bytes(enough)} or more (what one "
        f"{roof.unit}'s share of DRAM bandwidth moves in {every}): a larger BLOCK, or a loop over several rows "
        "or tiles in each program, and fewer programs",
        Cost(
            round(1 - rest / starts, 4),
            "block_start_share_of_run",
            f"starting blocks takes {starts / rest:.3g}x the launch's bytes and arithmetic"
            if rest
            else "starting blocks is all the launch's predicted time",
        ),
        round(1 - rest / starts, 4),
    )
