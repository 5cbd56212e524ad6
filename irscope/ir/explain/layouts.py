"""TTGIR layouts in words: which thread owns which elements.

A layout attribute looks like `#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16],
warpsPerCTA = [4, 1], order = [1, 0]}>`. `describe(attr, shape, aliases)` turns one into sentences;
`blocked_owned(...)` / `linear_owned(...)` compute the element coordinates one thread holds, so the text
can say "thread 0 owns (0, 0..3)" for this tensor's real shape.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

from irscope.ir.explain.common import split_operands

_ATTR = re.compile(r"#(\w+)\.(\w+)<(.*)>\s*$", re.DOTALL)


@dataclass(frozen=True)
class Layout:
    dialect: str  # "ttg" or "ttng"
    kind: str  # "blocked", "nvidia_mma", "slice", ...
    params: dict

    @property
    def name(self) -> str:
        return f"#{self.dialect}.{self.kind}"


def parse(attr: str) -> Layout | None:
    """`#ttg.blocked<{...}>` -> Layout; None if `attr` is not a layout attribute."""
    m = _ATTR.match(attr.strip())
    if not m:
        return None
    dialect, kind, body = m.groups()
    body = body.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    params = {}
    for item in split_operands(body):
        key, sep, value = item.partition("=")
        if not sep:
            continue
        value = value.strip()
        try:
            params[key.strip()] = ast.literal_eval(
                value.replace("true", "True").replace("false", "False")
            )
        except (ValueError, SyntaxError):
            params[key.strip()] = value
    return Layout(dialect, kind, params)


def _split_index(index: int, sizes: list[int], order: list[int]) -> list[int]:
    """A flat thread (or warp) index -> per-dimension indices, order[0] varying fastest."""
    out = [0] * len(sizes)
    for dim in order:
        out[dim] = index % sizes[dim]
        index //= sizes[dim]
    return out


def blocked_owned(p: dict, shape: list[int], thread: int) -> list[list[int]]:
    """Per dimension, the coordinates that `thread` of the block owns under a blocked layout."""
    spt, tpw, wpc, order = p["sizePerThread"], p["threadsPerWarp"], p["warpsPerCTA"], p["order"]
    lanes = math.prod(tpw)
    lane = _split_index(thread % lanes, tpw, order)
    warp = _split_index(thread // lanes, wpc, order)
    per_dim = []
    for d, size in enumerate(shape):
        tile = spt[d] * tpw[d] * wpc[d]
        start = (warp[d] * tpw[d] + lane[d]) * spt[d]
        coords = []
        for rep in range(max(1, -(-size // tile))):
            for i in range(spt[d]):
                # a tensor smaller than the tile wraps: values are replicated
                c = (rep * tile + start + i) % size
                if c not in coords:
                    coords.append(c)
        per_dim.append(coords)
    return per_dim


def linear_owned(p: dict, shape: list[int], thread: int, lanes: int) -> list[tuple[int, ...]]:
    """Elements a thread owns under a linear layout: XOR of the basis vectors of the set bits of
    (register, lane, warp), for every register index."""
    lane, warp = thread % lanes, thread // lanes

    def combine(bases, index):
        out = [0] * len(shape)
        for bit, vector in enumerate(bases):
            if index >> bit & 1:
                out = [a ^ b for a, b in zip(out, vector)]
        return out

    base = [
        a ^ b for a, b in zip(combine(p.get("lane", []), lane), combine(p.get("warp", []), warp))
    ]
    regs = p.get("register", [])
    return [tuple(a ^ b for a, b in zip(base, combine(regs, r))) for r in range(1 << len(regs))]


def _ranges(coords: list[int]) -> str:
    """[0, 1, 2, 3, 8, 9] -> '0..3, 8..9'."""
    coords = sorted(coords)
    runs, start, prev = [], None, None
    for c in coords:
        if start is None:
            start = prev = c
        elif c == prev + 1:
            prev = c
        else:
            runs.append((start, prev))
            start = prev = c
    if start is not None:
        runs.append((start, prev))
    text = ", ".join(f"{a}" if a == b else f"{a}..{b}" for a, b in runs[:4])
    return text + (", ..." if len(runs) > 4 else "")


def _owned_words(per_dim: list[list[int]]) -> str:
    if len(per_dim) == 1:
        return f"elements {_ranges(per_dim[0])}"
    if len(per_dim) == 2:
        rows = ("row " if len(per_dim[0]) == 1 else "rows ") + _ranges(per_dim[0])
        cols = ("column " if len(per_dim[1]) == 1 else "columns ") + _ranges(per_dim[1])
        return f"{rows}, {cols}"
    return " × ".join(_ranges(c) for c in per_dim)


def _dims(values: list[int]) -> str:
    return "×".join(str(v) for v in values)


def describe(
    attr: str, shape: list[int] | None = None, aliases: dict[str, str] | None = None, depth: int = 0
) -> list[str]:
    """Sentences about one layout attribute (`#ttg.blocked<...>` text, or an alias like `#blocked`
    resolved through `aliases`). With the tensor's shape, names the elements of a few threads."""
    aliases = aliases or {}
    text = aliases.get(attr, attr) if attr.startswith("#") and "<" not in attr else attr
    layout = parse(text)
    if layout is None:
        if text in ("#ttg.shared_memory", "#smem"):
            return ["#ttg.shared_memory: the buffer lives in shared memory."]
        if text.startswith("#ttng.tensor_memory"):
            return ["#ttng.tensor_memory: the buffer lives in Blackwell tensor memory (TMEM)."]
        return []
    fn = _DESCRIBERS.get(layout.kind)
    if fn is None:
        return []
    return fn(layout.params, shape, aliases, depth)


