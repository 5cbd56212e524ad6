"""What PTX's integer and predicate instructions compute, on every thread at once (NumPy arrays).

A value is the bit pattern of a register in every lane (uint64, the high bits beyond its type's width
zero) and which lanes hold a known value. Only the arithmetic that address and predicate computations
use is here: add, mul, mad, shifts, bit fields, logic, lop3, prmt, selp, setp, cvt between integer types,
min/max, div/rem. Floating-point results, loads from memory and anything not listed are unknown: an
address that depends on one cannot be predicted, and the analysis says so instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

U64 = np.uint64


@dataclass
class Value:
    bits: np.ndarray  # uint64 per lane (bool for predicates)
    known: np.ndarray | None = None  # bool per lane; None: every lane

    def known_in(self, lanes: np.ndarray) -> bool:
        return self.known is None or bool(self.known[lanes].all())


def both(*values: Value) -> np.ndarray | None:
    masks = [v.known for v in values if v.known is not None]
    if not masks:
        return None
    out = masks[0]
    for m in masks[1:]:
        out = out & m
    return out


def width_of(kind: str) -> int | None:
    """Bits of a PTX type (`s32` -> 32); None for floats and other non-integer types."""
    if kind in ("pred",):
        return 1
    if kind[:1] in ("s", "u", "b") and kind[1:].isdigit():
        return int(kind[1:])
    return None


def mask(width: int) -> np.uint64:
    return U64((1 << width) - 1) if width < 64 else U64(0xFFFFFFFFFFFFFFFF)


def wrap(bits: np.ndarray, width: int) -> np.ndarray:
    return bits.astype(U64) & mask(width)


def signed(bits: np.ndarray, width: int) -> np.ndarray:
    """The lanes' values as int64, read as `width`-bit two's complement."""
    raw = wrap(bits, width)
    if width >= 64:
        return raw.view(np.int64)
    sign = U64(1 << (width - 1))
    return (raw ^ sign).astype(np.int64) - np.int64(1 << (width - 1))


def unsigned_or_signed(bits: np.ndarray, width: int, is_signed: bool) -> np.ndarray:
    return (
        signed(bits, width)
        if is_signed
        else wrap(bits, width).astype(np.int64)
        if width < 64
        else wrap(bits, 64)
    )


def _shift_amount(b: np.ndarray) -> np.ndarray:
    return np.minimum(wrap(b, 32), U64(64))


def _shl(a, b, width):
    amount = _shift_amount(b)
    out = np.where(amount >= width, U64(0), wrap(a, width) << np.minimum(amount, U64(63)))
    return wrap(out, width)


def _shr(a, b, width, is_signed):
    amount = _shift_amount(b)
    if is_signed:
        s = signed(a, width)
        out = s >> np.minimum(amount, U64(63)).astype(np.int64)
        return wrap(out.astype(np.int64).view(U64), width)
    out = np.where(amount >= width, U64(0), wrap(a, width) >> np.minimum(amount, U64(63)))
    return out


def _bfe(a, pos, length, width, is_signed):
    pos = wrap(pos, 8).astype(np.int64)
    length = wrap(length, 8).astype(np.int64)
    raw = wrap(a, width)
    start = np.minimum(pos, width - 1)
    field = (raw >> start.astype(U64)) & np.where(
        length >= 64,
        U64(0xFFFFFFFFFFFFFFFF),
        (U64(1) << np.minimum(length, 63).astype(U64)) - U64(1),
    )
    field = np.where((length == 0) | (pos >= width), U64(0), field)
    if not is_signed:
        return field
    msb = np.minimum(pos + length - 1, width - 1)
    sign_bit = ((raw >> np.clip(msb, 0, 63).astype(U64)) & U64(1)).astype(bool) & (length > 0)
    used = np.clip(np.minimum(length, width - pos), 0, 64)
    fill = np.where(used >= 64, U64(0), ~((U64(1) << used.astype(U64)) - U64(1)))
    return wrap(np.where(sign_bit, field | fill, field), width)


def _bfi(f, b, pos, length, width):
    pos = wrap(pos, 8).astype(np.int64)
    length = wrap(length, 8).astype(np.int64)
    field_mask = np.where(
        length >= 64,
        U64(0xFFFFFFFFFFFFFFFF),
        (U64(1) << np.minimum(length, 63).astype(U64)) - U64(1),
    )
    shifted = np.where(pos >= width, U64(0), (field_mask << np.minimum(pos, 63).astype(U64)))
    out = (wrap(b, width) & ~shifted) | (
        (wrap(f, width) << np.minimum(pos, 63).astype(U64)) & shifted
    )
    return wrap(np.where((length == 0) | (pos >= width), wrap(b, width), out), width)


def _lop3(a, b, c, lut: int):
    out = np.zeros_like(wrap(a, 32))
    full = U64(0xFFFFFFFF)
    for i in range(8):
        if lut >> i & 1:
            ta = a if i & 4 else (~a) & full
            tb = b if i & 2 else (~b) & full
            tc = c if i & 1 else (~c) & full
            out |= ta & tb & tc
    return wrap(out, 32)


def _prmt(a, b, selector):
    pool = (wrap(b, 32) << U64(32)) | wrap(a, 32)
    out = np.zeros_like(pool)
    sel = wrap(selector, 32)
    for k in range(4):
        nib = (sel >> U64(4 * k)) & U64(0xF)
        byte = (pool >> ((nib & U64(7)) * U64(8))) & U64(0xFF)
        replicate = (nib & U64(8)) != 0
        byte = np.where(replicate, np.where((byte & U64(0x80)) != 0, U64(0xFF), U64(0)), byte)
        out |= byte << U64(8 * k)
    return out


def _popc(a, width):
    x = wrap(a, width)
    count = np.zeros_like(x)
    for i in range(width):
        count += (x >> U64(i)) & U64(1)
    return count


def _clz(a, width):
    x = wrap(a, width)
    out = np.full_like(x, U64(width))
    for i in range(width):
        out = np.where(((x >> U64(i)) & U64(1)) != 0, U64(width - 1 - i), out)
    return out


def compare(op: str, a, b, width: int, is_signed: bool) -> np.ndarray:
    if op in ("lo", "ls", "hi", "hs"):
        is_signed = False
        op = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}[op]
    x, y = unsigned_or_signed(a, width, is_signed), unsigned_or_signed(b, width, is_signed)
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op]


def arithmetic(base: str, mods: list[str], kind: str, args: list[np.ndarray]) -> np.ndarray | None:
    """The result bits of one integer instruction, or None when it is not modelled."""
    width = width_of(kind)
    if width is None or width == 1:
        return None
    is_signed = kind.startswith("s")
    a = args[0] if args else None
    if base in ("add", "sub") and not {"cc", "sat"} & set(mods):
        return wrap(a + args[1] if base == "add" else a - args[1], width)
    if base in ("mul", "mad"):
        addend = args[2] if base == "mad" else U64(0)
        if "wide" in mods:
            if width > 32:
                return None
            product = unsigned_or_signed(a, width, is_signed) * unsigned_or_signed(
                args[1], width, is_signed
            )
            return wrap(product.astype(np.int64).view(U64) + addend, 2 * width)
        if "hi" in mods:
            if width > 32:
                return None
            product = unsigned_or_signed(a, width, is_signed) * unsigned_or_signed(
                args[1], width, is_signed
            )
            return wrap((product >> np.int64(width)).astype(np.int64).view(U64) + addend, width)
        return wrap(wrap(a, width) * wrap(args[1], width) + addend, width)
    if base in ("div", "rem"):
        x, y = (
            unsigned_or_signed(a, width, is_signed),
            unsigned_or_signed(args[1], width, is_signed),
        )
        safe = np.where(y == 0, 1, y)
        if is_signed:
            q = (
                np.trunc(x.astype(np.float64) / safe.astype(np.float64)).astype(np.int64)
                if width < 64
                else None
            )
            if q is None:
                return None
            out = q if base == "div" else x - q * safe
            return wrap(out.view(U64), width)
        out = x // safe if base == "div" else x % safe
        return wrap(np.asarray(out).astype(U64), width)
    if base in ("min", "max"):
        x, y = (
            unsigned_or_signed(a, width, is_signed),
            unsigned_or_signed(args[1], width, is_signed),
        )
        out = np.minimum(x, y) if base == "min" else np.maximum(x, y)
        return wrap(np.asarray(out).astype(np.int64).view(U64) if out.dtype != U64 else out, width)
    if base == "abs":
        return wrap(np.abs(signed(a, width)).view(U64), width)
    if base == "neg":
        return wrap(U64(0) - wrap(a, width), width)
    if base in ("and", "or", "xor"):
        op = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[base]
        return wrap(op(a, args[1]), width)
    if base == "not":
        return wrap(~wrap(a, width), width)
    if base == "cnot":
        return np.where(wrap(a, width) == 0, U64(1), U64(0))
    if base == "shl":
        return _shl(a, args[1], width)
    if base == "shr":
        return _shr(a, args[1], width, is_signed)
    if base == "bfe":
        return _bfe(a, args[1], args[2], width, is_signed)
    if base == "bfi":
        return _bfi(a, args[1], args[2], args[3], width)
    if base == "lop3" and width == 32:
        return None  # needs the immediate LUT: handled by the caller
    if base == "prmt" and width == 32 and len(mods) == 0:
        return _prmt(a, args[1], args[2])
    if base == "popc":
        return _popc(a, width)
    if base == "clz":
        return _clz(a, width)
    if base == "brev":
        x, out = wrap(a, width), np.zeros_like(wrap(a, width))
        for i in range(width):
            out |= ((x >> U64(i)) & U64(1)) << U64(width - 1 - i)
        return out
    return None


def lop3(a, b, c, lut: int) -> np.ndarray:
    return _lop3(wrap(a, 32), wrap(b, 32), wrap(c, 32), lut)


def funnel(direction: str, a, b, c, clamp: bool) -> np.ndarray:
    """shf.l / shf.r: the 64-bit b:a shifted by c, the high (l) or low (r) 32 bits kept."""
    pair = (wrap(b, 32) << U64(32)) | wrap(a, 32)
    amount = wrap(c, 32)
    amount = np.minimum(amount, U64(32)) if clamp else amount & U64(31)
    if direction == "l":
        return wrap((pair << amount) >> U64(32), 32)
    return wrap(pair >> amount, 32)


def convert(dst: str, src: str, bits: np.ndarray) -> np.ndarray | None:
    """cvt between integer types: sign- or zero-extend from the source width, truncate to the target."""
    dw, sw = width_of(dst), width_of(src)
    if dw is None or sw is None or dw == 1 or sw == 1:
        return None
    value = signed(bits, sw).view(U64) if src.startswith("s") else wrap(bits, sw)
    return wrap(value, dw)
