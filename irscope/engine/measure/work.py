"""What a launch has to do, for measured mode's roofline: the bytes it moves to and from DRAM and its FLOPs.

Both are the offline roofline's (`analysis/roofline.py`, checked against Nsight Compute's DRAM bytes and FP
counters on the H100: docs/validation.md): the distinct sectors of each argument the recorded programs read
and wrote, scaled to the grid, with the kernel's code; every floating-point add, multiply, FMA, dot and sum,
counted as ncu counts them. Measured mode divides them by the time do_bench measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from irscope.analysis.roofline import roofline_from
from irscope.base.compiled import LaunchedKernel

# The roofline's (dtype, on tensor cores) -> the MATH_PEAKS key its FLOPs run at (measure/peaks.py): dots on
# FP32 operands run as TF32, the 8-bit floats as FP8; elementwise math at the CUDA cores' FP32 rate.
_PEAK_KIND = {"fp16": "fp16", "bf16": "bf16", "fp32": "tf32"}


def _peak_kind(dtype: str, tensor: bool) -> str | None:
    if not tensor:
        return "fp32"
    return "fp8" if dtype.startswith("fp8") else _PEAK_KIND.get(dtype)


@dataclass
class Work:
    bytes_read: int = 0
    bytes_written: int = 0
    # parameter -> "read" / "written" / "read+written"
    tensors: dict[str, str] = field(default_factory=dict)
    flops: float = 0.0
    flop_kind: str | None = None  # the MATH_PEAKS key of the largest share of the FLOPs
    flop_programs: int = 0  # programs recorded to count them (the rest scaled from them)
    notes: list[str] = field(default_factory=list)

    @property
    def bytes_moved(self) -> int:
        return self.bytes_read + self.bytes_written

    def to_json(self) -> dict:
        return {
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "tensors": self.tensors,
            "flops": self.flops,
            "flop_precision": self.flop_kind,
            "flop_programs": self.flop_programs,
            "notes": self.notes,
        }


def launch_work(comp: LaunchedKernel, coalescing) -> Work:
    """`coalescing`: the compilation's KernelCoalescing (analysis/coalescing), whose recorded programs count
    the sectors and the FLOPs."""
    roof = roofline_from(comp, coalescing)
    work = Work()
    if roof.error is not None:
        work.notes.append(f"no bytes or FLOPs counted: {roof.error}")
        return work
    for argument in roof.arguments:
        how = [
            word
            for word, n in (("read", argument.read_bytes), ("written", argument.write_bytes))
            if n
        ]
        if how:
            work.tensors[argument.name] = "+".join(how)
    work.bytes_read, work.bytes_written = roof.read_bytes, roof.write_bytes
    work.flops = float(roof.total_flops)
    if roof.flops:
        work.flop_kind = _peak_kind(*roof.main_pipe)
    work.flop_programs = roof.sampled
    if roof.sampled < roof.programs:
        work.notes.append(
            f"bytes and FLOPs counted in {roof.sampled} of {roof.programs} programs and scaled to the grid"
        )
    if roof.reads_are_a_floor:
        work.notes.append(
            "the programs share data larger than L2: re-reads of it are not counted (the bytes are a floor)"
        )
    return work
