"""Which TTGIR op a recorded load or store ran as, and that op's layout where only Triton can say it.

The interpreter records accesses by source line, kind and shape; the TTGIR holds the ops the compiler
made of them, each with the layout that decides which lanes move what. The rules for pairing the two
(pipelined copies, one access loaded in several layouts, a call written over several lines) are kept
here, apart from the counting, because they follow how Triton lowers code, not how the hardware counts.
"""

from __future__ import annotations

import math
from collections import Counter

from irscope.analysis.dataflow import parse_function
from irscope.analysis.memory.ttgir import TensorAccessOp
from irscope.analysis.vectorize.facts import kernel_arg_names
from irscope.base.compiled import CompiledKernel
from irscope.ir.mlir import strip_locations


def access_sites(ops: list[TensorAccessOp]) -> dict[tuple, tuple[int, list[TensorAccessOp]]]:
    """(source line, kind, shape) -> how many TTGIR ops the compiler made of that access, and the first op of
    each layout among them, in program order."""
    out: dict[tuple, tuple[int, list[TensorAccessOp]]] = {}
    for op in ops:
        count, firsts = out.get((op.source_line, op.kind, op.shape), (0, []))
        if all(f.layout_text != op.layout_text for f in firsts):
            firsts = firsts + [op]
        out[(op.source_line, op.kind, op.shape)] = (count + 1, firsts)
    return out


def matched_ops(ops: list[TensorAccessOp], sites: dict, accesses, recorded: Counter, split: set):
    """Each recorded access with the TTGIR op(s) it ran as. Usually one op. But where the compiler made one
    source-level access into ops of different layouts that all run (Triton's layout pass loads a value
    again in a second layout rather than converting it: Liger's RoPE loads `cos_row` as `ld.global.b32` and
    as `ld.global.b16`, and the H100 measured both), each access ran once per layout. The one case told apart
    is a site unrolled into one op per execution (`tl.static_range`), where a program records exactly as many
    accesses there as there are ops; in a loop a program records one a trip (fla's fused recurrent backward
    loads `b_q` and `b_k` in a slice layout and again in a blocked one, 64 trips, and the H100 counted both)."""
    for access in accesses:
        op = match_op(ops, access)
        count, firsts = (
            sites.get((op.source_line, op.kind, op.shape), (0, [])) if op is not None else (0, [])
        )
        if len(firsts) > 1 and recorded[(access.line, access.kind, tuple(access.shape))] != count:
            split.add((op.source_line, op.kind, op.shape))
            for each in firsts:
                yield access, each
        else:
            yield access, op


def match_op(ops: list[TensorAccessOp], access) -> TensorAccessOp | None:
    """The TTGIR op a recorded access came from: same source line, kind and shape. Pipelined loops
    repeat an op (prologue and body); the copies share a layout, so the first stands for them all."""
    kind = access.kind
    shape = tuple(access.shape)
    same_line = [op for op in ops if op.source_line == access.line and op.kind == kind]
    for op in same_line:
        if op.shape == shape or (op.shape == () and math.prod(shape) == 1):
            return op
    # a call written over several lines: the interpreter records its first line, Triton may put the op on a
    # later line of the same call (the one of its pointer argument)
    last = getattr(access, "last_line", 0) or access.line
    for op in ops:
        if (
            op.kind == kind
            and op.source_line is not None
            and access.line < op.source_line <= last
            and (op.shape == shape or (op.shape == () and math.prod(shape) == 1))
        ):
            return op
    return None


def derived_pointers(comp: CompiledKernel, ttgir: str, ops: list[TensorAccessOp]) -> dict[int, str]:
    """TTGIR line of an access -> the pointer argument its address is computed from, where exactly one is: the
    kernel's own arithmetic names the argument, which the addresses alone cannot when two arguments are views
    of one storage (a tensor and a slice of it)."""
    import re

    graph = parse_function(ttgir)
    names = kernel_arg_names(comp, graph)
    lines = ttgir.splitlines()
    out = {}
    for op in ops:
        text = strip_locations(lines[op.index]).split(op.op, 1)[-1]
        operands = re.findall(r"%[\w.$-]+(?:#\d+)?", text.split(" : ")[0])
        at = 1 if op.op.endswith("buffer_store") else 0  # an AMD buffer store names its value first
        if len(operands) <= at:
            continue
        pointers = [
            a for a in graph.reaching(operands[at]).args if graph.args[a].startswith("!tt.ptr")
        ]
        if len(pointers) == 1:
            out[op.index] = names.get(pointers[0], pointers[0].lstrip("%"))
    return out


def source_line_lookup(comp: CompiledKernel, stage: str):
    source_map = getattr(comp, "source_map", None) if hasattr(type(comp), "source_map") else None
    if source_map is None:
        return None

    def lookup(index: int) -> int | None:
        try:
            return source_map.source_line(stage, index)
        except Exception:
            return None

    return lookup
