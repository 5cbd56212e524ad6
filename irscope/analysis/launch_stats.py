"""How a launch's grid fills the GPU: blocks per SM, waves, the partial last wave.

A wave is as many blocks as the whole GPU holds at once: the blocks one SM (AMD: CU) holds, from the
occupancy model (`analysis/occupancy.py`, the driver's own calculation on the H100), times the chip's SM
count. A grid of fewer blocks than a wave leaves SMs or block slots idle for the whole launch (a small
grid); a grid of one wave or more whose last wave is partial runs that wave with slots idle (the tail
effect). These are Nsight Compute's Launch Statistics, worked out from the compiled kernel and the
launch's grid with no GPU: `launch__waves_per_multiprocessor` is `waves`, and its tail-effect rule's
"N full waves and a partial wave of M thread blocks" is `full_waves` and `partial_blocks`.

Two facts of Nsight Compute's rules carry over (its rule files, LaunchStatistics): the share of the run a
partial wave may take, with every block taking the same time, is 1 / (full waves + 1); its tail-effect
message is shown from 20% on (four full waves or fewer). Its own count of the partial wave's blocks is
worked out in floating point, as grid x (fraction / waves) rounded up, and comes out one block high where
that product lands a hair above a whole number (a grid of 2,400 on the H100: 289, where 2,400 - 2,112 is
288); irscope's count is the exact one (docs/validation.md has both, launch by launch).

The chip is the target's representative one (occupancy.Chip: the virtual GPU's; 132 SMs for sm_90, an
H100 SXM); a real GPU of the same target with fewer SMs (an H100 PCIe has 114) has larger waves. Thread
block clusters (Hopper's `num_ctas` > 1) are not modelled: a cluster's blocks must fit on one GPC together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from irscope.analysis.occupancy import AMD_LIMITS, NVIDIA_LIMITS, Chip, Occupancy, occupancy
from irscope.base.compiled import CompiledKernel
from irscope.base.target import Target

# Nsight Compute shows its tail-effect message from this estimated share of the run on (percent).
TAIL_SHARE_SHOWN = 0.20


@dataclass(frozen=True)
class LaunchStats:
    """One grid of one compilation on its target's chip."""

    grid: tuple[int, int, int]
    blocks_per_sm: int  # as the occupancy model allows (AMD: workgroups per CU)
    chip: Chip
    unit: str  # "SM" or "CU"
    launches: int = 1  # the compilation's launches that ran with this grid

    @property
    def blocks(self) -> int:
        """Programs (thread blocks) in the grid."""
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def wave_blocks(self) -> int:
        """Blocks the whole GPU holds at once."""
        return self.blocks_per_sm * self.chip.units

    @property
    def waves(self) -> float:
        return self.blocks / self.wave_blocks if self.wave_blocks else 0.0

    @property
    def full_waves(self) -> int:
        return self.blocks // self.wave_blocks if self.wave_blocks else 0

    @property
    def partial_blocks(self) -> int:
        """Blocks of the last, partial wave (0 when the grid is whole waves)."""
        return self.blocks % self.wave_blocks if self.wave_blocks else 0

    @property
    def idle_share(self) -> float:
        """The share of the last wave's block slots left idle (a grid under one wave: that wave's)."""
        if not self.wave_blocks or not self.partial_blocks:
            return 0.0
        return 1 - self.partial_blocks / self.wave_blocks

    @property
    def tail_share(self) -> float:
        """The share of the run the partial wave may take, every block taking the same time: 1 / (full
        waves + 1), where there is a partial wave after at least one full one; else 0."""
        if self.full_waves < 1 or not self.partial_blocks:
            return 0.0
        return 1 / (self.full_waves + 1)

    @property
    def small(self) -> bool:
        """Under one full wave: block slots idle for the whole launch."""
        return 0 < self.blocks < self.wave_blocks

    @property
    def busy_units(self) -> int:
        """SMs (CUs) with at least one block, blocks spread one per SM first."""
        return min(self.blocks, self.chip.units)

    def describe(self) -> str:
        """One line: '0.03 waves: the grid's 66 blocks fill 66 of 2112 block slots (16 per SM x 132 SMs
        of an NVIDIA H100 80GB HBM3)'."""
        slots = f"{self.blocks_per_sm} per {self.unit} x {self.chip.units} {self.unit}s of an {self.chip.name}"
        if not self.wave_blocks:
            return f"grid of {self.blocks} blocks: no block fits on an {self.unit}"
        if self.small:
            idle = (
                f"; {self.chip.units - self.busy_units} of {self.chip.units} {self.unit}s get no block"
                if self.blocks < self.chip.units
                else ""
            )
            return (
                f"{waves_text(self.waves)} waves: the grid's {self.blocks} blocks fill {self.blocks} of "
                f"{self.wave_blocks} block slots ({slots}){idle}"
            )
        if self.partial_blocks:
            return (
                f"{waves_text(self.waves)} waves: {self.full_waves} full wave{'s' if self.full_waves > 1 else ''} of "
                f"{self.wave_blocks} blocks ({slots}) and a partial wave of {self.partial_blocks} "
                f"({self.idle_share:.0%} of its slots idle)"
            )
        return f"{waves_text(self.waves)} waves: {self.full_waves} full wave(s) of {self.wave_blocks} blocks ({slots})"

    def to_json(self) -> dict[str, Any]:
        return {
            "grid": list(self.grid),
            "launches": self.launches,
            "blocks": self.blocks,
            "blocks_per_sm": self.blocks_per_sm,
            "units": self.chip.units,
            "unit": self.unit,
            "chip": self.chip.name,
            "wave_blocks": self.wave_blocks,
            "waves": round(self.waves, 4),
            "full_waves": self.full_waves,
            "partial_blocks": self.partial_blocks,
            "idle_share": round(self.idle_share, 4),
            "tail_share": round(self.tail_share, 4),
            "text": self.describe(),
        }


def waves_text(waves: float) -> str:
    """Waves as Nsight Compute prints them (two decimals), with one significant digit under 0.01."""
    return f"{waves:.2f}" if waves >= 0.01 or waves == 0 else f"{waves:.1g}"


def chip_of(target: Target) -> Chip | None:
    """The GPU this machine has when the target is its own (`Target.chip`), else the target's representative
    chip (occupancy.py's tables)."""
    if target.chip is not None:
        return target.chip
    limits = NVIDIA_LIMITS.get(target.name) or AMD_LIMITS.get(target.name)
    return limits.chip if limits is not None else None


def grids_of(comp: CompiledKernel) -> dict[tuple[int, int, int], int]:
    """Each grid the compilation was launched with, as 3 numbers, in launch order, and how many of its
    launches ran with it; {} when none is known."""
    grids = dict(comp.grid_launches)
    if not grids and comp.launch.grid:
        grids = {tuple(comp.launch.grid): 1}
    out: dict[tuple[int, int, int], int] = {}
    for grid, launches in grids.items():
        whole = (tuple(int(n) for n in grid) + (1, 1, 1))[:3]
        out[whole] = out.get(whole, 0) + launches  # type: ignore[index]
    return out


def launch_stats(comp: CompiledKernel, occ: Occupancy | None = None) -> list[LaunchStats]:
    """One LaunchStats per grid the compilation was launched with ([] when it did not compile, has no
    grid, or its target's chip is unknown)."""
    occ = occ or occupancy(comp)
    chip = chip_of(comp.target)
    if occ is None or chip is None:
        return []
    return [
        LaunchStats(grid, occ.blocks_per_sm, chip, occ.unit, launches)
        for grid, launches in grids_of(comp).items()
    ]
