"""A GPU's size and speed, as launch statistics and the roofline need them. Plain data: front ends hold one in a
`Target`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Chip:
    """One GPU's size and speed: a target's representative chip (analysis/occupancy.py's tables, what the virtual
    GPU reports when there is no GPU here), or the GPU this machine has, as its driver describes it
    (`Target.chip`). The per-SM limits beside it are the target's; these are the chip's.

    `memory_clock_khz` follows CUDA's `memoryClockRate` convention (double data rate): the datasheet's
    bandwidth = clock x 2 x bus width / 8, which is what Triton's `get_dram_gbps` computes from it.
    `memory_bytes` is the nominal capacity (a real device reports a little less)."""

    name: str
    units: int  # SMs (NVIDIA) or CUs (AMD)
    memory_bytes: int
    l2_bytes: int
    clock_khz: int  # peak (boost) shader clock
    memory_clock_khz: int
    memory_bus_bits: int
    # peak arithmetic, from the same datasheets (an FMA counts two): FP32 on the CUDA cores (AMD: vector
    # FP32), and dense FP16/BF16 with FP32 accumulation on the tensor cores (AMD: matrix cores)
    fp32_tflops: float = 0.0
    tensor_tflops: float = 0.0

    @property
    def bandwidth(self) -> float:
        """Peak DRAM bandwidth in bytes per second (clock x 2 x bus width / 8)."""
        return self.memory_clock_khz * 1e3 * 2 * self.memory_bus_bits / 8

    @classmethod
    def of_device(cls, props: dict[str, Any], reference: Chip | None) -> Chip:
        """The GPU this machine has, from its driver's properties (engine/triton_compat/measure.py's
        `gpu_properties`: name, SMs, memory, L2, clocks, bus width); the peak arithmetic, which no driver
        reports, is the target's `reference` chip's (an H200's datasheet figures are its H100's)."""
        base = reference or cls("", 0, 0, 0, 0, 0, 0)
        return replace(
            base,
            name=str(props.get("name") or base.name),
            units=int(props.get("multiprocessor_count") or base.units),
            memory_bytes=int(props.get("total_memory") or base.memory_bytes),
            l2_bytes=int(props.get("l2_cache_size") or base.l2_bytes),
            clock_khz=int(props.get("sm_clock_rate") or base.clock_khz),
            memory_clock_khz=int(props.get("mem_clock_rate") or base.memory_clock_khz),
            memory_bus_bits=int(props.get("mem_bus_width") or base.memory_bus_bits),
        )
