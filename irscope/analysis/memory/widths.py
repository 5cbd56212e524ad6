"""How many bytes one lane moves per instruction for each global load and store, from the PTX (AMDGCN).

The TTGIR says which lane holds which elements, not how many of them one instruction moves: that is
decided later, in the lowering to PTX, and read back here by source line (as the memory-op reader gives
it, or from the assembly's own `.loc` lines when it gives none) for the count to group registers by.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from irscope.analysis.memory.ops import memory_ops, primary_stage
from irscope.analysis.memory.ttgir import TensorAccessOp
from irscope.base.compiled import CompiledKernel
from irscope.ir import ptx as ir_ptx


def widths_by_line(comp: CompiledKernel) -> dict[tuple[int | None, str], list[int]]:
    """Bytes per lane per instruction of the global loads/stores in the PTX (AMDGCN on AMD), by source line."""

    stage = primary_stage(comp)
    try:
        ops = memory_ops(comp, [stage])
    except Exception:
        return {}
    if ops and all(op.source_line is None for op in ops):
        lines = _asm_loc_lines(comp.stage(stage), comp.kernel.file)
        ops = [op.replace(source_line=lines.get(op.line)) for op in ops]
    out: dict[tuple[int | None, str], list[int]] = defaultdict(list)
    for op in ops:
        if op.space in ("global", "generic") and op.width_bytes:
            out[(op.source_line, op.op)].append(op.width_bytes)
    return out


def width_for(
    widths, op: TensorAccessOp, ops: list[TensorAccessOp], elem_bytes: int = 0
) -> int | None:
    found = widths.get((op.source_line, op.kind))
    if not found:
        return None
    fits = [w for w in found if not elem_bytes or w <= elem_bytes * _contiguous_per_thread(op)]
    return Counter(fits or found).most_common(1)[0][0]


def _contiguous_per_thread(op: TensorAccessOp) -> int:
    """Elements a thread holds next to each other along the layout's fastest dimension (no limit if unknown)."""
    layout = op.layout
    while getattr(layout, "parent", None) is not None and not hasattr(layout, "size_per_thread"):
        layout = layout.parent
    size = getattr(layout, "size_per_thread", None)
    order = getattr(layout, "order", None)
    if not size or not order:
        return 1 << 20
    sliced = getattr(op.layout, "dim", None)
    fastest = next((d for d in order if d != sliced), order[0]) if sliced is not None else order[0]
    return size[fastest]


def _asm_loc_lines(text: str, user_file: str) -> dict[int, int]:
    """PTX/AMDGCN line index → user line, from `.loc` directives (used when no source map is at hand)."""
    import os

    files = ir_ptx.file_table(text)  # PTX lists its files at the end
    out: dict[int, int] = {}
    current = None
    user_base = os.path.basename(user_file)
    lines = text.splitlines()

    def is_user(f: int) -> bool:
        # Triton's cache may hold this kernel compiled from another copy of the same file: compare names
        return os.path.basename(files.get(f, "")) == user_base

    in_asm = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("// begin inline asm"):
            in_asm = (
                True  # the `.loc`s inside an inline asm block count its lines, not the source's
            )
        elif stripped.startswith("// end inline asm"):
            in_asm = False
        loc = ir_ptx.read_loc(stripped) if stripped.startswith(".loc") else None
        if loc and in_asm:
            continue
        if loc:
            (number, line_number, _), inlined = loc
            if is_user(number) and line_number != 0:
                current = line_number
            elif inlined and is_user(inlined[0]):
                current = inlined[1]
            continue
        if current is not None:
            out[index] = current
    return out
