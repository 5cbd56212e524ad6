"""Rules read from the TTGIR with the machine code as the proof: `layout-shuffle`, `no-tensor-core`.

A `ttg.convert_layout` moves a tensor from one thread layout to another; the backend does it in
registers or with warp shuffles when it can, and through shared memory otherwise. It counts as a
finding only when the machine code at its source line and column (the compiler's debug location)
reads and writes shared memory; a reduction on the same line has a column of its own. A `tt.dot` whose
result stays in a `#blocked` layout is computed on the FMA pipes; it counts only when no `mma` / `wgmma`
(AMD: `mfma` / `wmma`) instruction comes from its source line.
"""

from __future__ import annotations

import math
import re

from irscope.analysis.layouts.owners import BlockedLayout, describe_layout
from irscope.analysis.layouts.parse import layout_aliases, parse_layout
from irscope.analysis.memory.op import SHARED
from irscope.analysis.memory.ops import memory_ops, primary_stage
from irscope.base.compiled import CompiledKernel
from irscope.findings.model import Cost, Finding
from irscope.ir import amdgcn as ir_amdgcn
from irscope.ir import ptx as ir_ptx
from irscope.ir.mlir import strip_locations

_TENSOR = re.compile(r"tensor<([\dx]+)x(\w+),\s*(#[^>]+(?:>[^>]*>)?)>")
_CONVERT = re.compile(
    r"ttg\.convert_layout\s+%[\w#.]+\s*:\s*tensor<([\dx]+)x(\w+),\s*(#.+?)>\s*->\s*"
    r"tensor<[\dx]+x\w+,\s*(#.+?)>$"
)
# Other ops that go through shared memory: when one has the conversion's line and column, the shared
# accesses there cannot be told apart, and no finding is made.
_SHARED_USERS = re.compile(
    r'"?\b(?:tt\.(?:reduce|scan|histogram|gather)|ttg\.(?:local_\w+|async_\w+)|ttng\.\w+)\b'
)
_DOT = re.compile(r"=\s*tt\.dot\s")
_ELEM_BYTES = {
    "i1": 1,
    "i8": 1,
    "f8E4M3FN": 1,
    "f8E5M2": 1,
    "i16": 2,
    "f16": 2,
    "bf16": 2,
    "i32": 4,
    "f32": 4,
    "i64": 8,
    "f64": 8,
}


def _on_tensor_cores(stage: str, line: str) -> bool:
    """A PTX (`wgmma`, `mma`, `tcgen05.mma`) or AMDGCN (`v_mfma`, `v_wmma`, `v_smfmac`) matrix instruction."""
    if stage == "ptx":
        found = ir_ptx.tokenize(line)
        return (
            found is not None
            and (found.guard or "%").startswith("%")
            and found.opcode.startswith(ir_ptx.TENSOR_CORE)
        )
    found = ir_amdgcn.tokenize(line)
    return found is not None and found.opcode.startswith(ir_amdgcn.TENSOR_CORE)


def _regions(lines: list[str]) -> tuple[list[tuple[int, ...]], list[list]]:
    """The MLIR region nesting of a TTGIR text: per line, the ids of the regions that enclose it
    (outermost first), and per region [kind, first line, last line], kind "loop" (scf.for / scf.while),
    "if" (scf.if, either branch) or "other"."""
    stack: list[int] = []
    regions: list[list] = []
    enclosing = []
    for index, raw in enumerate(lines):
        text = strip_locations(raw).strip()
        if text.startswith("}") and stack:
            regions[stack.pop()][2] = index
        enclosing.append(tuple(stack))
        if text.endswith("{"):
            if re.search(r"\bscf\.(?:for|while)\b", text) or text.startswith("} do"):
                kind = "loop"
            elif re.search(r"\bscf\.if\b", text) or text.startswith("} else"):
                kind = "if"
            else:
                kind = "other"
            stack.append(len(regions))
            regions.append([kind, index, len(lines)])
    return enclosing, regions


