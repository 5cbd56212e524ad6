"""How fast the GPU could go: DRAM bandwidth from the device itself, math throughput from a table.

DRAM peak is read from the device: memory clock × bus width × 2 (double data rate), as the driver
reports them (`mem_clock_rate` in kHz, `mem_bus_width` in bits). An H100 SXM reports 2,619 MHz and 5,120
bits: 3,352 GB/s, NVIDIA's 3.35 TB/s. Math peaks are not exposed by any API, so they come from NVIDIA's
datasheets (dense figures, without sparsity), keyed by the name the driver gives the device.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# TFLOP/s (TOPS for int8), dense. "fp32" is the CUDA-core rate; the others are tensor-core rates.
_H100_SXM = {
    "fp32": 67.0,
    "tf32": 494.7,
    "fp16": 989.4,
    "bf16": 989.4,
    "fp8": 1978.9,
    "int8": 1978.9,
}
MATH_PEAKS: dict[str, tuple[dict[str, float], str]] = {
    "NVIDIA H100 80GB HBM3": (_H100_SXM, "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column"),
    "NVIDIA H100 PCIe": (
        {"fp32": 51.0, "tf32": 378.0, "fp16": 756.0, "bf16": 756.0, "fp8": 1513.0, "int8": 1513.0},
        "NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe column",
    ),
    "NVIDIA H100 NVL": (
        {"fp32": 60.0, "tf32": 417.5, "fp16": 835.5, "bf16": 835.5, "fp8": 1670.5, "int8": 1670.5},
        "NVIDIA H100 NVL datasheet (sparsity figures halved)",
    ),
    "NVIDIA H200": (
        _H100_SXM,
        "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column (sparsity figures halved)",
    ),
    "NVIDIA A100-SXM4-80GB": (
        {"fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0, "int8": 624.0},
        "NVIDIA A100 Tensor Core GPU datasheet",
    ),
    "NVIDIA A100-SXM4-40GB": (
        {"fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0, "int8": 624.0},
        "NVIDIA A100 Tensor Core GPU datasheet",
    ),
}


@dataclass
class Peaks:
    device: str
    dram_gbps: float | None  # GB/s (10^9 bytes per second)
    math_tflops: dict[str, float] = field(default_factory=dict)
    math_source: str = ""  # where the math peaks come from ("" when the device is not in the table)

    def to_json(self) -> dict:
        return {
            "device": self.device,
            "dram_gbps": round(self.dram_gbps, 1) if self.dram_gbps else None,
            "dram_source": "the device: memory clock x bus width x 2",
            "math_tflops": self.math_tflops,
            "math_source": self.math_source or None,
        }


def peaks_of(props: dict) -> Peaks:
    """`props` as triton_compat.measure.gpu_properties returns them."""
    clock_khz, bus_bits = props.get("mem_clock_rate"), props.get("mem_bus_width")
    dram = 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9 if clock_khz and bus_bits else None
    name = str(props.get("name", ""))
    math, source = MATH_PEAKS.get(name, ({}, ""))
    return Peaks(name, dram, dict(math), source)
