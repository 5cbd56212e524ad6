"""Every load, store and atomic in a compiled kernel, per stage: what it touches and how wide it is.

One parser per dialect turns a stage's text into `MemoryOp`s, one per instruction line:

- TTIR / TTGIR (`parse_mlir`): `tt.load`, `tt.store`, atomics, descriptor (TMA) loads and stores,
  `ttg.local_load` / `ttg.local_store` / `ttg.local_alloc` with a value, async copies. Widths are not known
  at these stages (the backend picks them), so `width_bytes` is None; mask and `other` are.
- PTX (`parse_ptx`): `ld` / `st` / `atom` / `red` / `cp.async` / `ldmatrix` / `stmatrix`, with the vector
  count and type giving the width, `@%p` guards and the cache / eviction modifiers.
- SASS (`parse_sass`): `LDG`, `STG`, `LDS`, `STS`, `LDL`, `STL`, `LD`, `ST`, `LDGSTS`, `LDSM`, `STSM`,
  atomics and reductions.
- AMDGCN (`parse_amdgcn`): `global_*`, `buffer_*`, `flat_*`, `scratch_*`, `ds_*` memory instructions.

Kernel-argument reads (`ld.param`, `LDC`, AMD scalar `s_load`) are not memory ops of the kernel's data and
are left out. `width_bytes` is per thread (per lane) per instruction.

`MemoryOp` is defined in `memory_op`; the PTX, SASS and AMDGCN parsers live in `memory_asm`, the TTIR,
TTGIR and LLVM IR ones in `memory_ir`. This module runs them over a compilation's stages, attaches
source lines, and totals the ops per source line.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterable

from irscope.analysis.memory.asm import parse_amdgcn, parse_ptx, parse_sass
from irscope.analysis.memory.ir import parse_llvm, parse_mlir
from irscope.analysis.memory.op import GLOBAL, LOAD, STORE, MemoryOp
from irscope.base.compiled import CompiledKernel

PARSERS = {
    "ttir": lambda t: parse_mlir(t, "ttir"),
    "ttgir": lambda t: parse_mlir(t, "ttgir"),
    "llir": parse_llvm,
    "ptx": parse_ptx,
    "sass": parse_sass,
    "amdgcn": parse_amdgcn,
}


def primary_stage(comp: CompiledKernel) -> str:
    """The stage whose widths the report uses: PTX on NVIDIA (what Triton emits), AMDGCN on AMD."""
    return "ptx" if comp.target.is_nvidia else "amdgcn"


def memory_ops(comp: CompiledKernel, stages: Iterable[str] | None = None) -> list[MemoryOp]:
    """Memory ops of the compilation's stages (default: every stage with a parser), with source lines.
    Cached on the compilation object."""
    if not comp.ok:
        return []
    wanted = [s for s in (stages or comp.stage_names) if s in PARSERS and s in comp.stage_names]
    out: list[MemoryOp] = []
    for stage in wanted:
        out.extend(
            comp.analyses.get(f"memory_ops:{stage}", functools.partial(_stage_ops, comp, stage))
        )
    return out


def _stage_ops(comp: CompiledKernel, stage: str) -> list[MemoryOp]:
    return _with_source_lines(comp, stage, PARSERS[stage](comp.stage(stage)))


def _with_source_lines(comp: CompiledKernel, stage: str, ops: list[MemoryOp]) -> list[MemoryOp]:
    source_map = _source_map(comp)
    if source_map is None:
        return ops
    out = []
    for op in ops:
        try:
            line = source_map.source_line(stage, op.line)
        except Exception:  # a stage the map does not cover: leave the op unmapped
            line = None
        out.append(op.replace(source_line=line))
    return out


def _source_map(comp: CompiledKernel):
    try:
        return getattr(comp, "source_map", None)
    except Exception:
        return None


@dataclass
class LineTotals:
    """Memory traffic attributed to one source line (primary stage)."""

    source_line: int | None
    loads: int = 0
    stores: int = 0
    atomics: int = 0
    bytes_per_thread: int = 0
    masked: int = 0
    scalar_global: int = 0  # global accesses narrower than 8 bytes
    widths: list[int] = field(default_factory=list)
    spaces: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "source_line": self.source_line,
            "loads": self.loads,
            "stores": self.stores,
            "atomics": self.atomics,
            "bytes_per_thread": self.bytes_per_thread,
            "masked": self.masked,
            "scalar_global": self.scalar_global,
            "widths": sorted(set(self.widths)),
            "spaces": sorted(set(self.spaces)),
        }


def totals_by_source_line(ops: Iterable[MemoryOp]) -> list[LineTotals]:
    rows: dict[int | None, LineTotals] = {}
    for op in ops:
        row = rows.setdefault(op.source_line, LineTotals(op.source_line))
        if op.op == LOAD:
            row.loads += 1
        elif op.op == STORE:
            row.stores += 1
        else:
            row.atomics += 1
        row.bytes_per_thread += op.width_bytes or 0
        row.masked += op.masked
        if op.space == GLOBAL and op.width_bytes is not None and op.width_bytes < 8:
            row.scalar_global += 1
        if op.width_bytes is not None:
            row.widths.append(op.width_bytes)
        row.spaces.append(op.space)
    return sorted(rows.values(), key=lambda r: (r.source_line is None, r.source_line or 0))
