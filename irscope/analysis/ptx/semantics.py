"""One PTX instruction's results, from its operands' values (ptx_exec.Machine calls `compute`).

Returns one Value per destination register, or None where the instruction is not modelled (its
destinations become unknown). Waits on an mbarrier are taken as complete (the wait loop exits): what
they wait for is data, never an address.
"""

from __future__ import annotations

import numpy as np

from irscope.analysis.ptx.values import (
    U64,
    Value,
    arithmetic,
    both,
    compare,
    convert,
    funnel,
    lop3,
    width_of,
    wrap,
)


def compute(m, state, ins, dests: list[str]) -> list[Value | None] | None:
    parts = ins.parts
    head = parts[0]
    ops = ins.operands
    if not dests:
        return None
    if head == "mov":
        return _mov(m, state, ins)
    if head == "ld" and "param" in parts and len(ops) == 2:
        symbol = ops[1].strip()[1:-1].strip()
        name, _, offset = symbol.partition("+")
        value = m.params.get(name.strip())
        if value is None or offset.strip():
            return None
        width = width_of(parts[-1]) or 64
        return [m.const(value & ((1 << width) - 1))]
    if head == "cvta":
        return [m.value(state, ops[1])]
    if head == "cvt":
        if len(parts) < 3:
            return None
        src = m.value(state, ops[1])
        bits = convert(parts[-2], parts[-1], src.bits)
        return [None if bits is None else Value(bits, src.known)]
    if head == "setp":
        return _setp(m, state, ins, dests)
    if head == "selp":
        a, b, p = (m.value(state, o) for o in ops[1:4])
        return [Value(np.where(p.bits.astype(bool), a.bits, b.bits), both(a, b, p))]
    if parts[-1] == "pred" and head in ("and", "or", "xor", "not"):
        args = [m.value(state, o) for o in ops[1:]]
        bits = [a.bits.astype(bool) for a in args]
        out = {
            "and": lambda: bits[0] & bits[1],
            "or": lambda: bits[0] | bits[1],
            "xor": lambda: bits[0] ^ bits[1],
            "not": lambda: ~bits[0],
        }[head]()
        return [Value(out, both(*args))]
    if head == "lop3":
        args = [m.value(state, o) for o in ops[1:4]]
        return [Value(lop3(*(a.bits for a in args), int(ops[4], 0)), both(*args))]
    if head == "shf":
        args = [m.value(state, o) for o in ops[1:4]]
        return [Value(funnel(parts[1], *(a.bits for a in args), "clamp" in parts), both(*args))]
    if head == "elect":
        leader, elected = _elected(state)
        out = [Value(leader), Value(elected)]
        return out[-len(dests) :] if "|" in ops[0] else out[:1]
    if head == "mbarrier" and ("try_wait" in parts or "test_wait" in parts):
        return [Value(np.ones(m.lanes, dtype=bool))]
    if head == "shfl" and "sync" in parts:
        return _shuffle(m, state, ins, dests)
    if head == "activemask":
        return [Value(_ballot(state.active, state.active))]
    if head == "vote":
        p = m.value(state, ops[1])
        on = p.bits.astype(bool) & state.active
        if "ballot" in parts:
            return [Value(_ballot(on, state.active), p.known)]
        warp_any = on.reshape(-1, 32).any(axis=1)
        warp_all = (on | ~state.active).reshape(-1, 32).all(axis=1)
        result = warp_any if "any" in parts else warp_all if "all" in parts else None
        return None if result is None else [Value(np.repeat(result, 32), p.known)]
    kind = parts[-1]
    args = [m.value(state, o) for o in ops[1:]]
    bits = arithmetic(head, parts[1:-1], kind, [a.bits for a in args])
    return None if bits is None else [Value(bits, both(*args))]


