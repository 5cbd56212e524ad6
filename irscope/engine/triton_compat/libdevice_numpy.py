"""libdevice's elementwise functions in NumPy, for kernels that run in Triton's interpreter.

Triton's interpreter has no libdevice: the stub module `tl.extra.libdevice` returns None and the CUDA/HIP
modules refuse (`extern_elementwise not supported`). `IMPLEMENTATIONS` maps a function's name (as in
`triton/language/extra/cuda/libdevice.py`; the HIP module uses the same names) to NumPy code that computes
the value the function is defined to return. Each takes the result's NumPy dtype and the argument arrays,
already broadcast and typed by Triton's own dispatch, and returns an array the caller casts to that dtype.

Exactness: fp32 arguments are computed in fp64 and rounded once to fp32. For +, -, *, /, sqrt that is the
correctly rounded fp32 result (fp64 has more than 2 x 24 + 2 bits, so the double rounding is innocuous);
for the transcendental functions it is within half an fp32 ulp of the true value, while libdevice itself
allows 1-4 ulps, so the interpreter and the GPU agree to libdevice's documented error. The `fast_*`
functions (approximate hardware instructions on the GPU) get the exact value. Functions left out (directed
rounding modes `_rz/_rd/_ru` of arithmetic, `jn/yn`, `mul24`, `byte_perm`, `rcp64h`) raise a clear
error in the interpreter instead of computing something close.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import numpy as np

from irscope.engine.triton_compat.libdevice_bits import BIT_IMPLEMENTATIONS, Impl, to_int


def _wide(a: np.ndarray) -> np.ndarray:
    """fp16/fp32 as fp64 (exact), so that one rounding to the result type is the only one."""
    return a.astype(np.float64) if a.dtype.kind == "f" and a.dtype.itemsize < 8 else a


def _f(op: Callable[..., np.ndarray]) -> Impl:
    def run(_out, *args):
        with np.errstate(all="ignore"):
            return op(*(_wide(a) for a in args))

    return run


def _native(op: Callable[..., np.ndarray]) -> Impl:
    """For functions whose result depends on the argument's own format (nextafter, copysign, saturate)."""

    def run(_out, *args):
        with np.errstate(all="ignore"):
            return op(*args)

    return run


def _scalar(
    fn: Callable[[float], float], on_error: Callable[[float], float]
) -> Callable[[np.ndarray], np.ndarray]:
    """A Python `math` function over an fp64 array; `on_error` gives C's value where Python raises."""

    def safe(value: float) -> float:
        try:
            return fn(value)
        except (ValueError, OverflowError):
            return on_error(value)

    vectorized = np.vectorize(safe, otypes=[np.float64])
    return lambda a: vectorized(a) if a.size else a.astype(np.float64)


def _torch_special(name: str) -> Callable[..., np.ndarray]:
    """A function NumPy lacks, from torch.special in fp64 (accurate far below an fp32 ulp)."""

    def run(*args):
        import torch

        fn = getattr(torch.special, name)
        return fn(
            *(torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)) for a in args)
        ).numpy()

    return run


def _gamma_at_pole(x: float) -> float:
    return (
        math.copysign(math.inf, x) if x == 0 else (math.nan if x < 0 or math.isnan(x) else math.inf)
    )


def _sinpi(x):
    n = np.rint(x)
    f = x - n  # exact, |f| <= 1/2
    s = np.sin(np.pi * f) * np.where(np.fmod(n, 2) != 0, -1.0, 1.0)
    return np.where(f == 0, np.copysign(0.0, x), s)


def _cospi(x):
    n = np.rint(x)
    f = np.abs(x - n)
    c = np.sin(np.pi * (0.5 - f)) * np.where(np.fmod(n, 2) != 0, -1.0, 1.0)
    return np.where(c == 0, 0.0, c)  # cospi(n + 1/2) is +0


def _round_half_away(x):
    t = np.trunc(x)
    return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0.0)


def _logb(x):
    exponent = np.frexp(x)[1].astype(np.float64) - 1
    return np.where(x == 0, -np.inf, np.where(np.isfinite(x), exponent, np.abs(x)))


def _ilogb(_out, x):
    """The exponent as an int32: INT_MIN for 0 and NaN (FP_ILOGB0, FP_ILOGBNAN on CUDA and HIP), INT_MAX for inf."""
    x = _wide(x)
    exponent = np.frexp(x)[1].astype(np.int64) - 1
    low, high = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    return np.where((x == 0) | np.isnan(x), low, np.where(np.isinf(x), high, exponent))


def _fdim(x, y):
    return np.where(np.isnan(x) | np.isnan(y), np.nan, np.where(x > y, x - y, 0.0))


def _fma(_out, a, b, c):
    """a * b + c rounded once. fp32: the product is exact in fp64 and the sum is rounded to odd (TwoSum's
    error decides the last bit), after which rounding to fp32 is correct. fp64: exact rationals."""
    if a.dtype == np.float64:
        return np.vectorize(_fma64, otypes=[np.float64])(a, b, c)
    with np.errstate(all="ignore"):
        p, c = a.astype(np.float64) * b.astype(np.float64), c.astype(np.float64)
        s = p + c
        v = s - p
        error = (p - (s - v)) + (c - v)
        even = (s.view(np.uint64) & np.uint64(1)) == 0
        toward = np.where(error > 0, np.inf, -np.inf)
        return np.where((error != 0) & even & np.isfinite(s), np.nextafter(s, toward), s)


def _fma64(a: float, b: float, c: float) -> float:
    if not all(map(math.isfinite, (a, b, c))):
        return a * b + c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        return float(exact) if exact != 0 else (a * b) + c  # keeps the sign of a zero
    except OverflowError:
        return math.copysign(math.inf, exact)


