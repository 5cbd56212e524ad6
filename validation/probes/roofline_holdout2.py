"""A second set of launches the roofline model was not fitted on, written after the first holdout's call
(validation/probes/roofline_holdout.py) and before its own (validation/h200_roofline_holdout.sh, second call):
write-only fills below and past what L2 keeps dirty, a clamp whose footprint just fits in what L2 keeps, a 300 MB
bf16 scale, a three-input FMA, a log-softmax and an RMS norm over rows, an embedding-style gather of whole
rows in a permuted order, a 64 x 64 tiled transpose and a 2D grid adding a bias to rows.

Each launch is its own specialization, so irscope on a GPU has a roofline for every one; timed with
triton.testing.do_bench unless IRSCOPE_PROBE_TIMING=0 (`TIMING kernel grid median_ms`).
"""

import os

import torch
import triton
import triton.language as tl

TIMING = os.environ.get("IRSCOPE_PROBE_TIMING", "1") == "1" and torch.cuda.is_available()
MB = 2**20


@triton.jit
def zero_fill_f32(y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.zeros((BLOCK,), tl.float32), mask=offs < n)


@triton.jit
def fill_bf16(y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.full((BLOCK,), 2.0, tl.bfloat16), mask=offs < n)


@triton.jit
def clamp_f32(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y + offs, tl.minimum(tl.maximum(tl.load(x + offs, mask=mask), -1.0), 1.0), mask=mask)


@triton.jit
def scale_bf16(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(
        y + offs, (tl.load(x + offs, mask=mask).to(tl.float32) * 0.5).to(tl.bfloat16), mask=mask
    )


@triton.jit
def fma3_f32(x, y, z, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask)
    b = tl.load(y + offs, mask=mask)
    c = tl.load(z + offs, mask=mask)
    tl.store(out + offs, a * b + c, mask=mask)


@triton.jit
def log_softmax_f32(x, y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * n_cols + cols, mask=mask, other=-float("inf"))
    shifted = v - tl.max(v, axis=0)
    tl.store(y + row * n_cols + cols, shifted - tl.log(tl.sum(tl.exp(shifted), axis=0)), mask=mask)


@triton.jit
def rms_norm_f16(x, w, y, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    scale = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) / n_cols + eps)
    weight = tl.load(w + cols, mask=mask).to(tl.float32)
    tl.store(y + row * n_cols + cols, (v * scale * weight).to(tl.float16), mask=mask)


@triton.jit
def gather_rows(table, index, out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    source = tl.load(index + row)
    tl.store(out + row * n_cols + cols, tl.load(table + source * n_cols + cols))


@triton.jit
def transpose_tiles(x, y, n, TILE: tl.constexpr):
    rows = tl.program_id(0) * TILE + tl.arange(0, TILE)
    cols = tl.program_id(1) * TILE + tl.arange(0, TILE)
    tile = tl.load(x + rows[:, None] * n + cols[None, :])
    tl.store(y + cols[None, :] * n + rows[:, None], tile)


@triton.jit
def add_bias_rows(x, bias, y, n_cols, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.program_id(1) * COLS + tl.arange(0, COLS)
    offs = rows[:, None] * n_cols + cols[None, :]
    tl.store(y + offs, tl.load(x + offs) + tl.load(bias + cols)[None, :])


def timed(name, grid, launch):
    launch()
    if TIMING:
        median = triton.testing.do_bench(launch, return_mode="median")
        print(f"TIMING {name} {grid} {median:.6f}", flush=True)


zeros = torch.empty(4 * MB, device="cuda")  # 16 MB: less than L2 keeps dirty
timed("zero_fill_f32", 8192, lambda: zero_fill_f32[(8192,)](zeros, 4 * MB, BLOCK=512))

twos = torch.empty(20 * MB, device="cuda", dtype=torch.bfloat16)  # 40 MB: more than it keeps dirty
timed("fill_bf16", 10240, lambda: fill_bf16[(10240,)](twos, 20 * MB, BLOCK=2048))

n = 5 * MB + MB // 2  # 46 MB of footprint: within what L2 keeps
x = torch.randn(n, device="cuda")
y = torch.empty_like(x)
timed("clamp_f32", n // 1024, lambda: clamp_f32[(n // 1024,)](x, y, n, BLOCK=1024))

n = 75 * MB  # 300 MB of footprint
x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
y = torch.empty_like(x)
timed("scale_bf16", n // 4096, lambda: scale_bf16[(n // 4096,)](x, y, n, BLOCK=4096))

n = 8 * MB
a, b, c = (torch.randn(n, device="cuda") for _ in range(3))
out = torch.empty_like(a)
timed("fma3_f32", n // 1024, lambda: fma3_f32[(n // 1024,)](a, b, c, out, n, BLOCK=1024))

rows, cols = 4096, 4096
x = torch.randn(rows, cols, device="cuda")
y = torch.empty_like(x)
timed(
    "log_softmax_f32", rows, lambda: log_softmax_f32[(rows,)](x, y, cols, BLOCK=cols, num_warps=8)
)

rows = 8192
h = torch.randn(rows, cols, device="cuda", dtype=torch.float16)
weight = torch.randn(cols, device="cuda", dtype=torch.float16)
normed = torch.empty_like(h)
timed(
    "rms_norm_f16",
    rows,
    lambda: rms_norm_f16[(rows,)](h, weight, normed, cols, 1e-6, BLOCK=cols, num_warps=8),
)

table = torch.randn(24576, 1024, device="cuda")
index = torch.randperm(24576, device="cuda")[:16384].to(torch.int32)
picked = torch.empty(16384, 1024, device="cuda")
timed("gather_rows", 16384, lambda: gather_rows[(16384,)](table, index, picked, 1024, BLOCK=1024))

x = torch.randn(4096, 4096, device="cuda")
y = torch.empty_like(x)
timed("transpose_tiles", 4096, lambda: transpose_tiles[(64, 64)](x, y, 4096, TILE=64))

x = torch.randn(16384, 1024, device="cuda")
bias = torch.randn(1024, device="cuda")
y = torch.empty_like(x)
timed("add_bias_rows", 4096, lambda: add_bias_rows[(1024, 4)](x, bias, y, 1024, ROWS=16, COLS=256))
