"""A compilation target as the user names it. Kept apart from `triton_compat` so that front ends, which
never import Triton, can hold and compare targets; Triton's own `GPUTarget` for one is
`engine.triton_compat.driver.gpu_target_of`."""

from __future__ import annotations

from dataclasses import dataclass

# The unit the memory system moves between L1, L2 and DRAM on every target irscope knows (and the one Nsight
# Compute counts): a 32-byte sector, four to a 128-byte cache line.
SECTOR_BYTES = 32


@dataclass(frozen=True)
class Target:
    """A compilation target as the user names it (``sm_90``, ``gfx942``)."""

    name: str

    @property
    def backend(self) -> str:
        return "hip" if self.name.startswith("gfx") else "cuda"

    @property
    def is_nvidia(self) -> bool:
        return self.backend == "cuda"

    def __str__(self) -> str:
        return self.name
