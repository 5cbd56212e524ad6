"""Per-line marks for the stage panes and the source: what each line does to memory, at a glance.

`line_marks(comp, stage)` maps a 0-based line index of `comp.stage(stage)` to a set of mark names:

  vector          a global access of 8 bytes or more per thread (vectorized)
  scalar          a global access narrower than 8 bytes per thread: the thing to look at
  masked          the access is predicated / masked: some lanes may skip it
  shared          shared memory (LDS on AMD) is read or written
  convert_layout  `ttg.convert_layout`: data reshuffled between threads, usually through shared memory
  local           local (per-thread, off-chip) memory is read or written
  spill           that local access is a register spill (the kernel spills)

IR stages (TTIR, TTGIR) take vector / scalar from the machine stage's widths for the same source line,
so a `tt.load` is marked the way its PTX or AMDGCN turned out. The source stage gets the union of the
marks of the lines it maps to.
"""

from __future__ import annotations

from irscope.analysis.memory.op import GLOBAL, LOCAL, SHARED, MemoryOp
from irscope.analysis.memory.ops import memory_ops, primary_stage
from irscope.base.compiled import CompiledKernel
from irscope.base.names import frontend_stage

MARKS = ("vector", "scalar", "masked", "shared", "convert_layout", "local", "spill")

# name -> (one-character glyph, words). Plain text, so any renderer can use them.
MARK_LEGEND: dict[str, tuple[str, str]] = {
    "vector": ("V", "vectorized global access (8 bytes or more per thread)"),
    "scalar": ("S", "scalar global access (under 8 bytes per thread): look here"),
    "masked": ("m", "masked / predicated access"),
    "shared": ("s", "shared memory"),
    "convert_layout": (
        "c",
        "layout conversion (ttg.convert_layout), usually through shared memory",
    ),
    "local": ("L", "local memory"),
    "spill": ("!", "register spill to local memory"),
}

MACHINE_STAGES = ("llir", "ptx", "sass", "amdgcn")


def line_marks(comp: CompiledKernel, stage: str) -> dict[int, set[str]]:
    """Marks per 0-based line of one stage (lines without marks are absent). Cached per compilation."""
    if not comp.ok:
        return {}
    return comp.analyses.get(f"line_marks:{stage}", lambda: _compute(comp, stage))


def _compute(comp: CompiledKernel, stage: str) -> dict[int, set[str]]:
    if stage == "source":
        return _source_marks(comp)
    widths = _global_widths(comp)
    spills = bool(comp.resources.spills)
    marks: dict[int, set[str]] = {}
    for op in memory_ops(comp, [stage]):
        found = _op_marks(op, widths, spills, machine=stage in MACHINE_STAGES)
        if found:
            marks.setdefault(op.line, set()).update(found)
    if stage in ("ttgir", "ttir"):
        for index, text in enumerate(comp.stage(stage).splitlines()):
            if "ttg.convert_layout" in text:
                marks.setdefault(index, set()).add("convert_layout")
            elif "ttg.local_alloc" in text or "ttg.local_dealloc" in text:
                marks.setdefault(index, set()).add("shared")
    return marks


def _op_marks(op: MemoryOp, widths: dict, spills: bool, machine: bool) -> set[str]:
    out = set()
    if op.space == GLOBAL:
        # keys missing from `widths` are single-element accesses: no vector / scalar verdict for them
        known = (op.source_line, op.op) in widths
        width = (op.width_bytes if machine else _width_of(widths, op)) if known else None
        if width is not None:
            out.add("vector" if width >= 8 else "scalar")
        if op.copy_to == SHARED:
            out.add("shared")
    elif op.space == SHARED:
        out.add("shared")
    elif op.space == LOCAL:
        out.add("local")
        if spills:
            out.add("spill")
    if op.masked:
        out.add("masked")
    return out


def _global_widths(comp: CompiledKernel) -> dict[tuple, list[int]]:
    """(source line, op) -> widths of the machine stage's global accesses. Accesses of one element per
    program (`tl.store(sum_ptr + row, total)`) are as wide as they can be: they get no vector/scalar mark."""
    return comp.analyses.get("global_widths", lambda: _compute_global_widths(comp))


def _compute_global_widths(comp: CompiledKernel) -> dict[tuple, list[int]]:
    single = _single_element_keys(comp)
    out: dict[tuple, list[int]] = {}
    for op in memory_ops(comp, [primary_stage(comp)]):
        if (
            op.space == GLOBAL
            and op.width_bytes is not None
            and op.op != "atomic"
            and (op.source_line, op.op) not in single
        ):
            out.setdefault((op.source_line, op.op), []).append(op.width_bytes)
    return out


def _single_element_keys(comp: CompiledKernel) -> set[tuple]:
    """(source line, op) whose TTIR (a Gluon kernel's TTGIR) global accesses all go through a single (0-d)
    pointer."""
    front = frontend_stage(comp.stage_names)
    lines = comp.stage(front).splitlines()
    kinds: dict[tuple, set[bool]] = {}
    for op in memory_ops(comp, [front]):
        if op.space == GLOBAL and op.source_line is not None:
            is_tensor = "tensor<" in lines[op.line].split(" : ", 1)[-1]
            kinds.setdefault((op.source_line, op.op), set()).add(is_tensor)
    return {key for key, found in kinds.items() if found == {False}}


def _width_of(widths: dict, op: MemoryOp) -> int | None:
    found = widths.get((op.source_line, op.op)) if op.source_line is not None else None
    return min(found) if found else None


def _source_marks(comp: CompiledKernel) -> dict[int, set[str]]:
    marks: dict[int, set[str]] = {}
    spills = bool(comp.resources.spills)
    widths = _global_widths(comp)
    stages = [primary_stage(comp), "ttgir"] + (["sass"] if comp.target.is_nvidia else [])
    for stage in stages:
        for op in memory_ops(comp, [stage]):
            if op.source_line is None:
                continue
            found = _op_marks(op, widths, spills, machine=True)
            # TTGIR adds what the machine stage names differently: shared staging
            if stage == "ttgir":
                found &= {"shared"}
            elif stage == "sass":  # SASS adds spills and local memory that only ptxas introduces
                found &= {"local", "spill"}
            if found:
                marks.setdefault(op.source_line - 1, set()).update(found)
    try:
        source_map = comp.source_map
    except Exception:
        source_map = None
    if source_map is not None:
        for index, text in enumerate(comp.stage("ttgir").splitlines()):
            if "ttg.convert_layout" in text:
                line = source_map.source_line("ttgir", index)
                if line is not None:
                    marks.setdefault(line - 1, set()).add("convert_layout")
    return marks
