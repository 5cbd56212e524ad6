"""Kernels that Triton's own interpreter cannot run, run the way irscope runs launches (no GPU): libdevice
functions (every import form real kernels use), Python float arguments used as fp32 scalars, grid
dependency control. Results are compared with torch on the CPU; fp32 results must be within one fp32 ulp of
torch's fp64 value rounded to fp32, and keep their dtype (checked inside the kernel with tl.static_assert)."""

import math
import textwrap
from fractions import Fraction

import numpy as np
import pytest
import torch

from irscope.engine.recording import record_program
from irscope.engine.session import open_file

SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan]

# name: (torch reference in fp64, low, high)
UNARY = {
    "exp": (torch.exp, -80, 80),
    "exp2": (torch.exp2, -120, 120),
    "exp10": (lambda x: torch.pow(10.0, x), -30, 30),
    "expm1": (torch.expm1, -5, 5),
    "log": (torch.log, 0, 1e6),
    "log2": (torch.log2, 0, 1e6),
    "log10": (torch.log10, 0, 1e6),
    "log1p": (torch.log1p, -0.99, 100),
    "sqrt": (torch.sqrt, 0, 1e6),
    "rsqrt": (torch.rsqrt, 0, 1e6),
    "cbrt": (lambda x: torch.sign(x) * x.abs().pow(1 / 3), -1e3, 1e3),
    "sin": (torch.sin, -10, 10),
    "cos": (torch.cos, -10, 10),
    "tan": (torch.tan, -10, 10),
    "asin": (torch.asin, -1, 1),
    "acos": (torch.acos, -1, 1),
    "atan": (torch.atan, -100, 100),
    "sinh": (torch.sinh, -20, 20),
    "cosh": (torch.cosh, -20, 20),
    "tanh": (torch.tanh, -10, 10),
    "asinh": (torch.asinh, -100, 100),
    "acosh": (torch.acosh, 1, 100),
    "atanh": (torch.atanh, -1, 1),
    "erf": (torch.erf, -4, 4),
    "erfc": (torch.erfc, -4, 10),
    "erfinv": (torch.erfinv, -1, 1),
    "lgamma": (torch.lgamma, 0.01, 50),
    "normcdf": (torch.special.ndtr, -10, 10),
    "normcdfinv": (torch.special.ndtri, 0, 1),
    "floor": (torch.floor, -100, 100),
    "ceil": (torch.ceil, -100, 100),
    "trunc": (torch.trunc, -100, 100),
    "rint": (torch.round, -100, 100),
    "nearbyint": (torch.round, -100, 100),
    "round": (lambda x: torch.sign(x) * torch.floor(x.abs() + 0.5), -100, 100),
    "abs": (torch.abs, -10, 10),
    "fast_expf": (torch.exp, -80, 80),
    "fast_logf": (torch.log, 0, 1e6),
    "fast_tanf": (torch.tan, -1, 1),
    "sinpi": (lambda x: torch.where(x == x.round(), 0 * x, torch.sin(math.pi * x)), -4, 4),
    "logb": (
        lambda x: torch.where(
            x == 0, -math.inf, torch.where(x.isfinite(), torch.frexp(x)[1].double() - 1, x.abs())
        ),
        -1e6,
        1e6,
    ),
}
# name: (torch reference on fp64 (x, y), (low, high) of x, (low, high) of y)
BINARY = {
    "pow": (torch.pow, (0, 10), (-5, 5)),
    "fast_powf": (torch.pow, (0, 10), (-5, 5)),
    "atan2": (torch.atan2, (-10, 10), (-10, 10)),
    "hypot": (torch.hypot, (-1e3, 1e3), (-1e3, 1e3)),
    "fmod": (torch.fmod, (-100, 100), (-10, 10)),
    "copysign": (torch.copysign, (-10, 10), (-10, 10)),
    "fdim": (
        lambda x, y: torch.where(x.isnan() | y.isnan(), math.nan, torch.where(x > y, x - y, 0.0)),
        (-10, 10),
        (-10, 10),
    ),
    "div_rn": (torch.div, (-10, 10), (-10, 10)),
    "add_rn": (torch.add, (-10, 10), (-1e-6, 1e-6)),
    "mul_rn": (torch.mul, (-10, 10), (-10, 10)),
    "fast_dividef": (torch.div, (-10, 10), (1, 10)),
    "remainder": (
        lambda x, y: torch.tensor([_ieee_remainder(a, b) for a, b in zip(x.tolist(), y.tolist())]),
        (-100, 100),
        (-10, 10),
    ),
}
N = 200