def _mov(m, state, ins) -> list[Value | None] | None:
    dst, src = ins.operands[0].strip(), ins.operands[1].strip()
    kind = ins.parts[-1]
    if dst.startswith("{"):  # unpack: mov.b64 {lo, hi}, %rd
        names = [n.strip() for n in dst[1:-1].split(",")]
        value = m.value(state, src)
        size = 64 // len(names)
        return [
            Value(wrap(value.bits >> U64(size * i), size), value.known) for i in range(len(names))
        ]
    if src.startswith("{"):  # pack: mov.b64 %rd, {lo, hi}
        parts = [m.value(state, n) for n in src[1:-1].split(",")]
        size = (width_of(kind) or 64) // len(parts)
        bits = np.zeros(m.lanes, dtype=U64)
        for i, p in enumerate(parts):
            bits |= wrap(p.bits, size) << U64(size * i)
        return [Value(bits, both(*parts))]
    value = m.value(state, src)
    if kind == "pred":
        return [Value(value.bits.astype(bool), value.known)]
    width = width_of(kind)
    return [Value(wrap(value.bits, width) if width else value.bits, value.known)]


def _setp(m, state, ins, dests) -> list[Value | None] | None:
    parts = ins.parts
    kind = parts[-1]
    width = width_of(kind)
    if width is None or len(parts) < 3:
        return None
    a, b = m.value(state, ins.operands[1]), m.value(state, ins.operands[2])
    result = compare(parts[1], a.bits, b.bits, width, kind.startswith("s"))
    known = both(a, b)
    combine = parts[2] if len(parts) > 3 and parts[2] in ("and", "or", "xor") else None
    other = None
    if combine:
        c = m.value(state, ins.operands[3])
        cb = c.bits.astype(bool)
        known = both(a, b, c)
        op = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[combine]
        first, other = op(result, cb), op(~result, cb)
    else:
        first, other = result, ~result
    out = [Value(first, known)]
    if len(dests) > 1:
        out.append(Value(other, known))
    return out


def _shuffle(m, state, ins, dests) -> list[Value | None] | None:
    """shfl.sync over whole warps (segment mask 0): each lane takes `a` from its source lane."""
    mode = next((p for p in ins.parts if p in ("idx", "up", "down", "bfly")), None)
    a, b, c = (m.value(state, o) for o in ins.operands[1:4])
    if mode is None or not (b.known_in(state.active) and c.known_in(state.active)):
        return None
    packed = wrap(c.bits, 32).astype(np.int64)
    if ((packed >> 8) & 31).any():
        return None  # sub-warp segments: not modelled
    lane = np.tile(np.arange(32), m.lanes // 32)
    top, step = packed & 31, wrap(b.bits, 32).astype(np.int64)
    source = {"idx": step & 31, "up": lane - step, "down": lane + step, "bfly": lane ^ step}[mode]
    valid = source >= top if mode == "up" else source <= top
    source = np.where(valid, source, lane)
    rows = np.repeat(np.arange(m.lanes // 32) * 32, 32)
    taken = rows + np.clip(source, 0, 31)
    value = Value(a.bits[taken], None if a.known is None else a.known[taken])
    out = [value, Value(valid)]
    return out[: len(dests)]


def _ballot(on: np.ndarray, active: np.ndarray) -> np.ndarray:
    weights = U64(1) << np.arange(32, dtype=U64)
    per_warp = (on.reshape(-1, 32).astype(U64) * weights).sum(axis=1, dtype=U64)
    return np.repeat(per_warp, 32)


def _elected(state) -> tuple[np.ndarray, np.ndarray]:
    """elect.sync: the lowest active lane of each warp, and the predicate that is true on it alone."""
    active = state.active.reshape(-1, 32)
    first = np.argmax(active, axis=1)
    rows = np.arange(active.shape[0])
    chosen = np.zeros_like(active)
    chosen[rows, first] = active[rows, first]
    return np.repeat(first.astype(U64), 32), chosen.reshape(-1)
