"""Why a global access is not vectorized, and proof by recompiling with the fix ("what if").

Triton turns a load or store into wide per-thread accesses (PTX `ld.global.v4.b32`, AMD
`buffer_load_dwordx4`) only when it can prove, at compile time, that each thread's run of neighbouring
elements is contiguous, aligned to the vector size, and either all masked on or all off. What it knows
comes from the JIT's specialization (`tt.divisibility = 16` on pointers and ints that were multiples of
16 at launch), from constants, and from the layout (how many neighbouring elements each thread owns).
This module reads those same facts back from the compiled IR and the launch, and names the missing one.

The reasons themselves are worded in `vectorize_reasons`, from facts read in `vectorize_facts`; the
recompile that checks them is `vectorize_what_if`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from irscope.analysis.dataflow import parse_function
from irscope.analysis.memory.op import GLOBAL
from irscope.analysis.memory.ops import memory_ops
from irscope.analysis.memory.ttgir import TYPE_BYTES
from irscope.analysis.vectorize.facts import (
    kernel_arg_names,
    machine_widths,
    mask_operand,
    ttgir_layouts,
    width_for,
)
from irscope.analysis.vectorize.reasons import VECTOR_BYTES, Reason, reasons_for
from irscope.base.compiled import CompiledKernel, LaunchedKernel
from irscope.base.names import frontend_stage
from irscope.ir.mlir import strip_locations


@dataclass
class Diagnosis:
    """One global load/store of the TTIR whose machine accesses are narrower than they could be."""

    ttir_line: int
    source_line: int | None
    op: str  # "load" | "store" | "atomic"
    pointer: str | None  # the base pointer argument
    width_bytes: int | None  # widest machine access for it (primary stage), bytes per thread
    elem_bytes: int | None
    contiguous_per_thread: int | None  # from the TTGIR layout (sizePerThread along the fastest dim)
    reasons: list[Reason] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "ttir_line": self.ttir_line + 1,
            "source_line": self.source_line,
            "op": self.op,
            "pointer": self.pointer,
            "width_bytes": self.width_bytes,
            "elem_bytes": self.elem_bytes,
            "contiguous_per_thread": self.contiguous_per_thread,
            "reasons": [r.to_json() for r in self.reasons],
        }


# ------------------------------------------------------------------------------------------ why


def why_not_vectorized(comp: LaunchedKernel, only_narrow: bool = True) -> list[Diagnosis]:
    """For each global access of the kernel (TTIR), its machine width and — when narrower than 16
    bytes — the reasons irscope can see. `only_narrow=False` returns every access."""
    if not comp.ok:
        return []
    front = frontend_stage(comp.stage_names)  # TTIR; a Gluon kernel's TTGIR
    ttir = comp.stage(front)
    graph = parse_function(ttir)
    arg_params = kernel_arg_names(comp, graph)
    values = comp.launch_values()
    layouts = ttgir_layouts(comp)
    widths = machine_widths(comp)
    out = []
    ttir_lines = ttir.splitlines()
    for op in memory_ops(comp, [front]):
        if op.space != GLOBAL or op.op == "atomic":  # atomics act on one element per lane by nature
            continue
        line = strip_locations(ttir_lines[op.line])
        operands = re.findall(r"%[\w.$-]+(?:#\d+)?", line.split(op.opcode, 1)[1].split(" : ")[0])
        if not operands:
            continue
        if "tensor<" not in line.split(" : ", 1)[-1]:
            continue  # one element per program (a 0-d pointer): as wide as it can be
        ptr_reach = graph.reaching(operands[0])
        pointers = [a for a in ptr_reach.args if graph.args[a].startswith("!tt.ptr")]
        mask_value = mask_operand(op, operands)
        mask_reach = graph.reaching(mask_value) if mask_value else None
        width = width_for(widths, op)
        elem = TYPE_BYTES.get(op.elem_type or "", None)
        layout = layouts.get((op.source_line, op.op)) if op.source_line is not None else None
        contiguous = layout[0] if layout else None
        diag = Diagnosis(
            op.line,
            op.source_line,
            op.op,
            arg_params.get(pointers[0]) if pointers else None,
            width,
            elem,
            contiguous,
        )
        narrow = width is not None and width < VECTOR_BYTES
        if only_narrow and not narrow:
            continue
        if width is None or narrow:
            diag.reasons = reasons_for(
                graph, arg_params, values, ptr_reach, mask_reach, elem, layout
            )
        out.append(diag)
    return _guesses_said(comp, out)


def _guesses_said(comp: CompiledKernel, diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """A reason about an argument irscope made up (--no-run, no launch) says so: "n = 3 is a guess"."""
    guesses = comp.launch.guesses
    if not guesses:
        return diagnoses
    for d in diagnoses:
        d.reasons = [
            Reason(r.kind, r.arg, f"{r.text} ({r.arg} = {guesses[r.arg]} is a guess)", r.fix)
            if r.arg in guesses
            else r
            for r in d.reasons
        ]
    return diagnoses