def _remainder(x, y):
    return np.vectorize(_scalar_remainder, otypes=[np.float64])(x, y) if x.size else x


def _scalar_remainder(x: float, y: float) -> float:
    try:
        return math.remainder(x, y)
    except ValueError:
        return math.nan


def _predicate(test: Callable[[np.ndarray], np.ndarray]) -> Impl:
    return lambda _out, x: test(x).astype(np.int32)


IMPLEMENTATIONS: dict[str, Impl] = {
    # rounding to integers, absolute value
    "floor": _f(np.floor),
    "ceil": _f(np.ceil),
    "trunc": _f(np.trunc),
    "rint": _f(np.rint),
    "nearbyint": _f(np.rint),
    "round": _f(_round_half_away),
    "abs": _native(np.abs),
    # powers, roots, exponentials, logarithms
    "sqrt": _f(np.sqrt),
    "sqrt_rn": _f(np.sqrt),
    "rsqrt": _f(lambda x: 1 / np.sqrt(x)),
    "rsqrt_rn": _f(lambda x: 1 / np.sqrt(x)),
    "cbrt": _f(np.cbrt),
    "rcbrt": _f(lambda x: 1 / np.cbrt(x)),
    "rcp_rn": _f(lambda x: 1 / x),
    "exp": _f(np.exp),
    "exp2": _f(np.exp2),
    "exp10": _f(lambda x: np.power(10.0, x)),
    "expm1": _f(np.expm1),
    "log": _f(np.log),
    "log2": _f(np.log2),
    "log10": _f(np.log10),
    "log1p": _f(np.log1p),
    "pow": _f(lambda x, y: np.power(x, y.astype(np.float64))),
    "logb": _f(_logb),
    "ilogb": _ilogb,
    "ldexp": _f(lambda x, n: np.ldexp(x, n.astype(np.int32))),
    "scalbn": _f(lambda x, n: np.ldexp(x, n)),
    # trigonometric and hyperbolic
    "sin": _f(np.sin),
    "cos": _f(np.cos),
    "tan": _f(np.tan),
    "asin": _f(np.arcsin),
    "acos": _f(np.arccos),
    "atan": _f(np.arctan),
    "atan2": _f(np.arctan2),
    "sinpi": _f(_sinpi),
    "cospi": _f(_cospi),
    "sinh": _f(np.sinh),
    "cosh": _f(np.cosh),
    "tanh": _f(np.tanh),
    "asinh": _f(np.arcsinh),
    "acosh": _f(np.arccosh),
    "atanh": _f(np.arctanh),
    # the hardware approximations on the GPU: here, the exact values
    "fast_expf": _f(np.exp),
    "fast_exp10f": _f(lambda x: np.power(10.0, x)),
    "fast_logf": _f(np.log),
    "fast_log2f": _f(np.log2),
    "fast_log10f": _f(np.log10),
    "fast_sinf": _f(np.sin),
    "fast_cosf": _f(np.cos),
    "fast_tanf": _f(np.tan),
    "fast_tanhf": _f(np.tanh),
    "fast_powf": _f(np.power),
    "fast_dividef": _f(np.divide),
    # arithmetic rounded to nearest (exact: see the module's docstring)
    "add_rn": _f(np.add),
    "sub_rn": _f(np.subtract),
    "mul_rn": _f(np.multiply),
    "div_rn": _f(np.divide),
    "fma": _fma,
    "fma_rn": _fma,
    "fmod": _f(np.fmod),
    "remainder": _f(_remainder),
    "fdim": _f(_fdim),
    "hypot": _f(np.hypot),
    "rhypot": _f(lambda x, y: 1 / np.hypot(x, y)),
    "norm3d": _f(lambda a, b, c: np.hypot(np.hypot(a, b), c)),
    "rnorm3d": _f(lambda a, b, c: 1 / np.hypot(np.hypot(a, b), c)),
    "norm4d": _f(lambda a, b, c, d: np.hypot(np.hypot(a, b), np.hypot(c, d))),
    "rnorm4d": _f(lambda a, b, c, d: 1 / np.hypot(np.hypot(a, b), np.hypot(c, d))),
    "copysign": _native(np.copysign),
    "nextafter": _native(np.nextafter),
    "saturatef": _native(lambda x: np.where(np.isnan(x), 0, np.clip(x, 0, 1))),
    # special functions
    "erf": _f(_scalar(math.erf, lambda x: math.nan)),
    "erfc": _f(_scalar(math.erfc, lambda x: math.nan)),
    "lgamma": _f(_scalar(math.lgamma, lambda x: math.inf)),
    "tgamma": _f(_scalar(math.gamma, _gamma_at_pole)),
    "erfinv": _f(_torch_special("erfinv")),
    "erfcx": _f(_torch_special("erfcx")),
    "erfcinv": _f(lambda x: -_torch_special("ndtri")(x / 2) / np.sqrt(2.0)),
    "normcdf": _f(_torch_special("ndtr")),
    "normcdfinv": _f(_torch_special("ndtri")),
    "j0": _f(_torch_special("bessel_j0")),
    "j1": _f(_torch_special("bessel_j1")),
    "y0": _f(_torch_special("bessel_y0")),
    "y1": _f(_torch_special("bessel_y1")),
    "cyl_bessel_i0": _f(_torch_special("i0")),
    "cyl_bessel_i1": _f(_torch_special("i1")),
    # classification (1 for true, as an int32)
    "isnan": _predicate(np.isnan),
    "isinf": _predicate(np.isinf),
    "finitef": _predicate(np.isfinite),
    "isfinited": _predicate(np.isfinite),
    "signbit": _predicate(np.signbit),
    "llrint": to_int(np.rint),
    "llround": to_int(_round_half_away),
    **BIT_IMPLEMENTATIONS,
}
