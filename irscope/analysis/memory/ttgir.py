"""Every global load, store and atomic of a TTGIR module: the op, its pointer tensor's shape, element type
and layout, and its source line (what the coalescing analysis and Triton's own layouts are matched on).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from irscope.analysis.layouts.owners import OpaqueLayout
from irscope.analysis.layouts.parse import layout_aliases, parse_layout
from irscope.ir import mlir as ir_mlir


@dataclass
class TensorAccessOp:
    """A global load or store in TTGIR, with what the coalescing analysis needs to know about it."""

    index: int  # 0-based line in the TTGIR text
    op: str  # "tt.load", "tt.store", "ttg.async_copy_global_to_local", ...
    kind: str  # "load" | "store" | "atomic"
    shape: tuple[int, ...]  # the pointer tensor's shape; () for a scalar pointer
    elem_type: str  # "f32", "f16", ...
    layout: Any  # BlockedLayout / SliceLayout / OpaqueLayout / None (scalar)
    layout_text: str = ""
    source_line: int | None = None
    text: str = field(default="", repr=False)

    @property
    def elem_bytes(self) -> int:
        return TYPE_BYTES.get(self.elem_type, 4)


# bytes per element of each MLIR element type Triton's IR names
TYPE_BYTES = {
    "i1": 1,
    "i8": 1,
    "f8E4M3FN": 1,
    "f8E5M2": 1,
    "f8E4M3FNUZ": 1,
    "f8E5M2FNUZ": 1,
    "i16": 2,
    "f16": 2,
    "bf16": 2,
    "i32": 4,
    "f32": 4,
    "tf32": 4,
    "i64": 8,
    "f64": 8,
}

_OPS = {
    "tt.load": "load",
    "tt.store": "store",
    "ttg.async_copy_global_to_local": "load",
    "tt.atomic_rmw": "atomic",
    "tt.atomic_cas": "atomic",
    # AMD buffer ops: a scalar base pointer and a tensor of offsets; the data tensor carries the layout
    "amdg.buffer_load": "load",
    "amdg.buffer_store": "store",
    "amdg.buffer_load_to_local": "load",
    "amdgpu.buffer_load": "load",
    "amdgpu.buffer_store": "store",
    "amdgpu.buffer_load_to_local": "load",
}
ACCESS_OP_NAMES = tuple(_OPS)
# the data tensor of a buffer op: `: !tt.ptr<f16> -> tensor<...>` (3.7+) or just `: tensor<...>` (3.6)
_DATA_TENSOR = re.compile(r"(?:->|:)\s*tensor<((?:\d+x)+)(\w+)(?:,\s*(#[^>]*?(?:<\{.*?\}>)?))?>")
_OP_RE = re.compile(
    r"^\s*(?:%[\w#:]+(?:,\s*%[\w#:]+)*\s*=\s*)?\"?(" + "|".join(map(re.escape, _OPS)) + r")\"?[\s(]"
)
_PTR_TENSOR = re.compile(r"tensor<((?:\d+x)+)!tt\.ptr<([\w]+)>(?:,\s*(#[^>]*?(?:<\{.*?\}>)?))?>")
_SCALAR_PTR = re.compile(r":\s*!tt\.ptr<(\w+)>")


def ttgir_access_ops(
    ttgir: str, source_line_of=None, user_file: str | None = None
) -> list[TensorAccessOp]:
    """Every global load, store and atomic of a TTGIR module. `source_line_of(index)` gives the user's
    line for a TTGIR line (the source map); without it the module's own `#loc` table is read."""
    aliases = layout_aliases(ttgir)
    lines = ttgir.splitlines()
    locs = None if source_line_of is not None else _mlir_loc_lines(lines, user_file)
    out = []
    for index, line in enumerate(lines):
        m = _OP_RE.match(line)
        if not m:
            continue
        op = m.group(1)
        ptr = _PTR_TENSOR.search(line.split(" : ", 1)[-1] if " : " in line else line)
        if ptr:
            shape = tuple(int(s) for s in ptr.group(1).rstrip("x").split("x"))
            elem = ptr.group(2)
            layout_text = (ptr.group(3) or "").strip()
            layout = parse_layout(layout_text, aliases) if layout_text else OpaqueLayout("none", "")
        else:
            scalar = _SCALAR_PTR.search(line)
            data = _DATA_TENSOR.search(line) if op.startswith("amdg") else None
            if not scalar and not data:
                continue  # a descriptor / TMA access, or a form this parser does not know
            shape, elem, layout_text, layout = (
                (),
                scalar.group(1) if scalar else data.group(2),
                "",
                None,
            )
            if data:  # buffer op: base pointer + offsets, shaped and laid out like its data
                shape = tuple(int(x) for x in data.group(1).rstrip("x").split("x"))
                layout_text = (data.group(3) or "").strip()
                layout = (
                    parse_layout(layout_text, aliases) if layout_text else OpaqueLayout("none", "")
                )
        src = _source_line(index, line, source_line_of, locs)
        out.append(
            TensorAccessOp(index, op, _OPS[op], shape, elem, layout, layout_text, src, line.strip())
        )
    return out


