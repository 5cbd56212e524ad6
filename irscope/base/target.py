"""A compilation target as the user names it. Kept apart from `triton_compat` so that front ends, which
never import Triton, can hold and compare targets; Triton's own `GPUTarget` for one is
`engine.triton_compat.driver.gpu_target_of`."""

from __future__ import annotations

from dataclasses import dataclass, field

from irscope.base.chip import Chip

# The unit the memory system moves between L1, L2 and DRAM on every target irscope knows (and the one Nsight
# Compute counts): a 32-byte sector, four to a 128-byte cache line.
SECTOR_BYTES = 32
# What an NVIDIA GPU's DRAM moves for a read that misses L2: the 64-byte, 64-aligned pair of sectors holding the
# requested one (L2's fetch granularity). Measured on the H200: gathers of one float per 64 and per 128 bytes
# read twice their sectors from DRAM, 268 MB for 134 MB of sectors (validation/data/h200_roofline_holdout/
# latency). AMD's is not measured: irscope counts sectors there.
DRAM_FETCH_BYTES = 64


@dataclass(frozen=True)
class Target:
    """A compilation target as the user names it (``sm_90``, ``gfx942``). `chip`: the GPU this machine has, as
    its driver describes it, when the target is that GPU's (launch statistics and the roofline then describe
    it, not the target's representative chip); None offline. Two targets of one name are equal."""

    name: str
    chip: Chip | None = field(default=None, compare=False)

    @property
    def backend(self) -> str:
        return "hip" if self.name.startswith("gfx") else "cuda"

    @property
    def is_nvidia(self) -> bool:
        return self.backend == "cuda"

    @property
    def dram_read_bytes(self) -> int:
        """The piece of memory DRAM moves for a read that misses L2."""
        return DRAM_FETCH_BYTES if self.is_nvidia else SECTOR_BYTES

    def __str__(self) -> str:
        return self.name