def _blocked(p, shape, aliases, depth):
    spt, tpw, wpc, order = p["sizePerThread"], p["threadsPerWarp"], p["warpsPerCTA"], p["order"]
    fast = order[0]
    if len(spt) == 1:
        lines = [
            f"Blocked layout: each thread holds {spt[0]} neighbouring element{'s' if spt[0] > 1 else ''}"
            + (" (so they can move as one vector)" if spt[0] > 1 else "")
            + f"; the {tpw[0]} threads of a warp sit side by side, then the {wpc[0]} warps.",
            f"One pass of the block covers {spt[0] * tpw[0] * wpc[0]} elements.",
        ]
    else:
        lines = [
            f"Blocked layout: each thread holds {_dims(spt)} neighbouring elements "
            f"({spt[fast]} in a row along dimension {fast}, the fastest-varying one, so they can move as one vector); "
            f"a warp's {math.prod(tpw)} threads are arranged {_dims(tpw)} and the {math.prod(wpc)} warps {_dims(wpc)}, "
            f"threads numbered along dimension {fast} first.",
            f"One pass of the block covers a {_dims([s * t * w for s, t, w in zip(spt, tpw, wpc)])} tile.",
        ]
    if shape and len(shape) == len(spt):
        lanes = math.prod(tpw)
        tile = [s * t * w for s, t, w in zip(spt, tpw, wpc)]
        reps = [max(1, -(-n // t)) for n, t in zip(shape, tile)]
        per_thread = math.prod(spt) * math.prod(reps)
        small = [d for d, (n, t) in enumerate(zip(shape, tile)) if n < t]
        lines.append(
            f"For this {_dims(shape)} tensor the tile repeats {_dims(reps)} times: each thread owns "
            f"{per_thread} element{'s' if per_thread != 1 else ''}"
            + (
                f"; the tensor is smaller than the tile along dimension {small[0]}, so several threads hold "
                "copies of the same elements."
                if small
                else "."
            )
        )
        shown = [0, 1, lanes] if math.prod(wpc) > 1 else [0, 1]
        for t in shown:
            who = f"thread {t}" + (f" (warp {t // lanes}, lane 0)" if t == lanes else "")
            lines.append(f"{who} owns {_owned_words(blocked_owned(p, shape, t))}.")
    return lines


def _mma(p, shape, aliases, depth):
    major = p.get("versionMajor", 2)
    wpc, instr = p.get("warpsPerCTA", []), p.get("instrShape", [])
    unit = {
        2: "mma.sync (Ampere-style, one warp per instruction)",
        3: "wgmma (Hopper, a warp group of 4 warps per instruction)",
    }.get(major, f"mma version {major}")
    lines = [
        f"NVIDIA tensor-core accumulator layout for {unit}; warps are laid out {_dims(wpc)} over the tile and "
        f"each warp's share of one instruction is a {_dims(instr[:2])} piece"
        + (f" with K = {instr[2]}" if len(instr) > 2 else "")
        + ".",
        "Within each 8-row × 8-column block a lane holds 2 adjacent values: lane l owns row l/4 (and row l/4 + 8 "
        "in the next block) and columns 2·(l mod 4) and 2·(l mod 4) + 1.",
    ]
    return lines


def _amd_mfma(p, shape, aliases, depth):
    wpc, instr = p.get("warpsPerCTA", []), p.get("instrShape", [])
    lines = [
        f"AMD matrix-core (MFMA) accumulator layout, CDNA{p.get('version', '?')}: warps (waves of 64 lanes) laid out "
        f"{_dims(wpc)}, each v_mfma instruction computes a {_dims(instr[:2])} block"
        + (f" with K = {instr[2]}" if len(instr) > 2 else "")
        + "."
    ]
    if instr[:2] == [32, 32]:
        lines.append(
            "In a 32×32 block, lane l holds 16 values of column l mod 32: rows 8j + 4·(l / 32) + k for "
            "j, k in 0..3."
        )
    elif instr[:2] == [16, 16]:
        lines.append(
            "In a 16×16 block, lane l holds 4 values of column l mod 16: rows 4·(l / 16) + k for k in 0..3."
        )
    if p.get("isTransposed"):
        lines.append(
            "isTransposed: rows and columns swap, so each lane's values run along a row — better for storing "
            "the result with wide writes."
        )
    return lines


def _dot_op(p, shape, aliases, depth):
    which = {0: "A (left)", 1: "B (right)"}.get(p.get("opIdx"), "an")
    parent = str(p.get("parent", "?"))
    lines = [
        f"Dot-operand layout: operand {which} of a tt.dot, spread over the threads the way the parent layout "
        f"{parent}'s tensor-core instruction wants it"
        + (
            f"; kWidth = {p['kWidth']}: each thread holds {p['kWidth']} consecutive elements along K together."
            if "kWidth" in p
            else "."
        )
    ]
    if depth < 1:
        lines += ["Parent: " + s for s in describe(parent, None, aliases, depth + 1)[:1]]
    return lines


def _slice(p, shape, aliases, depth):
    dim, parent = p.get("dim"), str(p.get("parent", "?"))
    lines = [
        f"Slice layout: the layout {parent} with dimension {dim} taken away — what is left after reducing along "
        f"axis {dim} (tl.sum(x, axis={dim}) and friends) or before expanding it back with x[:, None]-style "
        f"indexing. Threads that differed only along dimension {dim} now hold the same values (replicated)."
    ]
    parent_layout = parse(aliases.get(parent, parent))
    if (
        shape
        and parent_layout is not None
        and parent_layout.kind == "blocked"
        and isinstance(dim, int)
        and len(shape) + 1 == len(parent_layout.params["sizePerThread"])
    ):
        p = parent_layout.params
        full = list(shape)
        full.insert(dim, 1)
        lanes = math.prod(p["threadsPerWarp"])
        for t in (0, 1, lanes):
            per_dim = blocked_owned(p, full, t)
            del per_dim[dim]
            who = f"thread {t}" + (f" (warp {t // lanes}, lane 0)" if t == lanes else "")
            lines.append(f"{who} owns {_owned_words(per_dim)}.")
    if depth < 1:
        lines += ["Parent: " + s for s in describe(parent, None, aliases, depth + 1)[:1]]
    return lines


def _linear(p, shape, aliases, depth):
    regs, lanes, warps = p.get("register", []), p.get("lane", []), p.get("warp", [])
    lines = [
        f"Linear layout: element coordinates are the XOR of basis vectors, one per set bit of the register "
        f"index ({len(regs)} bits, so {1 << len(regs)} values per thread), the lane id ({len(lanes)} bits) and "
        f"the warp id ({len(warps)} bits).",
        "Register bits step by "
        + ", ".join(map(str, regs[:6]))
        + ("..." if len(regs) > 6 else "")
        + "; lane bits by "
        + ", ".join(map(str, lanes[:6]))
        + ("..." if len(lanes) > 6 else "")
        + ".",
    ]
    if shape and regs and len(regs[0]) == len(shape):
        nlanes = 1 << len(lanes)
        for t in (0, 1):
            owned = linear_owned(p, shape, t, nlanes)
            per_dim = [sorted({c[d] for c in owned}) for d in range(len(shape))]
            lines.append(f"thread {t} owns {_owned_words(per_dim)}.")
    return lines


def _swizzled_shared(p, shape, aliases, depth):
    vec, per, mx, order = p.get("vec"), p.get("perPhase"), p.get("maxPhase"), p.get("order")
    if mx == 1:
        return [
            f"Shared-memory layout, plain (no swizzle): stored with dimension {order[0] if order else 0} contiguous."
        ]
    return [
        f"Swizzled shared-memory layout: rows stored with dimension {order[0]} contiguous, "
        f"in chunks of {vec} elements; "
        f"chunk c of row r is placed at chunk c XOR ((r / {per}) mod {mx}), so threads reading a column hit "
        "different banks instead of queuing on one."
    ]


def _nvmma_shared(p, shape, aliases, depth):
    sw, bits = p.get("swizzlingByteWidth"), p.get("elementBitWidth")
    return [
        f"Shared-memory layout for Hopper/Blackwell tensor cores and TMA: {bits}-bit elements, {sw}-byte swizzle — "
        f"within each {sw}-byte row segment the 16-byte chunks are XOR-permuted by the row number, the pattern "
        "wgmma/tcgen05 and TMA read and write directly"
        + (", transposed." if p.get("transposed") else ".")
    ]


def _tmem(p, shape, aliases, depth):
    return [
        f"Tensor-memory layout (Blackwell TMEM): a {p.get('blockM')}×{p.get('blockN')} accumulator block, rows mapped "
        f"to TMEM lanes and columns to TMEM columns (column stride {p.get('colStride', 1)})."
    ]


def _rotating_shared(p, shape, aliases, depth):
    return _swizzled_shared(p, shape, aliases, depth) + [
        "AMD rotating variant: the XOR pattern is also shifted from one block of rows to the next, spreading LDS "
        "accesses of different warps over more banks."
    ]


_DESCRIBERS = {
    "blocked": _blocked,
    "nvidia_mma": _mma,
    "amd_mfma": _amd_mfma,
    "dot_op": _dot_op,
    "slice": _slice,
    "linear": _linear,
    "swizzled_shared": _swizzled_shared,
    "nvmma_shared": _nvmma_shared,
    "tensor_memory_encoding": _tmem,
    "amd_rotating_shared": _rotating_shared,
    "amd_wmma": _amd_mfma,
    "shared_linear": _linear,
    "padded_shared": _swizzled_shared,
}

KNOWN_KINDS = frozenset(_DESCRIBERS)
