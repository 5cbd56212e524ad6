"""libdevice's integer functions, conversions and bit casts in NumPy (see libdevice_numpy.py).

All exact: integer results are computed without overflow (64-bit products by 32-bit halves), float to
integer conversions round as named (`_rn` to nearest even, `_rz` toward zero, `_rd` down, `_ru` up) and
then clamp as PTX's `cvt` does (NaN gives 0), and `_rn` integer to float conversions are NumPy's casts.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

Impl = Callable[..., np.ndarray]


def _unsigned(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _bit_length(u: np.ndarray) -> np.ndarray:
    """Bits needed for each unsigned value (0 for 0); exact for 64-bit values too."""
    u = u.astype(np.uint64)
    high, low = u >> np.uint64(32), u & np.uint64(0xFFFFFFFF)
    bits = lambda v: np.frexp(v.astype(np.float64))[1].astype(np.int64)  # noqa: E731 - v < 2**32: exact
    return np.where(high > 0, 32 + bits(high), bits(low))


def _clz(_out, a):
    return a.dtype.itemsize * 8 - _bit_length(_unsigned(a))


def _popc(_out, a):
    u = _unsigned(a)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(u)
    return np.unpackbits(u.view(np.uint8).reshape(u.shape + (u.dtype.itemsize,)), axis=-1).sum(
        axis=-1
    )


_REVERSED_BYTES = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


def _brev(_out, a):
    size = a.dtype.itemsize
    as_bytes = _REVERSED_BYTES[np.ascontiguousarray(a).view(np.uint8).reshape(a.shape + (size,))][
        ..., ::-1
    ]
    return np.ascontiguousarray(as_bytes).view(a.dtype).reshape(a.shape)


def _ffs(_out, a):
    u = _unsigned(a)
    # the lowest set bit alone; position counted from 1
    return _bit_length(u & (~u + u.dtype.type(1)))


def _umulhi64(a, b):
    m = np.uint64(0xFFFFFFFF)
    s = np.uint64(32)
    a_lo, a_hi, b_lo, b_hi = a & m, a >> s, b & m, b >> s
    p0, p1, p2, p3 = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    middle = (p0 >> s) + (p1 & m) + (p2 & m)
    return p3 + (p1 >> s) + (p2 >> s) + (middle >> s)


def _mulhi(_out, a, b):
    with np.errstate(all="ignore"):
        if a.dtype.itemsize == 4:
            wide = np.int64 if a.dtype.kind == "i" else np.uint64
            return (a.astype(wide) * b.astype(wide)) >> 32
        ua, ub = _unsigned(a), _unsigned(b)
        high = _umulhi64(ua, ub)
        if a.dtype.kind == "i":  # two's complement: subtract what the signs added
            high = (
                high
                - np.where(a < 0, ub, 0).astype(np.uint64)
                - np.where(b < 0, ua, 0).astype(np.uint64)
            )
        return high.view(a.dtype)


def _halving_add(round_up: bool) -> Impl:
    def run(_out, x, y):
        carry = (x | y) if round_up else (x & y)
        return (x >> 1) + (y >> 1) + (carry & 1)  # no overflow, whatever the width

    return run


def _sad(_out, x, y, z):
    return np.abs(x.astype(np.int64) - y.astype(np.int64)) + z.astype(np.int64)


def to_int(rounding: Callable[[np.ndarray], np.ndarray], destination=np.int64) -> Impl:
    """Float to integer as PTX's cvt does it: rounded, clamped to the destination's range, NaN to 0. Triton
    types the unsigned results as signed integers of the same width: the bits are kept."""

    def run(out, x):
        info = np.iinfo(destination)
        with np.errstate(all="ignore"):
            r = rounding(x.astype(np.float64))
            too_big, too_small, nan = r >= float(info.max) + 1, r < float(info.min), np.isnan(r)
            result = np.where(too_big | too_small | nan, 0, r).astype(destination)
        result[too_big] = info.max
        result[too_small] = info.min
        return result.view(out) if np.dtype(out).itemsize == result.itemsize else result

    return run


def _bits_as(_out, a):
    return a.view(_out)


def _hiloint2double(_out, hi, lo):
    return (
        (_unsigned(hi).astype(np.uint64) << np.uint64(32)) | _unsigned(lo).astype(np.uint64)
    ).view(np.float64)


def _double_half(high: bool) -> Impl:
    def run(_out, x):
        bits = x.view(np.uint64)
        return (
            ((bits >> np.uint64(32)) if high else (bits & np.uint64(0xFFFFFFFF)))
            .astype(np.uint32)
            .view(np.int32)
        )

    return run


def _convert(_out, x):
    return x  # round to nearest even: NumPy's cast, done by the caller


BIT_IMPLEMENTATIONS: dict[str, Impl] = {
    "clz": _clz,
    "popc": _popc,
    "brev": _brev,
    "ffs": _ffs,
    "mulhi": _mulhi,
    "sad": _sad,
    "hadd": _halving_add(False),
    "rhadd": _halving_add(True),
    "int_as_float": _bits_as,
    "float_as_int": _bits_as,
    "uint_as_float": _bits_as,
    "float_as_uint": _bits_as,
    "longlong_as_double": _bits_as,
    "double_as_longlong": _bits_as,
    "hiloint2double": _hiloint2double,
    "double2hiint": _double_half(True),
    "double2loint": _double_half(False),
}
for _source in ("double", "float"):
    for _dest, _type in (
        ("int", np.int32),
        ("uint", np.uint32),
        ("ll", np.int64),
        ("ull", np.uint64),
    ):
        for _mode, _rounding in (
            ("rn", np.rint),
            ("rz", np.trunc),
            ("rd", np.floor),
            ("ru", np.ceil),
        ):
            BIT_IMPLEMENTATIONS[f"{_source}2{_dest}_{_mode}"] = to_int(_rounding, _type)
for _name in (
    "double2float_rn",
    "int2float_rn",
    "uint2float_rn",
    "ll2float_rn",
    "ull2float_rn",
    "int2double_rn",
    "uint2double_rn",
    "ll2double_rn",
    "ull2double_rn",
):
    BIT_IMPLEMENTATIONS[_name] = _convert
