"""Memory-bound launches of one wave and more, written after the roofline model's two measured constants were
fitted (validation/roofline_calibration.py, on the H100's grid and timing probes), to check the model on
kernels and sizes it was not fitted on (validation/h200_roofline_holdout.sh): elementwise kernels of three
element types, footprints from 8 MB to 200 MB (below, between and past what L2 keeps and its size), a
write-only fill, a read-only row sum, a copy of every other row's half (strided rows), a gather of every
second float, and a bf16 row softmax.

Each launch is its own specialization (its own kernel or block size), so that irscope on a GPU, which keeps the
first launch of each specialization, has a roofline for every one. On a GPU, with IRSCOPE_PROBE_TIMING unset or
1, each launch is also timed with triton.testing.do_bench (`TIMING kernel grid median_ms`); under ncu and
irscope it runs with it set to 0.
"""

import os

import torch
import triton
import triton.language as tl

TIMING = os.environ.get("IRSCOPE_PROBE_TIMING", "1") == "1" and torch.cuda.is_available()
MB = 2**20


@triton.jit
def scale_f32(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=mask) * 3.0, mask=mask)


@triton.jit
def relu_f32(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y + offs, tl.maximum(tl.load(x + offs, mask=mask), 0.0), mask=mask)


@triton.jit
def axpy_f16(x, y, z, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask)
    b = tl.load(y + offs, mask=mask)
    tl.store(z + offs, (a * alpha + b).to(tl.float16), mask=mask)


@triton.jit
def fill_f32(y, value, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.full((BLOCK,), value, tl.float32), mask=offs < n)


@triton.jit
def row_sum_f32(x, out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out + row, tl.sum(v, axis=0))


@triton.jit
def copy_half_rows(x, y, x_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    tl.store(y + row * n_cols + cols, tl.load(x + row * x_row_stride + cols, mask=mask), mask=mask)


@triton.jit
def gather_every_second(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs * 2, mask=mask), mask=mask)


@triton.jit
def softmax_bf16(x, y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * n_cols + cols, (e / tl.sum(e, axis=0)).to(tl.bfloat16), mask=mask)


def timed(name, grid, launch):
    launch()
    if TIMING:
        median = triton.testing.do_bench(launch, return_mode="median")
        print(f"TIMING {name} {grid} {median:.6f}", flush=True)


def elementwise(kernel, n, block, *extra, dtype=torch.float32):
    x = torch.randn(n, device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    grid = triton.cdiv(n, block)
    timed(kernel.fn.__name__, grid, lambda: kernel[(grid,)](x, y, *extra, n, BLOCK=block))


# footprints 25 MB, 54 MB (between what L2 keeps of a launch and L2's size on the H200) and 201 MB
elementwise(scale_f32, 3 * MB, 512)
elementwise(scale_f32, 6 * MB + MB // 2, 1024)
elementwise(scale_f32, 24 * MB, 2048)
elementwise(relu_f32, MB + 4096, 256)  # 8 MB, two waves

n = 32 * MB
x, y = (torch.randn(n, device="cuda", dtype=torch.float16) for _ in range(2))
z = torch.empty_like(x)
timed("axpy_f16", n // 4096, lambda: axpy_f16[(n // 4096,)](x, y, z, 0.5, n, BLOCK=4096))

filled = torch.empty(32 * MB, device="cuda")
timed(
    "fill_f32",
    32 * MB // 1024,
    lambda: fill_f32[(32 * MB // 1024,)](filled, 1.5, 32 * MB, BLOCK=1024),
)

rows, cols = 32768, 512
x = torch.randn(rows, cols, device="cuda")
sums = torch.empty(rows, device="cuda")
timed("row_sum_f32", rows, lambda: row_sum_f32[(rows,)](x, sums, cols, BLOCK=cols))

rows = 8192
wide = torch.randn(rows, 2048, device="cuda")
half = torch.empty(rows, 1024, device="cuda")
timed("copy_half_rows", rows, lambda: copy_half_rows[(rows,)](wide, half, 2048, 1024, BLOCK=1024))

n = 8 * MB
src = torch.randn(2 * n, device="cuda")
dst = torch.empty(n, device="cuda")
timed(
    "gather_every_second",
    n // 1024,
    lambda: gather_every_second[(n // 1024,)](src, dst, n, BLOCK=1024),
)

rows, cols = 16384, 2048
x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
y = torch.empty_like(x)
timed("softmax_bf16", rows, lambda: softmax_bf16[(rows,)](x, y, cols, BLOCK=cols))