def _mlir_loc_lines(lines: list[str], user_file: str | None = None) -> dict[str, int]:
    """`#locN` → user line, from the module's alias table (ir/mlir.py reads it): the innermost frame that
    lies in the user's file, compared by file name since Triton's cache may hold another copy's paths;
    with no such frame, the outermost one."""
    import os

    user_base = os.path.basename(user_file) if user_file else None
    defs = dict(filter(None, map(ir_mlir.location_alias_definition, lines)))
    locations = ir_mlir.Locations(defs)
    out: dict[str, int] = {}
    for name in defs:
        chain = locations.alias(name)
        if not chain:
            continue
        mine = [f for f in chain if user_base is None or os.path.basename(f.file) == user_base]
        out[name] = (mine[0] if mine else chain[-1]).line
    return out


def module_threads(ttgir: str) -> tuple[int, int]:
    """(warps per CTA, threads per warp) from the module's attributes."""
    warps = re.search(r'"ttg\.num-warps"\s*=\s*(\d+)', ttgir)
    threads = re.search(r'"ttg\.threads-per-warp"\s*=\s*(\d+)', ttgir)
    return int(warps.group(1)) if warps else 4, int(threads.group(1)) if threads else 32


def _source_line(index: int, line: str, source_line_of, locs: dict | None) -> int | None:
    """The user's line of TTGIR line `index`: from the source map when given, else the module's `#loc` table."""
    if source_line_of is not None:
        return source_line_of(index)
    ref = ir_mlir.trailing_alias(line)
    return locs.get(ref) if ref and locs else None


# Loads and stores through a tensor descriptor: on Hopper and later a TMA copy of a whole tile, whose
# addresses no thread issues (the interpreter still walks them element by element).
_DESCRIPTOR_OPS = {
    "tt.descriptor_load": "load",
    "tt.descriptor_store": "store",
    "tt.descriptor_gather": "load",
    "tt.descriptor_scatter": "store",
    "tt.descriptor_reduce": "atomic",
    "ttng.async_tma_copy_global_to_local": "load",
    "ttng.async_tma_copy_local_to_global": "store",
    "ttng.async_tma_gather": "load",
    "ttng.async_tma_scatter": "store",
    "ttng.async_tma_reduce": "atomic",
}
_DESCRIPTOR_OP_RE = re.compile(
    r"^\s*(?:%[\w#:]+(?:,\s*%[\w#:]+)*\s*=\s*)?\"?("
    + "|".join(map(re.escape, _DESCRIPTOR_OPS))
    + r")\"?[\s(]"
)


def descriptor_ops_by_line(
    ttgir: str, source_line_of=None, user_file: str | None = None
) -> dict[tuple[int, str], str]:
    """(user's line, "load" | "store" | "atomic") -> the TTGIR op that moves that line's memory through a
    tensor descriptor (the first such op), lines found as ttgir_access_ops finds them."""
    lines = ttgir.splitlines()
    locs = None if source_line_of is not None else _mlir_loc_lines(lines, user_file)
    out: dict[tuple[int, str], str] = {}
    for index, line in enumerate(lines):
        m = _DESCRIPTOR_OP_RE.match(line)
        if not m:
            continue
        src = _source_line(index, line, source_line_of, locs)
        if src is not None:
            out.setdefault((src, _DESCRIPTOR_OPS[m.group(1)]), m.group(1))
    return out
