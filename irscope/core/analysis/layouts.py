"""Which warp, lane and register of a CTA hold each element of a TTGIR tensor.

A TTGIR distributed layout (`#ttg.blocked<...>`, `#ttg.slice<...>`, MMA layouts, linear layouts) says
how a tensor's elements are spread over the threads of a program. Triton turns every one of them into
a *linear layout*: a map from the bits of (register, lane, warp) to tensor coordinates, where each bit
contributes one basis vector and the bases of the set bits are XOR-ed together. This module does the
same in plain Python for `#blocked` and `#slice` layouts (exactly Triton's construction, any rank,
including tensors smaller than one layout tile, which broadcast over lanes and warps, and larger ones,
which wrap around into more registers). Other layouts are read through Triton's own linear-layout
machinery when this Triton version exposes it to Python (see `triton_compat.ttgir_linear_layouts`);
otherwise they are reported as not analysed, never guessed.

It also finds, for every global load and store of a TTGIR module, the op, its pointer tensor's shape,
element type and layout, and its source line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from ..ir import mlir as ir_mlir

# ---------------------------------------------------------------------------------------------- layouts


@dataclass(frozen=True)
class BlockedLayout:
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]  # fastest-varying dimension first

    @property
    def rank(self) -> int:
        return len(self.order)

    def describe(self) -> str:
        return (f"blocked: sizePerThread {list(self.size_per_thread)}, threadsPerWarp "
                f"{list(self.threads_per_warp)}, warpsPerCTA {list(self.warps_per_cta)}, order {list(self.order)}")


@dataclass(frozen=True)
class SliceLayout:
    dim: int
    parent: Any  # a layout

    def describe(self) -> str:
        return f"slice (dim {self.dim}) of {describe_layout(self.parent)}"


@dataclass(frozen=True)
class LinearLayoutAttr:
    """`#ttg.linear<{register = [...], lane = [...], warp = [...], block = [...]}>`: the bases written out."""

    register: tuple[tuple[int, ...], ...]
    lane: tuple[tuple[int, ...], ...]
    warp: tuple[tuple[int, ...], ...]

    def describe(self) -> str:
        return f"linear: register {_bases_text(self.register)}, lane {_bases_text(self.lane)}, warp {_bases_text(self.warp)}"


def _bases_text(bases) -> str:
    return "[" + ", ".join("[" + ", ".join(map(str, b)) + "]" for b in bases) + "]"


@dataclass(frozen=True)
class OpaqueLayout:
    """A layout this module does not build itself (MMA, dot operand, linear, ...): its TTGIR text."""

    kind: str   # "nvidia_mma", "dot_op", "linear", ...
    text: str

    def describe(self) -> str:
        return self.kind


def describe_layout(layout: Any) -> str:
    return layout.describe() if layout is not None else "no layout (a scalar)"


@dataclass(frozen=True)
class LinearLayout:
    """Bases of (register, lane, warp) bits → tensor coordinates; element = XOR of the set bits' bases."""

    shape: tuple[int, ...]
    reg_bases: tuple[tuple[int, ...], ...]
    lane_bases: tuple[tuple[int, ...], ...]
    warp_bases: tuple[tuple[int, ...], ...]

    @property
    def num_registers(self) -> int:
        return 1 << len(self.reg_bases)

    @property
    def num_warps(self) -> int:
        return 1 << len(self.warp_bases)

    @staticmethod
    def _free_mask(bases) -> int:
        return sum(1 << i for i, b in enumerate(bases) if not any(b))

    @property
    def free_register_mask(self) -> int:
        """Register bits that do not move the element: registers that repeat another register."""
        return self._free_mask(self.reg_bases)

    @property
    def free_lane_mask(self) -> int:
        """Lane bits whose lanes hold the same elements as the lane with the bit cleared (broadcast)."""
        return self._free_mask(self.lane_bases)

    @property
    def free_warp_mask(self) -> int:
        return self._free_mask(self.warp_bases)

    def contiguous_registers(self) -> int:
        """How many consecutive registers of a thread hold consecutive elements along one dimension
        (the most one vector instruction can move)."""
        if not self.reg_bases:
            return 1
        first = self.reg_bases[0]
        dims = [d for d, v in enumerate(first) if v]
        if len(dims) != 1 or first[dims[0]] != 1:
            return 1
        dim, run = dims[0], 1
        for basis in self.reg_bases:
            if basis == _unit(len(first), dim, run):
                run *= 2
            else:
                break
        return run

    def coordinates(self) -> np.ndarray:
        """int64 array [warp, lane, register, dim]: the tensor coordinates each thread register holds."""
        rank = len(self.shape)

        def table(bases) -> np.ndarray:
            out = np.zeros((1 << len(bases), rank), dtype=np.int64)
            for bit, basis in enumerate(bases):
                size = 1 << bit
                out[size:2 * size] = out[:size] ^ np.asarray(basis, dtype=np.int64)
            return out

        regs, lanes, warps = table(self.reg_bases), table(self.lane_bases), table(self.warp_bases)
        return warps[:, None, None, :] ^ lanes[None, :, None, :] ^ regs[None, None, :, :]

    def element_index(self) -> np.ndarray:
        """int64 array [warp, lane, register]: the row-major flat index of the element each register holds."""
        coords = self.coordinates()
        strides = np.ones(len(self.shape), dtype=np.int64)
        for d in range(len(self.shape) - 2, -1, -1):
            strides[d] = strides[d + 1] * self.shape[d + 1]
        return (coords * strides).sum(axis=-1) if len(self.shape) else np.zeros(coords.shape[:3], np.int64)