def _ieee_remainder(x: float, y: float) -> float:
    """x - n y with n the integer nearest x / y (ties to even), from exact rationals."""
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan
    if math.isinf(y):
        return x
    n = round(Fraction(x) / Fraction(y))
    r = Fraction(x) - n * Fraction(y)
    return math.copysign(0.0, x) if r == 0 else float(r)


def _inputs(low, high, seed):
    g = torch.Generator().manual_seed(seed)
    x = low + (high - low) * torch.rand(N - len(SPECIALS), generator=g, dtype=torch.float64)
    return torch.cat([x, torch.tensor(SPECIALS, dtype=torch.float64)]).float()


def _ulps(got: torch.Tensor, want: torch.Tensor) -> int:
    """Largest distance in fp32 ulps (NaN equals NaN; a NaN against a number counts as infinitely far)."""
    g = got.view(torch.int32).long()
    w = want.view(torch.int32).long()
    order = lambda b: torch.where(b < 0, -(b & 0x7FFFFFFF), b)  # noqa: E731 - ordered like the floats
    distance = (order(g) - order(w)).abs()
    both_nan, one_nan = got.isnan() & want.isnan(), got.isnan() ^ want.isnan()
    distance = torch.where(both_nan, 0, torch.where(one_nan, 2**40, distance))
    return int(distance.max())


KERNELS = """
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def unary(x_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = FN(x)
    tl.static_assert(y.dtype == x.dtype or y.dtype == tl.int32)
    tl.store(out_ptr + offs, y, mask=m)


@triton.jit
def binary(x_ptr, y_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    z = FN(x, tl.load(y_ptr + offs, mask=m))
    tl.static_assert(z.dtype == x.dtype)
    tl.store(out_ptr + offs, z, mask=m)
"""


def _open(path, source):
    path.write_text(KERNELS + textwrap.dedent(source))
    return open_file(str(path), target="sm_90", compile_ahead=False)


@pytest.fixture(scope="module")
def math_results(tmp_path_factory):
    """Every function of UNARY and BINARY, each in a one-line @triton.jit helper passed as a constexpr, on
    random fp32 values and the special ones; the launches' own tensors hold the results."""
    folder = tmp_path_factory.mktemp("math")
    inputs = {
        name: _inputs(low, high, i) for i, (name, (_r, low, high)) in enumerate(UNARY.items())
    }
    for i, (name, (_r, xs, ys)) in enumerate(BINARY.items()):
        inputs[name] = (_inputs(*xs, 100 + i), _inputs(*ys, 200 + i).roll(1))
    torch.save(inputs, folder / "inputs.pt")
    source = (
        "import os\nINPUTS = torch.load(os.path.join(os.path.dirname(__file__), 'inputs.pt'))\n"
    )
    source += "".join(
        f"\n\n@triton.jit\ndef f_{n}(x):\n    return libdevice.{n}(x)\n" for n in UNARY
    )
    source += "".join(
        f"\n\n@triton.jit\ndef g_{n}(x, y):\n    return libdevice.{n}(x, y)\n" for n in BINARY
    )
    source += "\n\nif __name__ == '__main__':\n"
    for name in UNARY:
        source += (
            f"    x = INPUTS['{name}']; out = torch.empty_like(x)\n"
            f"    unary[(4,)](x, out, x.numel(), FN=f_{name}, BLOCK=64)\n"
        )
    for name in BINARY:
        source += (
            f"    x, y = INPUTS['{name}']; out = torch.empty_like(x)\n"
            f"    binary[(4,)](x, y, out, x.numel(), FN=g_{name}, BLOCK=64)\n"
        )
    # every program of every launch run, however busy the machine (a launch cut short leaves its output
    # unwritten: program_budget.py)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRSCOPE_INTERPRET_S", "600")
        ws = _open(folder / "math_kernels.py", source)
    assert ws.run_warning is None
    assert all(launch.programs is None for launch in ws.launches)
    return {launch.kwargs["FN"].fn.__name__[2:]: launch.args for launch in ws.launches}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_libdevice_unary_within_one_ulp_of_torch(math_results, name):
    x, got = math_results[name][:2]
    want = UNARY[name][0](x.double()).float()
    assert got.dtype == torch.float32
    assert _ulps(got, want) <= 1, (name, x[(got - want).abs().argmax()].item())


