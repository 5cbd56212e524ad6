"""Rules about per-thread and per-SM resources: `spill`, `local-memory`, `low-occupancy`.

Local memory comes from the cubin's resource usage (what the driver reports) and the instructions that
touch it. PTX `ld.local` / `st.local` are local memory the compiler asked for (a tensor indexed with a
value only known at run time); SASS `STL` / `LDL` with no local access in the PTX are ptxas' register
spills. Occupancy is the model of `analysis/occupancy.py`; its what-if (one more block per SM) is
computed by that model, not recompiled, and says so. Low occupancy is `info`: pipelined matmul and
attention kernels hide latency with stages instead of warps and run well at 1 or 2 blocks per SM, so a
warp count is no measure of lost time; a block that cannot launch at all is an `error`.
"""

from __future__ import annotations

from collections import Counter

from irscope.analysis.memory.op import LOCAL
from irscope.analysis.memory.ops import memory_ops
from irscope.analysis.occupancy import NVIDIA_LIMITS, nvidia_occupancy, occupancy
from irscope.base.compiled import CompiledKernel
from irscope.findings.model import Cost, Finding, WhatIf


def local_findings(comp: CompiledKernel, new) -> list[Finding]:
    res = comp.resources
    nvidia = comp.target.is_nvidia
    local_bytes = res.local_bytes or 0
    if nvidia and local_bytes <= 0:
        return []
    if not nvidia and not (res.vgpr_spills or res.sgpr_spills):
        return []
    ptx_local = [op for op in memory_ops(comp, ["ptx"]) if op.space == LOCAL] if nvidia else []
    machine = "sass" if nvidia else "amdgcn"
    try:
        machine_local = [op for op in memory_ops(comp, [machine]) if op.space == LOCAL]
    except Exception:  # noqa: BLE001 - no SASS (nvdisasm missing): the lines come from the PTX alone
        machine_local = []
    lines = Counter(
        op.source_line for op in (ptx_local or machine_local) if op.source_line is not None
    )
    line = lines.most_common(1)[0][0] if lines else comp.kernel.line
    elsewhere = sorted(set(lines) - {line})
    also = (
        f"; also at line{'s' if len(elsewhere) > 1 else ''} {', '.join(map(str, elsewhere))}"
        if elsewhere
        else ""
    )
    registers = res.registers or 0
    if nvidia:
        stored = sum(1 for op in machine_local if op.op == "store")
        loaded = sum(1 for op in machine_local if op.op == "load")
        counted = f" ({stored} stores, {loaded} loads in the SASS)" if machine_local else ""
        weight = local_bytes / (local_bytes + 4 * registers) if registers else 1.0
        cost = Cost(
            local_bytes,
            "local_bytes_per_thread",
            f"{local_bytes} B of local memory per thread{counted}",
        )
    else:
        spilled = (res.vgpr_spills or 0) + (res.sgpr_spills or 0)
        weight = spilled / (spilled + registers) if registers else 1.0
        cost = Cost(
            spilled,
            "spilled_registers",
            f"{res.vgpr_spills or 0} VGPRs and {res.sgpr_spills or 0} SGPRs spilled to scratch",
        )
    if ptx_local:
        return [
            new(
                "local-memory",
                "warning",
                line,
                f"the kernel keeps {local_bytes} B per thread in local memory (off-chip, cached in L1/L2): the "
                f"compiler placed a tensor there, usually because it is indexed with a value known only at run "
                f"time{also}",
                "index tensors only with compile-time positions (tl.where / tl.sum over a mask instead of "
                "x[i] with a runtime i), or make the array smaller",
                cost,
                weight,
            )
        ]
    return [
        new(
            "spill",
            "warning",
            line,
            f"registers spill: {registers} registers per thread are not enough, so the compiler keeps "
            f"values in local memory (off-chip) and reloads them{also}",
            "lower the register pressure: smaller BLOCK sizes, fewer num_stages, or more num_warps (the same "
            "tile over more threads)",
            cost,
            weight,
        )
    ]


def occupancy_findings(comp: CompiledKernel, new) -> list[Finding]:
    occ = occupancy(comp)
    if occ is None:
        return []
    line = comp.kernel.line
    lost = occ.max_warps_per_sm - occ.warps_per_sm
    word = "waves per CU" if occ.unit == "CU" else "warps per SM"
    cost = Cost(
        round(1 - occ.fraction, 4),
        "occupancy_lost",
        f"{occ.warps_per_sm} of {occ.max_warps_per_sm} {word}: {lost} idle",
    )
    if occ.blocks_per_sm == 0:
        return [
            new(
                "low-occupancy",
                "error",
                line,
                "the block cannot launch: " + occ.describe(),
                _fix(occ.limited_by),
                cost,
                1.0,
            )
        ]
    if occ.fraction >= 0.5 or occ.limited_by in ("warps", "blocks"):
        return []
    return [
        new(
            "low-occupancy",
            "info",
            line,
            occ.describe(),
            _fix(occ.limited_by),
            cost,
            1 - occ.fraction,
            _one_more_block(comp, occ),
        )
    ]


def _fix(limited_by: str) -> str:
    return {
        "registers": "use fewer registers per thread: smaller BLOCK sizes, fewer num_stages, or more num_warps for "
        "the same tile; this matters when the kernel waits on memory, less for a pipelined matmul",
        "shared_memory": "use less shared memory per block: fewer num_stages, or smaller BLOCK sizes",
        "sgprs": "use fewer scalar registers: fewer distinct kernel arguments and uniform values",
    }.get(limited_by, "change num_warps or the BLOCK sizes")


def _one_more_block(comp: CompiledKernel, occ) -> WhatIf | None:
    """The register or shared-memory budget that would let one more block in, by the occupancy model."""
    arch = comp.target.name
    if arch not in NVIDIA_LIMITS or occ.registers_per_thread is None:
        return None
    res = comp.resources
    want = occ.blocks_per_sm + 1
    if occ.limited_by == "registers":
        for regs in range(occ.registers_per_thread - 1, 0, -1):
            better = nvidia_occupancy(arch, regs, comp.block_warps, res.shared_bytes or 0)
            if better.blocks_per_sm >= want:
                return WhatIf(
                    f"at {regs} registers per thread or fewer: {better.warps_per_sm} of "
                    f"{better.max_warps_per_sm} warps per SM ({better.fraction:.0%}), by the occupancy "
                    f"model (not recompiled)",
                    False,
                )
        other = nvidia_occupancy(arch, 1, comp.block_warps, res.shared_bytes or 0)
        return WhatIf(
            f"fewer registers alone would not let another block in: {other.limited_by.replace('_', ' ')} "
            f"then allows {other.blocks_per_sm} block(s) per SM, by the occupancy model",
            False,
        )
    if occ.limited_by == "shared_memory":
        lim = NVIDIA_LIMITS[arch]
        budget = (
            lim.shared_per_sm // want
        ) // lim.shared_alloc_unit * lim.shared_alloc_unit - lim.reserved_shared_per_block
        if budget > 0:
            better = nvidia_occupancy(arch, occ.registers_per_thread, comp.block_warps, budget)
            if better.blocks_per_sm >= want:
                return WhatIf(
                    f"at {budget} B of shared memory per block or less: {better.warps_per_sm} of "
                    f"{better.max_warps_per_sm} warps per SM ({better.fraction:.0%}), by the occupancy "
                    f"model (not recompiled)",
                    False,
                )
    return None