def _unit(rank: int, dim: int, value: int) -> tuple[int, ...]:
    return tuple(value if d == dim else 0 for d in range(rank))


def blocked_linear_layout(layout: BlockedLayout, shape: tuple[int, ...]) -> LinearLayout:
    """Triton's linear layout of a `#blocked` layout for a tensor of `shape` (powers of two).

    Registers, then lanes, then warps fill the dimensions in `order`; a tensor larger than one CTA tile
    wraps around with more registers (fastest dimension first); a tensor smaller than the tile drops the
    registers beyond it and broadcasts lanes and warps (their bases become zero), largest bases first.
    """
    rank = layout.rank
    if len(shape) != rank:
        raise ValueError(f"a rank-{rank} layout for a rank-{len(shape)} tensor")
    regs: list[tuple[int, ...]] = []
    lanes: list[tuple[int, ...]] = []
    warps: list[tuple[int, ...]] = []
    size = [1] * rank
    for bases, counts in ((regs, layout.size_per_thread), (lanes, layout.threads_per_warp),
                          (warps, layout.warps_per_cta)):
        for dim in layout.order:
            count = counts[dim]
            while count > 1:
                bases.append(_unit(rank, dim, size[dim]))
                size[dim] *= 2
                count //= 2
    for dim in layout.order:  # wrap around: more registers
        while size[dim] < shape[dim]:
            regs.append(_unit(rank, dim, size[dim]))
            size[dim] *= 2
    # Too large: remove (registers) or zero (lanes, warps) the largest bases of each dimension.
    removed_regs: set[int] = set()
    for dim in range(rank):
        excess = size[dim]
        candidates = [(basis[dim], kind, index) for kind, bases in (("reg", regs), ("lane", lanes), ("warp", warps))
                      for index, basis in enumerate(bases) if basis[dim] != 0]
        candidates.sort(key=lambda c: -c[0])
        for _value, kind, index in candidates:
            if excess <= shape[dim]:
                break
            if kind == "reg":
                removed_regs.add(index)
            elif kind == "lane":
                lanes[index] = (0,) * rank
            else:
                warps[index] = (0,) * rank
            excess //= 2
    regs = [b for i, b in enumerate(regs) if i not in removed_regs]
    return LinearLayout(tuple(shape), tuple(regs), tuple(lanes), tuple(warps))


