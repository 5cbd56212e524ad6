"""The lowering story of one source line: its TTIR ops, their TTGIR layouts, and what the PTX and SASS
(or AMDGCN) make of them, in one short paragraph built from the source map and the explainer."""

from __future__ import annotations

import re
from collections import Counter

from irscope.base.compiled import CompiledKernel
from irscope.base.names import frontend_stage
from irscope.ir import amdgcn as ir_amdgcn
from irscope.ir import ptx as ir_ptx
from irscope.ir import sass as ir_sass
from irscope.ir.explain import layouts, mlir
from irscope.ir.explain.engine import explain_line
from irscope.ir.mlir import strip_locations

# Instructions worth naming in the story (the rest are counted): memory, synchronization, tensor cores.
_NOTABLE = {"ptx": ir_ptx.is_notable, "sass": ir_sass.is_notable, "amdgcn": ir_amdgcn.is_notable}
_LAYOUT_REF = re.compile(
    r"#(?:blocked|mma|shared|linear|dot_op|slice)\w*|#ttg\.(?:slice|dot_op)<\{[^}]*\}>"
)


def _instruction_indices(comp: CompiledKernel, stage: str, source_line: int) -> list[int]:
    sm = comp.source_map
    lines = sm.lines(stage)
    return [i for i in sm.ir_lines(stage, source_line) if lines[i].kind.value == "instruction"]


def _ops(comp: CompiledKernel, stage: str, indices: list[int]) -> list[str]:
    text = comp.stage(stage).splitlines()
    return [e.op for e in (explain_line(stage, text[i]) for i in indices) if e.op]


def _listing(ops: list[str], limit: int = 6) -> str:
    counts = Counter(ops)
    parts = [f"{n} × {op}" if n > 1 else op for op, n in counts.most_common(limit)]
    return ", ".join(parts) + (", …" if len(counts) > limit else "")


def _layout_summary(comp: CompiledKernel, indices: list[int]) -> str:
    """The layouts the TTGIR of this line uses, each in its first sentence's gist."""
    text = comp.stage("ttgir")
    aliases = mlir.aliases_of(text)
    lines = text.splitlines()
    seen: list[str] = []
    for i in indices:
        for ref in _LAYOUT_REF.findall(strip_locations(lines[i])):
            if ref not in seen:
                seen.append(ref)
    out = []
    for ref in seen[:3]:
        words = layouts.describe(ref, None, aliases)
        if words:
            gist = re.sub(r"\s*\([^()]*\)", "", words[0].split(":", 1)[-1].split(";")[0]).strip()
            out.append(f"{ref} ({gist})")
    return "; ".join(out)


def lowering_story(comp: CompiledKernel, source_line: int) -> str:
    """A short paragraph: how `source_line` of the user's file goes through the compiler."""
    if not comp.ok:
        return f"The kernel did not compile, so line {source_line} has no lowering to show."
    source = comp.stage("source").splitlines()
    code = source[source_line - 1].strip() if 0 < source_line <= len(source) else ""
    head = f"Line {source_line}" + (f" (`{code}`)" if code else "")
    sentences = []
    front = frontend_stage(comp.stage_names)  # a Gluon kernel has no TTIR: its first IR is TTGIR
    ttir = _ops(comp, front, _instruction_indices(comp, front, source_line))
    if not ttir:
        return f"{head} produces no code of its own (or the compiler folded it into other lines)."
    sentences.append(
        f"{head} becomes {len(ttir)} {front.upper()} op{'s' if len(ttir) != 1 else ''}: {_listing(ttir)}."
    )
    ttgir_idx = _instruction_indices(comp, "ttgir", source_line)
    ttgir = _ops(comp, "ttgir", ttgir_idx)
    extra = sorted({op for op in ttgir if op.startswith(("ttg.", "ttng.", "amdg."))})
    summary = _layout_summary(comp, ttgir_idx)
    if summary or extra:
        s = "In TTGIR"
        if summary:
            s += f" its tensors are laid out as {summary}"
        if extra:
            s += ("; " if summary else " ") + "the GPU-specific ops " + ", ".join(extra) + " appear"
        sentences.append(s + ".")
    for stage in [s for s in ("ptx", "sass", "amdgcn") if s in comp.stage_names]:
        ops = _ops(comp, stage, _instruction_indices(comp, stage, source_line))
        if not ops:
            continue
        notable = [op for op in ops if _NOTABLE[stage](op)]
        name = {"ptx": "PTX", "sass": "SASS", "amdgcn": "AMDGCN"}[stage]
        s = f"The {name} has {len(ops)} instruction{'s' if len(ops) != 1 else ''} for it"
        if notable:
            s += f", among them {_listing(notable, 4)}"
            first = _first_notable_text(comp, stage, source_line)
            if first:
                s += f" — {first}"
        sentences.append(s + ".")
    return " ".join(sentences)


def _first_notable_text(comp: CompiledKernel, stage: str, source_line: int) -> str:
    text = comp.stage(stage).splitlines()
    for i in _instruction_indices(comp, stage, source_line):
        e = explain_line(stage, text[i])
        if e.op and _NOTABLE[stage](e.op):
            return e.text[:1].lower() + e.text[1:].rstrip(".") if e.text else ""
    return ""
