"""Theoretical occupancy: how many warps (AMD: waves) of this kernel one SM (CU) can hold at once,
and which resource stops it from holding more.

NVIDIA follows the CUDA occupancy calculator's model (the same arithmetic as `cuda_occupancy.h`):
registers are allocated per warp, `regs × 32` rounded up to the register allocation unit (256), from
each of the SM's 4 sub-partitions separately; shared memory per block is the kernel's static + dynamic
shared memory plus the driver's reserved 1 KB, rounded up to the 128-byte allocation unit; the SM also
caps resident warps and resident blocks. The blocks that fit is the minimum over those four limits.

AMD (CDNA3 / CDNA4) follows the LLVM AMDGPU backend's model (`AMDGPUBaseInfo.cpp`, which encodes the
CDNA3 ISA guide's register file): each SIMD has 512 VGPRs per lane shared by its waves (architected +
accumulation registers, allocated in granules of 8), up to 8 waves per SIMD, 4 SIMDs per CU; SGPRs
limit waves past 100 per wave; LDS is shared by the workgroups on a CU; a CU holds at most 16
multi-wave workgroups (barrier slots).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from irscope.base.chip import Chip
from irscope.base.compiled import CompiledKernel


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


KB, MB, GB = 1024, 1024**2, 1024**3


@dataclass(frozen=True)
class NvidiaLimits:
    """Per-SM limits of one compute capability.

    Source: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability" table (and the
    CUDA Occupancy Calculator's "GPU data" for the allocation units); reserved shared memory per block is
    1 KB from compute capability 8.0 on (the guide's shared-memory sections for 8.x / 9.0 / 10.0 / 12.0).
    """

    arch: str
    max_warps_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int = 65536  # 64 K 32-bit registers
    max_registers_per_block: int = 65536
    max_registers_per_thread: int = 255
    register_alloc_unit: int = 256  # registers, allocated per warp ("granularity: warp")
    sub_partitions: int = 4  # register file split across 4 schedulers' partitions
    shared_per_sm: int = 0  # bytes, largest shared-memory carveout
    max_shared_per_block: int = 0  # bytes, with the opt-in attribute (Triton sets it)
    shared_alloc_unit: int = 128  # bytes
    reserved_shared_per_block: int = 1024  # bytes the driver keeps per block (cc >= 8.0)
    max_threads_per_block: int = 1024
    warp_size: int = 32
    chip: Chip | None = None


NVIDIA_LIMITS: dict[str, NvidiaLimits] = {
    # A100: 64 warps, 32 blocks, 164 KB shared per SM, 163 KB per block.
    # Chip: A100 SXM4 80GB datasheet (108 SMs, 80 GB HBM2e, 5120-bit, 2039 GB/s -> 1593 MHz, 1410 MHz boost);
    # A100 whitepaper (40 MB L2); datasheet: 19.5 TFLOPS FP32, 312 TFLOPS FP16 tensor (dense).
    "sm_80": NvidiaLimits(
        "sm_80",
        64,
        32,
        shared_per_sm=164 * KB,
        max_shared_per_block=163 * KB,
        chip=Chip(
            "NVIDIA A100-SXM4-80GB", 108, 80 * GB, 40 * MB, 1_410_000, 1_593_000, 5120, 19.5, 312
        ),
    ),
    # Ada (L4, RTX 40): 48 warps, 24 blocks, 100 KB shared per SM, 99 KB per block.
    # Chip: RTX 4090 (Ada whitepaper: 128 SMs, 2520 MHz boost, 72 MB L2, 24 GB GDDR6X, 384-bit, 21 Gbps =
    # 1008 GB/s -> 10501 MHz; 82.6 TFLOPS FP32, 165.2 TFLOPS FP16 tensor with FP32 accumulation, dense).
    "sm_89": NvidiaLimits(
        "sm_89",
        48,
        24,
        shared_per_sm=100 * KB,
        max_shared_per_block=99 * KB,
        chip=Chip(
            "NVIDIA GeForce RTX 4090",
            128,
            24 * GB,
            72 * MB,
            2_520_000,
            10_501_000,
            384,
            82.6,
            165.2,
        ),
    ),
    # Hopper (H100/H200): 64 warps, 32 blocks, 228 KB shared per SM, 227 KB per block.
    # Chip: H100 SXM5 80GB (datasheet: 132 SMs, 80 GB HBM3, 3.35 TB/s over 5120 bits -> 2619 MHz; Hopper
    # whitepaper: 50 MB L2; 1980 MHz max boost; 67 TFLOPS FP32, 989.4 TFLOPS FP16 tensor, dense).
    "sm_90": NvidiaLimits(
        "sm_90",
        64,
        32,
        shared_per_sm=228 * KB,
        max_shared_per_block=227 * KB,
        chip=Chip(
            "NVIDIA H100 80GB HBM3", 132, 80 * GB, 50 * MB, 1_980_000, 2_619_000, 5120, 67, 989.4
        ),
    ),
    # Blackwell datacenter (B200): 64 warps, 32 blocks, 228 KB shared per SM, 227 KB per block.
    # Chip: B200 (DGX B200 datasheet: 180 GB HBM3e per GPU, 8 TB/s over 8192 bits -> 3906 MHz; 148 SMs).
    # Approximate, not in NVIDIA's datasheet: the 126 MB L2 and the 1965 MHz boost (third-party reports).
    # HGX B200 datasheet: 2.25 PFLOPS FP16 tensor dense (4.5 sparse); FP32 75 TFLOPS (third-party reports).
    "sm_100": NvidiaLimits(
        "sm_100",
        64,
        32,
        shared_per_sm=228 * KB,
        max_shared_per_block=227 * KB,
        chip=Chip("NVIDIA B200", 148, 180 * GB, 126 * MB, 1_965_000, 3_906_000, 8192, 75, 2250),
    ),
    # Blackwell consumer (RTX 50): 48 warps, 32 blocks, 128 KB shared per SM, 99 KB per block.
    # Chip: RTX 5090 (RTX Blackwell whitepaper: 170 SMs, 2407 MHz boost, 96 MB L2, 32 GB GDDR7, 512-bit,
    # 28 Gbps = 1792 GB/s -> 14000 MHz; 104.8 TFLOPS FP32, 209.5 TFLOPS FP16 tensor with FP32 accumulation,
    # dense).
    "sm_120": NvidiaLimits(
        "sm_120",
        48,
        32,
        shared_per_sm=128 * KB,
        max_shared_per_block=99 * KB,
        chip=Chip(
            "NVIDIA GeForce RTX 5090",
            170,
            32 * GB,
            96 * MB,
            2_407_000,
            14_000_000,
            512,
            104.8,
            209.5,
        ),
    ),
}


@dataclass(frozen=True)
class AmdLimits:
    """Per-CU limits of one AMD Instinct generation.

    Source: AMD CDNA3 ISA reference guide (register file: 512 VGPRs per lane per SIMD, unified
    architected + accumulation VGPRs) as encoded in LLVM's AMDGPUBaseInfo.cpp (`getTotalNumVGPRs` 512,
    `getVGPRAllocGranule` 8, `getMaxWavesPerEU` 8 for gfx90a and later, `getOccupancyWithNumSGPRs`,
    `getMaxWorkGroupsPerCU` 16 barrier slots); LDS: 64 KB per CU on MI300 (gfx942), 160 KB on MI355
    (gfx950). LDS allocation granularity: 128 dwords (512 bytes) on GFX9 (AMDGPUUsage, LDS_SIZE); assumed
    unchanged on gfx950.
    """

    arch: str
    lds_per_cu: int
    vgprs_per_simd_lane: int = 512
    vgpr_alloc_granule: int = 8
    max_vgprs_per_wave: int = 512
    max_waves_per_simd: int = 8
    simds_per_cu: int = 4
    lds_alloc_granule: int = 512
    max_workgroups_per_cu: int = 16
    wave_size: int = 64
    chip: Chip | None = None
    # what torch on ROCm reports as the capability (gfx942 -> 9.4)
    isa_version: tuple[int, int] = (
        9,
        4,
    )


AMD_LIMITS: dict[str, AmdLimits] = {
    # Chip: MI300X (AMD datasheet / CDNA3 whitepaper: 304 CUs, 2100 MHz peak engine clock, 192 GB HBM3,
    # 8192-bit, 5.3 TB/s -> 2600 MHz; 4 MB L2 per XCD, which is what HIP reports as the L2 size; 163.4
    # TFLOPS FP32 vector, 1307.4 TFLOPS FP16 matrix, dense).
    "gfx942": AmdLimits(
        "gfx942",
        lds_per_cu=64 * KB,
        isa_version=(9, 4),
        chip=Chip(
            "AMD Instinct MI300X", 304, 192 * GB, 4 * MB, 2_100_000, 2_600_000, 8192, 163.4, 1307.4
        ),
    ),
    # Chip: MI355X (AMD datasheet / CDNA4 whitepaper: 256 CUs, 2400 MHz peak engine clock, 288 GB HBM3E,
    # 8192-bit, 8 TB/s -> 3906 MHz; 4 MB L2 per XCD; 157.3 TFLOPS FP32 vector, 2516.6 TFLOPS FP16 matrix,
    # dense).
    "gfx950": AmdLimits(
        "gfx950",
        lds_per_cu=160 * KB,
        isa_version=(9, 5),
        chip=Chip(
            "AMD Instinct MI355X", 256, 288 * GB, 4 * MB, 2_400_000, 3_906_000, 8192, 157.3, 2516.6
        ),
    ),
}

# The order in which a tie names the limiting factor: a resource the user can change first.
_PRIORITY = ("registers", "shared_memory", "blocks", "warps")


@dataclass(frozen=True)
class Occupancy:
    target: str
    unit: str  # "SM" (NVIDIA) or "CU" (AMD)
    warps_per_block: int
    blocks_per_sm: int
    warps_per_sm: int  # AMD: waves per CU
    max_warps_per_sm: int
    limited_by: str  # "registers" | "shared_memory" | "blocks" | "warps" | "sgprs"
    block_limits: dict[str, int]  # how many blocks per SM each resource alone allows
    registers_per_thread: int | None
    registers_per_warp: int | None  # as allocated (rounded to the allocation unit)
    shared_per_block: int  # as allocated, reserved part included
    waves_per_simd: int | None = None  # AMD only
    sgprs: int | None = None  # AMD only
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def fraction(self) -> float:
        return self.warps_per_sm / self.max_warps_per_sm if self.max_warps_per_sm else 0.0

    def to_json(self) -> dict[str, Any]:
        out = {
            "warps_per_sm": self.warps_per_sm,
            "max_warps_per_sm": self.max_warps_per_sm,
            "limited_by": self.limited_by,
            "occupancy": round(self.fraction, 4),
            "unit": self.unit,
            "blocks_per_sm": self.blocks_per_sm,
            "warps_per_block": self.warps_per_block,
            "block_limits": dict(self.block_limits),
            "registers_per_warp": self.registers_per_warp,
            "shared_per_block": self.shared_per_block,
            "text": self.describe(),
        }
        if self.waves_per_simd is not None:
            out["waves_per_simd"] = self.waves_per_simd
        return out

    def describe(self) -> str:
        """One line in words: '32 of 64 warps per SM (50%), limited by registers (62 per thread ...)'."""
        word = "waves per CU" if self.unit == "CU" else "warps per SM"
        reason = {
            "registers": f"registers ({self.registers_per_thread} per thread, {self.registers_per_warp} per "
            f"{'wave' if self.unit == 'CU' else 'warp'} as allocated)",
            "shared_memory": f"shared memory ({self.shared_per_block} B per block as allocated)",
            "blocks": "the limit on resident blocks per " + self.unit,
            "warps": "the hardware's warp limit (full occupancy)"
            if self.unit == "SM"
            else "the hardware's wave limit (full occupancy)",
            "sgprs": f"scalar registers ({self.sgprs} SGPRs per wave)",
        }[self.limited_by]
        text = (
            f"{self.warps_per_sm} of {self.max_warps_per_sm} {word} ({self.fraction:.0%}): "
            f"{self.blocks_per_sm} block(s) of {self.warps_per_block} "
            f"{'waves' if self.unit == 'CU' else 'warps'}, limited by {reason}"
        )
        if self.waves_per_simd is not None:
            text += f"; {self.waves_per_simd} waves per SIMD"
        if self.notes:
            text += " — " + "; ".join(self.notes)
        return text


def nvidia_occupancy(arch: str, registers: int, num_warps: int, shared_bytes: int) -> Occupancy:
    """Warps per SM for a kernel using `registers` per thread and `shared_bytes` (static + dynamic) per
    block, launched with `num_warps` warps per block."""
    lim = NVIDIA_LIMITS[arch]
    notes = []
    regs_per_warp = _round_up(max(registers, 0) * lim.warp_size, lim.register_alloc_unit)
    if (
        registers > lim.max_registers_per_thread
        or regs_per_warp * _round_up(num_warps, lim.sub_partitions) > lim.max_registers_per_block
    ):
        by_regs = 0
        notes.append("the block needs more registers than the hardware allows: it cannot launch")
    elif regs_per_warp == 0:
        by_regs = lim.max_blocks_per_sm
    else:
        warps_per_partition = (lim.registers_per_sm // lim.sub_partitions) // regs_per_warp
        by_regs = warps_per_partition * lim.sub_partitions // num_warps
    shared_alloc = _round_up(shared_bytes + lim.reserved_shared_per_block, lim.shared_alloc_unit)
    if shared_alloc > lim.max_shared_per_block + lim.reserved_shared_per_block:
        by_shared = 0
        notes.append(
            f"{shared_bytes} B of shared memory exceeds the {lim.max_shared_per_block} B a block may use"
        )
    else:
        by_shared = lim.shared_per_sm // shared_alloc
    by_warps = (
        lim.max_warps_per_sm // num_warps
        if num_warps * lim.warp_size <= lim.max_threads_per_block
        else 0
    )
    limits = {
        "registers": by_regs,
        "shared_memory": by_shared,
        "blocks": lim.max_blocks_per_sm,
        "warps": by_warps,
    }
    blocks = min(limits.values())
    warps = blocks * num_warps
    limited_by = (
        "warps"
        if warps == lim.max_warps_per_sm
        else next(k for k in _PRIORITY if limits[k] == blocks)
    )
    return Occupancy(
        arch,
        "SM",
        num_warps,
        blocks,
        warps,
        lim.max_warps_per_sm,
        limited_by,
        limits,
        registers,
        regs_per_warp,
        shared_alloc,
        notes=tuple(notes),
    )


def amd_occupancy(
    arch: str, vgprs: int, num_warps: int, lds_bytes: int, sgprs: int | None = None
) -> Occupancy:
    lim = AMD_LIMITS[arch]
    notes = []
    if vgprs < lim.vgpr_alloc_granule:
        vgpr_alloc = lim.vgpr_alloc_granule
        waves_by_vgpr = lim.max_waves_per_simd
    else:
        vgpr_alloc = _round_up(vgprs, lim.vgpr_alloc_granule)
        waves_by_vgpr = min(max(lim.vgprs_per_simd_lane // vgpr_alloc, 1), lim.max_waves_per_simd)
    # GFX9 family: a wave using more than 80 / 88 / 100 SGPRs caps the SIMD at 10 / 9 / 8 / 7 waves
    if sgprs is None:
        waves_by_sgpr = lim.max_waves_per_simd
    else:
        waves_by_sgpr = min(
            lim.max_waves_per_simd,
            10 if sgprs <= 80 else 9 if sgprs <= 88 else 8 if sgprs <= 100 else 7,
        )

    def workgroups(waves_per_simd: int) -> int:
        # a workgroup's waves are spread over the CU's SIMDs
        return (
            (waves_per_simd * lim.simds_per_cu) // num_warps
            if num_warps <= lim.simds_per_cu
            else waves_per_simd // -(-num_warps // lim.simds_per_cu)
        )

    lds_alloc = _round_up(lds_bytes, lim.lds_alloc_granule) if lds_bytes else 0
    if lds_alloc > lim.lds_per_cu:
        by_lds = 0
        notes.append(f"{lds_bytes} B of LDS exceeds the {lim.lds_per_cu} B of a CU")
    else:
        by_lds = lim.lds_per_cu // lds_alloc if lds_alloc else 10**6
    max_waves_cu = lim.max_waves_per_simd * lim.simds_per_cu
    slots = lim.max_workgroups_per_cu if num_warps > 1 else max_waves_cu
    limits = {
        "registers": workgroups(waves_by_vgpr),
        "sgprs": workgroups(waves_by_sgpr),
        "shared_memory": by_lds,
        "blocks": slots,
        "warps": workgroups(lim.max_waves_per_simd),
    }
    blocks = min(limits.values())
    waves = blocks * num_warps
    limited_by = (
        "warps"
        if waves >= max_waves_cu
        else next(
            k
            for k in ("registers", "shared_memory", "sgprs", "blocks", "warps")
            if limits[k] == blocks
        )
    )
    limits = {k: v for k, v in limits.items() if v < 10**6}
    return Occupancy(
        arch,
        "CU",
        num_warps,
        blocks,
        waves,
        max_waves_cu,
        limited_by,
        limits,
        vgprs,
        vgpr_alloc,
        lds_alloc,
        waves_per_simd=-(-waves // lim.simds_per_cu),
        sgprs=sgprs,
        notes=tuple(notes),
    )


def occupancy(comp: CompiledKernel) -> Occupancy | None:
    """Theoretical occupancy of a compiled kernel on its target (None when it did not compile or the
    target's limits are unknown)."""
    if not comp.ok:
        return None
    res = comp.resources
    if res.registers is None:
        return None
    name = comp.target.name
    if name in NVIDIA_LIMITS:
        return nvidia_occupancy(name, res.registers, comp.block_warps, res.shared_bytes or 0)
    if name in AMD_LIMITS:
        return amd_occupancy(
            name, res.registers, comp.block_warps, res.shared_bytes or 0, res.sgprs
        )
    return None
