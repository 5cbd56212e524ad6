"""What the why-not-vectorized analysis reads from a compilation and its launch.

The kernel parameter behind each TTIR argument, the values the launch passed, the per-thread runs of each
TTGIR access's layout, and the widths the primary stage (PTX, AMDGCN) gave each access (which the
what-if, `vectorize_what_if`, also reads to compare two compilations).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from irscope.analysis.dataflow import FunctionGraph
from irscope.analysis.memory.op import GLOBAL, MemoryOp
from irscope.analysis.memory.ops import memory_ops, primary_stage
from irscope.base.compiled import CompiledKernel, LaunchedKernel
from irscope.ir.mlir import strip_locations


def mask_operand(op: MemoryOp, operands: list[str]) -> str | None:
    index = {"tt.load": 1, "tt.store": 2, "tt.atomic_rmw": 2}.get(op.opcode)
    if index is not None and op.masked and len(operands) > index:
        return operands[index]
    return None


def kernel_arg_names(comp: CompiledKernel, graph: FunctionGraph) -> dict[str, str]:
    """TTIR argument (%x_ptr or %arg0) -> kernel parameter name."""
    runtime = [
        name
        for name, kind in comp.signature.items()
        if kind != "constexpr" and comp.specialization.get(name) != "constant"
    ]
    out = {}
    for i, arg in enumerate(graph.arg_order):
        bare = arg.lstrip("%")
        out[arg] = bare if bare in comp.signature else (runtime[i] if i < len(runtime) else bare)
    return out


def data_ptr(value: Any) -> int | None:
    try:
        return int(value.data_ptr())
    except Exception:
        return None


def ttgir_layouts(
    comp: LaunchedKernel,
) -> dict[tuple[int | None, str], tuple[int | None, list[int] | None, str]]:
    """(source line, op) -> (contiguous elements per thread, sizePerThread, layout name) of TTGIR global
    accesses: from the `#blocked` layout of the access, or from the `contiguity` Triton writes on buffer
    ops and async copies when the layout is another kind (an MMA result stored as it is, say)."""
    text = comp.stage("ttgir")
    blocked = {}
    for m in re.finditer(
        r"^(#[\w]+) = #ttg\.blocked<\{sizePerThread = \[([\d, ]+)\].*?order = \[([\d, ]+)\]",
        text,
        re.MULTILINE,
    ):
        spt = [int(x) for x in m.group(2).split(",")]
        order = [int(x) for x in m.group(3).split(",")]
        blocked[m.group(1)] = (spt[order[0]], spt)
    out: dict[tuple[int | None, str], tuple[int | None, list[int] | None, str]] = {}
    lines = text.splitlines()
    for op in memory_ops(comp, ["ttgir"]):
        if op.space != GLOBAL or op.source_line is None:
            continue
        line = strip_locations(lines[op.line])
        type_text = line.split(" : ", 1)[-1]
        names = re.findall(r",\s*(#\w+)>", type_text)
        name = next((n for n in names if n in blocked), None)
        attr = re.search(r"\bcontiguity = (\d+)", line)
        if name is not None:
            contiguous, spt = blocked[name]
            if attr:
                contiguous = min(contiguous, int(attr.group(1)))
            found = (contiguous, spt, name)
        elif names:
            contiguous = int(attr.group(1)) if attr else _runs_in_tritons_layout(comp, op.line)
            found = (contiguous, None, names[0])
        else:
            continue
        key = (op.source_line, op.op)
        if key not in out or (found[0] or 0) < (out[key][0] or 0):
            out[key] = found
    return out


def _runs_in_tritons_layout(comp: LaunchedKernel, line: int) -> int | None:
    """Consecutive elements per thread in the layout of the access on TTGIR `line`, from Triton's own
    linear layout of it. Triton 3.7+ writes this as `contiguity` on buffer ops; 3.6 does not, and its
    layout says the same as far as the layout goes (Triton's value also caps it by what the address
    analysis proves, which the other reasons cover)."""
    found = comp.triton_layouts().get(line)
    return found.contiguous_registers() if found is not None else None


def machine_widths(comp: CompiledKernel) -> dict[tuple[int | None, str], list[int]]:
    """(source line, op) -> widths of the primary stage's global accesses."""
    out: dict[tuple[int | None, str], list[int]] = defaultdict(list)
    for op in memory_ops(comp, [primary_stage(comp)]):
        if op.space == GLOBAL and op.width_bytes is not None:
            out[(op.source_line, op.op)].append(op.width_bytes)
    return out


def width_for(widths, op: MemoryOp) -> int | None:
    found = widths.get((op.source_line, op.op))
    if found:
        return min(found)
    if op.source_line is None:  # no source map: the narrowest access of this kind stands for all
        same = [w for (line, kind), ws in widths.items() if kind == op.op for w in ws]
        return min(same) if same else None
    return None