def slice_linear_layout(layout: SliceLayout, shape: tuple[int, ...]) -> LinearLayout:
    """A slice layout: the parent's layout for the shape with a size-1 dimension at `dim`, that
    dimension dropped, and registers that no longer move the element removed."""
    parent_shape = tuple(shape[:layout.dim]) + (1,) + tuple(shape[layout.dim:])
    parent = linear_layout(layout.parent, parent_shape)
    if parent is None:
        return None  # type: ignore[return-value]

    def drop(basis):
        return tuple(v for d, v in enumerate(basis) if d != layout.dim)

    regs = tuple(b for b in map(drop, parent.reg_bases) if any(b))
    return LinearLayout(tuple(shape), regs, tuple(map(drop, parent.lane_bases)), tuple(map(drop, parent.warp_bases)))


def linear_layout(layout: Any, shape: tuple[int, ...]) -> LinearLayout | None:
    """The linear layout of `layout` for `shape`, or None when this module cannot build it."""
    return _linear_layout_cached(layout, tuple(int(s) for s in shape))


@lru_cache(maxsize=256)
def _linear_layout_cached(layout: Any, shape: tuple[int, ...]) -> LinearLayout | None:
    if isinstance(layout, BlockedLayout):
        return blocked_linear_layout(layout, shape)
    if isinstance(layout, SliceLayout):
        return slice_linear_layout(layout, shape)
    if isinstance(layout, LinearLayoutAttr):
        return LinearLayout(shape, layout.register, layout.lane, layout.warp)
    return None


# ---------------------------------------------------------------------------------------------- TTGIR text

_ALIAS = re.compile(r"^(#[\w.$-]+)\s*=\s*(#.*)$")
_LIST = re.compile(r"(\w+)\s*=\s*\[([^\]]*)\]")


def _attr_lists(body: str) -> dict[str, tuple[int, ...]]:
    out = {}
    for key, values in _LIST.findall(body):
        out[key] = tuple(int(v) for v in values.replace(" ", "").split(",") if v)
    return out


def parse_layout(text: str, aliases: dict[str, Any]) -> Any:
    """A layout attribute as written in TTGIR (`#blocked1`, `#ttg.blocked<{...}>`, `#ttg.slice<{...}>`)."""
    text = text.strip()
    if text in aliases:
        return aliases[text]
    m = re.match(r"^#(?:ttg|triton_gpu)\.(\w+)<(.*)>$", text, re.S)
    if not m:
        return OpaqueLayout("unknown", text)
    kind, body = m.group(1), m.group(2)
    if kind == "blocked":
        lists = _attr_lists(body)
        if any(v != 1 for v in lists.get("CTAsPerCGA", ())):
            return OpaqueLayout("blocked (multi-CTA)", text)
        try:
            return BlockedLayout(lists["sizePerThread"], lists["threadsPerWarp"], lists["warpsPerCTA"], lists["order"])
        except KeyError:
            return OpaqueLayout("blocked", text)
    if kind == "linear":
        bases = {}
        for key in ("register", "lane", "warp", "block"):
            m = re.search(key + r"\s*=\s*\[((?:\s*\[[^\]]*\]\s*,?)*)\]", body)
            if m is None:
                bases[key] = None
                continue
            bases[key] = tuple(tuple(int(v) for v in inner.replace(" ", "").split(",") if v)
                               for inner in re.findall(r"\[([^\]]*)\]", m.group(1)))
        if bases["register"] is not None and bases["lane"] is not None and bases["warp"] is not None \
                and not bases.get("block"):
            return LinearLayoutAttr(bases["register"], bases["lane"], bases["warp"])
        return OpaqueLayout("linear", text)
    if kind == "slice":
        dim = re.search(r"dim\s*=\s*(\d+)", body)
        parent = re.search(r"parent\s*=\s*(#[\w.]+(?:<.*>)?)\s*}?\s*$", body, re.S)
        if dim and parent:
            return SliceLayout(int(dim.group(1)), parse_layout(parent.group(1).rstrip("}").strip(), aliases))
    return OpaqueLayout(kind, text)