@pytest.mark.parametrize("name", sorted(BINARY))
def test_libdevice_binary_within_one_ulp_of_torch(math_results, name):
    x, y, got = math_results[name][:3]
    want = BINARY[name][0](x.double(), y.double()).float()
    assert _ulps(got, want) <= 1, name


def _fp32_nearest(q: Fraction) -> float:
    """The fp32 value nearest the rational q, ties to even."""
    c = np.float32(float(q))
    near = [np.nextafter(c, np.float32(-math.inf)), c, np.nextafter(c, np.float32(math.inf))]
    return float(
        min(near, key=lambda v: (abs(Fraction(float(v)) - q), int(np.array(v).view(np.int32)) & 1))
    )


def test_fma_rounds_once(tmp_path):
    """fma on fp32 is a * b + c rounded once. Operands chosen so that rounding twice (fp64, then fp32) would
    be wrong: a * b + c lies just above an fp32 tie, by less than an fp64 ulp."""
    a = torch.tensor([1 + 2.0**-12, 3.0, -2.5, math.inf], dtype=torch.float32)
    b = torch.tensor([1 + 2.0**-12, 7.0, 4.0, 0.0], dtype=torch.float32)
    c = torch.tensor([2.0**-60, -1e-3, 10.0, 1.0], dtype=torch.float32)
    torch.save((a, b, c), tmp_path / "abc.pt")
    ws = _open(
        tmp_path / "fma.py",
        """
        import os
        A, B, C = torch.load(os.path.join(os.path.dirname(__file__), "abc.pt"))


        @triton.jit
        def fma(a_ptr, b_ptr, c_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            r = libdevice.fma(tl.load(a_ptr + offs), tl.load(b_ptr + offs), tl.load(c_ptr + offs))
            tl.store(out_ptr + offs, r)


        if __name__ == "__main__":
            fma[(1,)](A, B, C, torch.empty_like(A), BLOCK=4)
        """,
    )
    got = ws.launches[0].args[3]
    # 1 + 2**-11 + 2**-24 is an fp32 tie (between 1 + 2**-11 and 1 + 2**-11 + 2**-23); 2**-60 breaks it upwards
    assert got[0].item() == 1 + 2.0**-11 + 2.0**-23
    operands = zip(*(t[:3].tolist() for t in (a, b, c)))
    want = [_fp32_nearest(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in operands]
    assert got[:3].tolist() == want and math.isnan(got[3].item())


BITS_SOURCE = """
import os


@triton.jit
def bits(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + 0 * BLOCK + offs, libdevice.clz(x))
    tl.store(out_ptr + 1 * BLOCK + offs, libdevice.popc(x))
    tl.store(out_ptr + 2 * BLOCK + offs, libdevice.brev(x))
    tl.store(out_ptr + 3 * BLOCK + offs, libdevice.ffs(x))
    tl.store(out_ptr + 4 * BLOCK + offs, libdevice.mulhi(x, y))
    tl.store(out_ptr + 5 * BLOCK + offs, libdevice.hadd(x, y))
    tl.store(out_ptr + 6 * BLOCK + offs, libdevice.rhadd(x, y))


if __name__ == "__main__":
    x, y = torch.load(os.path.join(os.path.dirname(__file__), "xy.pt"))
    bits[(1,)](x, y, torch.empty(7, x.numel(), dtype=x.dtype), BLOCK=x.numel())
"""


def _int_reference(values, others, width):
    mask = (1 << width) - 1

    def signed(v):
        v &= mask
        return v - (1 << width) if v >> (width - 1) else v

    return [
        [width - (v & mask).bit_length() for v in values],
        [bin(v & mask).count("1") for v in values],
        [signed(int(f"{v & mask:0{width}b}"[::-1], 2)) for v in values],
        [((v & mask) & -(v & mask)).bit_length() for v in values],
        [(v * w) >> width for v, w in zip(values, others)],
        [(v + w) >> 1 for v, w in zip(values, others)],
        [(v + w + 1) >> 1 for v, w in zip(values, others)],
    ]


@pytest.mark.parametrize("dtype,width", [(torch.int32, 32), (torch.int64, 64)])
def test_libdevice_integer_functions_are_exact(tmp_path, dtype, width):
    """clz, popc, brev, ffs, mulhi (the high half of a 2 x width-bit product), hadd and rhadd (no overflow),
    against Python's unbounded integers. libdevice has hadd/rhadd for 32 bits only."""
    top = 2 ** (width - 1)
    g = torch.Generator().manual_seed(width)
    values = [0, 1, -1, top - 1, -top, 12345, -98765, 1 << (width - 2)]
    values += torch.randint(-top, top - 1, (8,), generator=g, dtype=torch.int64).tolist()
    others = [top - 1, -top, 7, -top, top - 1, -31, 1 << 17, 3] + values[8:][::-1]
    torch.save(
        (torch.tensor(values, dtype=dtype), torch.tensor(others, dtype=dtype)), tmp_path / "xy.pt"
    )
    source = (
        BITS_SOURCE
        if width == 32
        else BITS_SOURCE.replace("    tl.store(out_ptr + 5", "    # ").replace(
            "    tl.store(out_ptr + 6", "    # "
        )
    )
    ws = _open(tmp_path / "bits.py", source)
    assert ws.run_warning is None
    got = ws.launches[0].args[2].tolist()
    want = _int_reference(values, others, width)
    assert got[:5] == want[:5]
    if width == 32:
        assert got[5:] == want[5:]


CONVERSIONS_SOURCE = """
import os


@triton.jit
def to_int(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + 0 * BLOCK + offs, libdevice.float2int_rn(x))
    tl.store(out_ptr + 1 * BLOCK + offs, libdevice.float2int_rz(x))
    tl.store(out_ptr + 2 * BLOCK + offs, libdevice.float2int_rd(x))
    tl.store(out_ptr + 3 * BLOCK + offs, libdevice.float2int_ru(x))
    tl.store(out_ptr + 4 * BLOCK + offs, libdevice.float2uint_rn(x).to(tl.int64))
    tl.store(out_ptr + 5 * BLOCK + offs, libdevice.llrint(x))
    tl.store(out_ptr + 6 * BLOCK + offs, libdevice.ilogb(x))
    tl.store(out_ptr + 7 * BLOCK + offs, libdevice.isnan(x) + 2 * libdevice.isinf(x) + 4 * libdevice.finitef(x))
    tl.store(out_ptr + 8 * BLOCK + offs, (libdevice.signbit(x) != 0).to(tl.int32))
    tl.store(out_ptr + 9 * BLOCK + offs, libdevice.float_as_int(x))


@triton.jit
def to_float(i_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, libdevice.ll2float_rn(tl.load(i_ptr + offs)))


if __name__ == "__main__":
    x, i = torch.load(os.path.join(os.path.dirname(__file__), "x.pt"))
    to_int[(1,)](x, torch.empty(10, x.numel(), dtype=torch.int64), BLOCK=x.numel())
    to_float[(1,)](i, torch.empty(i.numel()), BLOCK=i.numel())
"""


def _cvt(v: float, rounding, low: int, high: int) -> int:
    """PTX cvt from float to integer: rounded, clamped, NaN to 0."""
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return high if v > 0 else low
    return max(low, min(high, rounding(v)))


def test_libdevice_conversions_clamp_and_round_as_named(tmp_path):
    x = torch.tensor(
        [
            2.5,
            -2.5,
            0.5,
            -1.5,
            3e9,
            -3e9,
            math.inf,
            -math.inf,
            math.nan,
            -0.0,
            1e-40,
            7.0,
            123456.7,
            -0.7,
            2.0**31,
            -(2.0**31),
        ],
        dtype=torch.float32,
    )
    big = [2**24 + 1, 2**24 + 3, 2**53 + 1, 2**60 + 2**36 + 1, -(2**63), 2**63 - 1, -(2**40 + 1), 0]
    torch.save((x, torch.tensor(big, dtype=torch.int64)), tmp_path / "x.pt")
    ws = _open(tmp_path / "conversions.py", CONVERSIONS_SOURCE)
    assert ws.run_warning is None
    got = ws.launches[0].args[1].tolist()
    values = x.tolist()
    i32 = (-(2**31), 2**31 - 1)
    assert got[0] == [_cvt(v, round, *i32) for v in values]  # round(): ties to even
    assert got[1] == [_cvt(v, math.trunc, *i32) for v in values]
    assert got[2] == [_cvt(v, math.floor, *i32) for v in values]
    assert got[3] == [_cvt(v, math.ceil, *i32) for v in values]
    # Triton types float2uint's result as int32: the unsigned bits, read as signed
    assert got[4] == [
        (u := _cvt(v, round, 0, 2**32 - 1)) - (2**32 if u >= 2**31 else 0) for v in values
    ]
    assert got[5] == [_cvt(v, round, -(2**63), 2**63 - 1) for v in values]
    assert got[6] == [
        i32[0] if v == 0 or math.isnan(v) else i32[1] if math.isinf(v) else math.frexp(v)[1] - 1
        for v in values
    ]
    assert got[7] == [1 if math.isnan(v) else 2 if math.isinf(v) else 4 for v in values]
    assert got[8] == [int(math.copysign(1, v) < 0) for v in values]
    assert got[9] == x.view(torch.int32).tolist()
    assert ws.launches[1].args[1].tolist() == [_fp32_nearest(Fraction(v)) for v in big]


def test_libdevice_fp64_keeps_fp64(tmp_path):
    ws = _open(
        tmp_path / "fp64.py",
        """
        @triton.jit
        def f64(x_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)
            y = libdevice.tanh(x) + libdevice.erf(x) + libdevice.pow(x, x) + libdevice.log1p(x)
            tl.static_assert(y.dtype == tl.float64)
            tl.store(out_ptr + offs, y)


        if __name__ == "__main__":
            x = torch.linspace(0.01, 3, 64, dtype=torch.float64)
            f64[(1,)](x, torch.empty_like(x), BLOCK=64)
        """,
    )
    x, got = ws.launches[0].args[:2]
    want = torch.tanh(x) + torch.erf(x) + torch.pow(x, x) + torch.log1p(x)
    assert got.dtype == torch.float64
    assert torch.allclose(got, want, rtol=4e-16, atol=0)


IMPORT_FORMS_SOURCE = """
import triton.language.extra.cuda.libdevice as cuda_libdevice
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait
from triton.language.extra.cuda.libdevice import rsqrt as cuda_rsqrt
from triton.language.extra.libdevice import tanh
from triton.language.math import exp2 as math_exp2

try:  # the pattern kernel libraries use to pick the stub module or the CUDA one
    from triton.language.extra.libdevice import erf
except ModuleNotFoundError:
    from triton.language.extra.cuda.libdevice import erf


@triton.jit
def gelu_tanh(x):
    return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


@triton.jit
def forms(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    gdc_wait()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + 0 * n + offs, gelu_tanh(x), mask=m)
    tl.store(out_ptr + 1 * n + offs, cuda_rsqrt(tl.abs(x) + 1), mask=m)
    tl.store(out_ptr + 2 * n + offs, tl.extra.cuda.libdevice.asinh(x), mask=m)
    tl.store(out_ptr + 3 * n + offs, cuda_libdevice.atan(x), mask=m)
    tl.store(out_ptr + 4 * n + offs, erf(x), mask=m)
    tl.store(out_ptr + 5 * n + offs, math_exp2(x), mask=m)
    tl.extra.cuda.gdc_launch_dependents()
    gdc_launch_dependents()


if __name__ == "__main__":
    x = torch.linspace(-3, 3, 100)
    forms[(2,)](x, torch.empty(6, 100), 100, BLOCK=64)
"""


def test_every_libdevice_import_form_runs(tmp_path):
    """The stub module, the CUDA module, functions imported by name (also inside a @triton.jit helper), the
    attribute path from `tl`, a triton.language.math builtin imported by name, grid dependency control."""
    ws = _open(tmp_path / "forms.py", IMPORT_FORMS_SOURCE)
    assert ws.run_warning is None
    x, out = ws.launches[0].args[:2]
    want = [
        torch.nn.functional.gelu(x, approximate="tanh"),
        torch.rsqrt(x.abs() + 1),
        torch.asinh(x),
        torch.atan(x),
        torch.erf(x),
        torch.exp2(x),
    ]
    for row, expected in zip(out, want):
        torch.testing.assert_close(row, expected, rtol=2e-6, atol=1e-6)


def test_interpreter_patches_are_undone_and_the_kernel_still_compiles(tmp_path):
    import triton.language as tl
    import triton.language.extra.cuda.libdevice as cuda_libdevice
    import triton.language.extra.libdevice as stub
    import triton.runtime.interpreter as interp

    def state():
        return (
            stub.erf,
            stub.tanh,
            cuda_libdevice.erf,
            tl.math.exp2,
            tl.extra.cuda.gdc_wait,
            interp._implicit_cvt,
            interp.InterpreterBuilder.create_extern_elementwise,
        )

    before = state()
    ws = _open(tmp_path / "forms.py", IMPORT_FORMS_SOURCE)
    after = state()
    assert all(a is b for a, b in zip(before, after))
    kernel = ws.kernel("forms")
    assert kernel.jit.fn.__globals__["tanh"] is stub.tanh  # the user's module is as it was
    (comp,) = ws.compile(kernel)
    assert comp.ok, comp.failure
    ttir = comp.stage("ttir")
    for symbol in ("__nv_tanhf", "__nv_rsqrtf", "__nv_asinhf", "__nv_atanf", "__nv_erff"):
        assert symbol in ttir


SCALARS_SOURCE = """
@triton.jit
def scale(x_ptr, out_ptr, alpha, eps, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    a16 = alpha.to(tl.float16)
    tl.static_assert(a16.dtype == tl.float16)
    tl.static_assert((x * alpha).dtype == tl.float32)  # an fp32 scalar promotes fp16, as on the GPU
    y = x * alpha + eps.to(tl.float32) + n.to(tl.float32) + a16
    tl.store(out_ptr + offs, y.to(tl.float16), mask=m)


if __name__ == "__main__":
    x = torch.linspace(-2, 2, 100, dtype=torch.float16)
    scale[(2,)](x, torch.empty_like(x), 0.1, 1e-5, 100, BLOCK=64)
"""


def test_python_float_arguments_are_fp32_scalars(tmp_path):
    """`.to()` on a float argument (Triton's interpreter passes the Python float itself), and the arithmetic
    of an fp32 scalar: 0.1 is rounded to fp32 first, as the launcher does, and x * alpha is computed in fp32."""
    ws = _open(tmp_path / "scale.py", SCALARS_SOURCE)
    assert ws.run_warning is None
    x, got = ws.launches[0].args[:2]
    alpha = torch.tensor(0.1, dtype=torch.float32)
    want = x.float() * alpha + torch.tensor(1e-5, dtype=torch.float32) + 100 + alpha.half().float()
    assert torch.equal(got, want.half())
    # the stepper runs one program through the same patches
    recording = record_program(ws.launches[0], 1)
    assert recording.error is None
    assert torch.equal(recording.tensors["out_ptr"][64:100], want.half()[64:100])


def test_a_libdevice_function_without_an_equivalent_is_named(tmp_path):
    """Directed rounding has no exact NumPy form: the launch's interpreter run stops with a line naming the
    function, the launch is kept (and the file's run goes on), and it still compiles."""
    path = tmp_path / "rz.py"
    path.write_text(
        KERNELS
        + textwrap.dedent("""
        @triton.jit
        def rz(x_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)
            tl.store(out_ptr + offs, libdevice.add_rz(x, x))


        if __name__ == "__main__":
            x = torch.ones(16)
            rz[(1,)](x, torch.empty_like(x), BLOCK=16)
        """)
    )
    from irscope.engine.capture.discover import read_user_file
    from irscope.engine.capture.run import run_user_file
    from irscope.engine.triton_compat import Target

    result = run_user_file(
        read_user_file(str(path)), run_main=True, use_interpreter=True, target=Target("sm_90")
    )
    # the file's run went on past the launch
    assert len(result.launches) == 1 and result.error is None
    assert "libdevice.add_rz (__nv_fadd_rz)" in result.launches[0].interp_error
    ws = open_file(str(path), target="sm_90", compile_ahead=False)
    assert len(ws.launches) == 1 and "__nv_fadd_rz" in ws.launches[0].interp_error
    (comp,) = ws.compile_all()
    assert comp.ok and "__nv_fadd_rz" in comp.stage("ttir")


LOOP_COUNTER_SOURCE = """
import torch
import triton
import triton.language as tl


@triton.jit
def row_sums(x_ptr, out_ptr, NT: tl.constexpr, BT: tl.constexpr):
    total = tl.zeros([BT], dtype=tl.float32)
    for i_t in range(NT):                       # fla's recurrences: the counter widened with .to()
        start = i_t.to(tl.int64) * BT
        total += tl.load(x_ptr + start + tl.arange(0, BT))
    for j in tl.range(0, NT, 2):                # tl.range, with a step
        total += j.to(tl.float32)
    for k in tl.static_range(2):                # a constexpr counter stays a Python int
        tl.static_assert(k < 2)
    tl.store(out_ptr + tl.arange(0, BT), total)


if __name__ == "__main__":
    x = torch.arange(64, dtype=torch.float32)
    out = torch.empty(16)
    row_sums[(1,)](x, out, NT=4, BT=16)
"""


def test_a_loop_counter_is_an_integer_scalar_as_when_compiled(tmp_path):
    """A compiled kernel's `for i in range(n)` gives the body an i32 scalar; Triton's interpreter gave a
    Python int, and `i_t.to(tl.int64)` (fla's chunk_gated_delta_rule_fwd_kernel_h) failed there, so the
    launch had no coalescing and could not be stepped. Now it runs, with the values the GPU computes."""
    from irscope.analysis.coalescing.sectors import analyze_coalescing

    ws = _open(tmp_path / "loops.py", LOOP_COUNTER_SOURCE)
    assert ws.run_warning is None
    x, got = ws.launches[0].args[:2]
    want = x.reshape(4, 16).sum(0) + (0 + 2)
    assert torch.equal(got, want)
    recording = record_program(ws.launches[0], 0)
    assert recording.error is None
    comp = ws.compile_all()[0]
    result = analyze_coalescing(comp)
    assert result.error is None
    load = next(e for e in result.accesses if e.kind == "load")
    assert load.counts.requests > 0