def _where_in_loops(index: int, enclosing, regions) -> str:
    """ "hot": in the innermost loop, unconditionally; "outer": in a loop that holds another loop (e.g. the
    tile loop of a persistent kernel, around its K loop) or under a condition inside the loop; "": no loop."""
    around = enclosing[index]
    loops = [r for r in around if regions[r][0] == "loop"]
    if not loops:
        return ""
    inner = loops[-1]
    _, start, end = regions[inner]
    holds_loop = any(
        kind == "loop" and start < first <= end for kind, first, _ in regions[inner + 1 :]
    )
    conditional = any(regions[r][0] == "if" for r in around[around.index(inner) + 1 :])
    return "outer" if holds_loop or conditional else "hot"


def shuffle_findings(comp: CompiledKernel, new) -> list[Finding]:
    ttgir = comp.stage("ttgir")
    lines = ttgir.splitlines()
    source_map = comp.source_map
    machine = primary_stage(comp)
    machine_lines = source_map.lines(machine)
    shared_at = {
        _place(machine_lines[op.line].loc)
        for op in memory_ops(comp, [machine])
        if op.space == SHARED
    }
    ttgir_lines = source_map.lines("ttgir")
    others = {
        _place(ttgir_lines[i].loc)
        for i, text in enumerate(lines)
        if "convert_layout" not in text and _SHARED_USERS.search(strip_locations(text))
    }
    aliases = None
    out = []
    for index, raw in enumerate(lines):
        if "ttg.convert_layout" not in raw:
            continue
        m = _CONVERT.search(strip_locations(raw).rstrip())
        loc = ttgir_lines[index].loc
        if m is None or loc is None or _place(loc) not in shared_at or _place(loc) in others:
            continue  # no shared memory from this op's line and column (registers, warp shuffles), or unclear
        line = loc.line
        if aliases is None:
            aliases, (enclosing, regions) = layout_aliases(ttgir), _regions(lines)
        shape = [int(x) for x in m.group(1).split("x")]
        elem = _ELEM_BYTES.get(m.group(2))
        size = math.prod(shape) * elem if elem else None
        tensor = f"a {'×'.join(map(str, shape))} {m.group(2)} tensor" + (
            f" ({size} B)" if size else ""
        )
        src, dst = (describe_layout(parse_layout(n, aliases)) for n in (m.group(3), m.group(4)))
        place = _where_in_loops(index, enclosing, regions)
        in_loop = place == "hot"
        where = {
            "hot": "inside the innermost loop, so every iteration pays it",
            "outer": "inside a loop, but outside its innermost loop or under a condition (once per tile of a "
            "persistent kernel, say)",
            "": "once per program",
        }[place]
        message = (
            f"ttg.convert_layout moves {tensor} between threads through shared memory, {where}: "
            f"from {m.group(3)} ({src}) to {m.group(4)} ({dst})"
        )
        fix = _shuffle_fix(parse_layout(m.group(3), aliases), in_loop)
        per = {"hot": " per iteration", "outer": " each time it runs", "": " per program"}[place]
        cost = Cost(
            size,
            "shared_bytes" + per.replace(" ", "_"),
            f"{size if size is not None else '?'} B written to and read back from shared memory{per}",
        )
        out.append(
            new(
                "layout-shuffle",
                "warning" if in_loop else "info",
                line,
                message,
                fix,
                cost,
                None,
                stage="ttgir",
                stage_line=index,
            )
        )
    return out


def _place(loc) -> tuple[int, int] | None:
    """Line and column: a reduction on the same line as a conversion (tl.sum(a * b)) has its own column."""
    return None if loc is None else (loc.line, loc.column)