def layout_aliases(ttgir: str) -> dict[str, Any]:
    """`#blocked = #ttg.blocked<{...}>` definitions at the top of a TTGIR module."""
    aliases: dict[str, Any] = {}
    for line in ttgir.splitlines():
        if line.startswith("#loc"):
            continue
        m = _ALIAS.match(line.strip())
        if m and not m.group(2).startswith("#loc") and not m.group(2).startswith("loc("):
            aliases[m.group(1)] = parse_layout(m.group(2), aliases)
        elif line.startswith("module"):
            break
    return aliases


@dataclass
class TensorAccessOp:
    """A global load or store in TTGIR, with what the coalescing analysis needs to know about it."""

    index: int                     # 0-based line in the TTGIR text
    op: str                        # "tt.load", "tt.store", "ttg.async_copy_global_to_local", ...
    kind: str                      # "load" | "store" | "atomic"
    shape: tuple[int, ...]         # the pointer tensor's shape; () for a scalar pointer
    elem_type: str                 # "f32", "f16", ...
    layout: Any                    # BlockedLayout / SliceLayout / OpaqueLayout / None (scalar)
    layout_text: str = ""
    source_line: int | None = None
    text: str = field(default="", repr=False)

    @property
    def elem_bytes(self) -> int:
        return _TYPE_BYTES.get(self.elem_type, 4)


_TYPE_BYTES = {"i1": 1, "i8": 1, "f8E4M3FN": 1, "f8E5M2": 1, "f8E4M3FNUZ": 1, "f8E5M2FNUZ": 1, "i16": 2,
               "f16": 2, "bf16": 2, "i32": 4, "f32": 4, "i64": 8, "f64": 8}

_OPS = {"tt.load": "load", "tt.store": "store", "ttg.async_copy_global_to_local": "load",
        "tt.atomic_rmw": "atomic", "tt.atomic_cas": "atomic",
        # AMD buffer ops: a scalar base pointer and a tensor of offsets; the data tensor carries the layout
        "amdg.buffer_load": "load", "amdg.buffer_store": "store", "amdg.buffer_load_to_local": "load",
        "amdgpu.buffer_load": "load", "amdgpu.buffer_store": "store", "amdgpu.buffer_load_to_local": "load"}
ACCESS_OP_NAMES = tuple(_OPS)
# the data tensor of a buffer op: `: !tt.ptr<f16> -> tensor<...>` (3.7+) or just `: tensor<...>` (3.6)
_DATA_TENSOR = re.compile(r"(?:->|:)\s*tensor<((?:\d+x)+)(\w+)(?:,\s*(#[^>]*?(?:<\{.*?\}>)?))?>")
_OP_RE = re.compile(r"^\s*(?:%[\w#:]+(?:,\s*%[\w#:]+)*\s*=\s*)?\"?(" + "|".join(map(re.escape, _OPS)) + r")\"?[\s(]")
_PTR_TENSOR = re.compile(r"tensor<((?:\d+x)+)!tt\.ptr<([\w]+)>(?:,\s*(#[^>]*?(?:<\{.*?\}>)?))?>")
_SCALAR_PTR = re.compile(r":\s*!tt\.ptr<(\w+)>")


def ttgir_access_ops(ttgir: str, source_line_of=None, user_file: str | None = None) -> list[TensorAccessOp]:
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
            shape, elem, layout_text, layout = (), scalar.group(1) if scalar else data.group(2), "", None
            if data:  # buffer op: base pointer + offsets, shaped and laid out like its data
                shape = tuple(int(x) for x in data.group(1).rstrip("x").split("x"))
                layout_text = (data.group(3) or "").strip()
                layout = parse_layout(layout_text, aliases) if layout_text else OpaqueLayout("none", "")
        if source_line_of is not None:
            src = source_line_of(index)
        else:
            ref = ir_mlir.trailing_alias(line)
            src = locs.get(ref) if ref and locs else None
        out.append(TensorAccessOp(index, op, _OPS[op], shape, elem, layout, layout_text, src, line.strip()))
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