def _shuffle_fix(source_layout, in_loop: bool) -> str:
    if in_loop:
        return (
            "convert less often: keep the results in registers across iterations and store them once after "
            "the loop, or convert a value once before the loop when it does not change in it"
        )
    kind = getattr(source_layout, "kind", "")
    if "mma" in kind or "mfma" in kind or "wmma" in kind:
        return (
            "usually none: the dot's result leaves the MMA layout so that the store is coalesced, once per "
            "program; it matters only when the epilogue dominates (then store straight from the accumulator, "
            "e.g. with a TMA descriptor store)"
        )
    return (
        "produce the value in the order it is consumed (the same contiguous dimension for the load and the "
        "store); a transpose needs one such exchange, and shared memory is the cheap way to make it"
    )


def dot_findings(comp: CompiledKernel, new) -> list[Finding]:
    ttgir = comp.stage("ttgir")
    lines = ttgir.splitlines()
    source_map = comp.source_map
    machine = primary_stage(comp)
    tensor_core_lines = {
        source_map.source_line(machine, i)
        for i, text in enumerate(comp.stage(machine).splitlines())
        if _on_tensor_cores(machine, text)
    }
    aliases = None
    out = []
    for index, raw in enumerate(lines):
        if not _DOT.search(raw):
            continue
        text = strip_locations(raw)
        result = text.rsplit("->", 1)[-1]
        found = _TENSOR.search(result)
        line = source_map.source_line("ttgir", index)
        if found is None or line in tensor_core_lines:
            continue
        if aliases is None:
            aliases = layout_aliases(ttgir)
        layout = aliases.get(found.group(3).strip(), found.group(3))
        if not isinstance(layout, BlockedLayout) and "blocked" not in str(layout):
            continue
        operands = _TENSOR.findall(text.split("->", 1)[0])
        m, n = (int(x) for x in found.group(1).split("x")[-2:])
        k = int(operands[0][0].split("x")[-1]) if operands else None
        elem = operands[0][1] if operands else found.group(2)
        precision = re.search(r"inputPrecision\s*=\s*(\w+)", text)
        cause, fix = _dot_cause(elem, precision.group(1) if precision else "ieee", m, n, k)
        fmas = m * n * k if k else None
        message = (
            f"tl.dot of {m}×{k or '?'} by {k or '?'}×{n} {elem} runs on the FMA pipes, not tensor cores "
            f"(its result is in a blocked layout and no mma instruction comes from this line): {cause}"
        )
        cost = Cost(
            fmas,
            "fma_per_dot",
            f"{fmas if fmas else '?'} multiply-adds per dot, one per lane per "
            f"instruction, where tensor cores do a tile per instruction",
        )
        out.append(
            new(
                "no-tensor-core",
                "warning",
                line,
                message,
                fix,
                cost,
                None,
                stage="ttgir",
                stage_line=index,
            )
        )
    return out


def _dot_cause(elem: str, precision: str, m: int, n: int, k: int | None) -> tuple[str, str]:
    if min(m, n) < 16 or (k is not None and k < 8):
        return (
            f"the tile is too small for an MMA instruction (M = {m}, N = {n}, K = {k})",
            "make each of BLOCK_M, BLOCK_N at least 16 and BLOCK_K at least 16 (8 for tf32)",
        )
    if elem == "f64":
        return (
            "Triton has no tensor-core path for float64",
            "compute in float32/tf32, or in float16/bfloat16 with "
            "a float32 accumulator, where the accuracy allows",
        )
    if elem == "f32" and precision.lower() in ("ieee", "0"):
        return (
            "float32 inputs with input_precision='ieee' (allow_tf32=False): tensor cores take float32 only "
            "as tf32",
            "pass input_precision='tf32' (or 'tf32x3' for near-fp32 accuracy) where that is "
            "accurate enough, or load the operands as float16/bfloat16",
        )
    return (
        f"Triton chose the FMA path for {elem} operands on this target",
        "use float16/bfloat16 (or tf32) operands with a float32 accumulator",
    )
