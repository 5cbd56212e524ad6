"""Launches written after the roofline took in block starts and 64-byte DRAM reads (fitted on
validation/probes/roofline_latency.py's H200 call), to check both on kernels they were not fitted on
(validation/h200_roofline_holdout.sh):

- many short programs of other kinds: a bf16 copy of 256 elements a program, a 2D add of 8 x 32 tiles, a
  softmax of 256-float rows with one warp, a mean and variance of 128-half rows;
- reads that use one 32-byte sector of a 64-byte pair: the first column of a row-major float matrix of
  256-byte rows, a permuted gather of one float per 64 bytes through int64 indices, a gather of one half per
  64 bytes.

Each launch is its own specialization with its own grid, so that irscope on a GPU keeps each and do_bench's time
(`TIMING kernel grid median_ms`) names one launch. Under ncu and irscope it runs with IRSCOPE_PROBE_TIMING=0.
"""

import os

import torch
import triton
import triton.language as tl

TIMING = os.environ.get("IRSCOPE_PROBE_TIMING", "1") == "1" and torch.cuda.is_available()
MB = 2**20


@triton.jit
def copy_bf16(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton.jit
def add_tiles(x, y, out, n_cols, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.program_id(1) * COLS + tl.arange(0, COLS)
    offs = rows[:, None] * n_cols + cols[None, :]
    tl.store(out + offs, tl.load(x + offs) + tl.load(y + offs))


@triton.jit
def softmax_short_rows(x, y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * n_cols + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


@triton.jit
def row_moments_f16(x, mean, var, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    m = tl.sum(v, axis=0) / n_cols
    d = tl.where(cols < n_cols, v - m, 0.0)
    tl.store(mean + row, m)
    tl.store(var + row, tl.sum(d * d, axis=0) / n_cols)


@triton.jit
def first_column(x, out, n_rows, row_stride, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = rows < n_rows
    tl.store(out + rows, tl.load(x + rows * row_stride, mask=mask), mask=mask)


@triton.jit
def permuted_gather(src, index, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    where = tl.load(index + offs, mask=mask, other=0)
    tl.store(dst + offs, tl.load(src + where, mask=mask), mask=mask)


@triton.jit
def gather_half_per_64(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs * 32, mask=mask), mask=mask)


def timed(name, grid, launch):
    launch()
    if TIMING:
        median = triton.testing.do_bench(launch, return_mode="median")
        print(f"TIMING {name} {grid} {median:.6f}", flush=True)


# many short programs
n = 32 * MB  # 64 MB of bf16 each way, 512 B a program
src = torch.randn(n, device="cuda", dtype=torch.bfloat16)
dst = torch.empty_like(src)
timed("copy_bf16", n // 256, lambda: copy_bf16[(n // 256,)](src, dst, n, BLOCK=256))

rows, cols = 8192, 4096  # 134 MB each of x, y and out: 1 KB of each a program
x, y = (torch.randn(rows, cols, device="cuda") for _ in range(2))
out = torch.empty_like(x)
tiles = (rows // 8, cols // 32)
timed(
    "add_tiles",
    tiles[0] * tiles[1],
    lambda: add_tiles[tiles](x, y, out, cols, ROWS=8, COLS=32),
)

rows = 131072  # 134 MB each way, 1 KB a row
x = torch.randn(rows, 256, device="cuda")
y = torch.empty_like(x)
timed(
    "softmax_short_rows",
    rows,
    lambda: softmax_short_rows[(rows,)](x, y, 256, BLOCK=256, num_warps=1),
)

rows = 262144  # 67 MB of fp16 rows of 256 B
x = torch.randn(rows, 128, device="cuda", dtype=torch.float16)
mean, var = (torch.empty(rows, device="cuda") for _ in range(2))
timed(
    "row_moments_f16",
    rows,
    lambda: row_moments_f16[(rows,)](x, mean, var, 128, BLOCK=128, num_warps=2),
)

# one sector of a 64-byte pair
rows = 2 * MB  # a 512 MB matrix of 256-byte rows: one float of each
x = torch.randn(rows, 64, device="cuda")
out = torch.empty(rows, device="cuda")
timed(
    "first_column",
    rows // 1024,
    lambda: first_column[(rows // 1024,)](x, out, rows, 64, BLOCK=1024),
)

n = 2 * MB - 512  # one float per 64 bytes of a 128 MB source, in a random order
src = torch.randn(n * 16, device="cuda")
index = torch.randperm(n, device="cuda") * 16
dst = torch.empty(n, device="cuda")
grid = triton.cdiv(n, 512)
timed("permuted_gather", grid, lambda: permuted_gather[(grid,)](src, index, dst, n, BLOCK=512))

n = 4 * MB  # one half per 64 bytes of a 268 MB source
src = torch.randn(n * 32, device="cuda", dtype=torch.float16)
dst = torch.empty(n, device="cuda", dtype=torch.float16)
timed(
    "gather_half_per_64",
    n // 2048,
    lambda: gather_half_per_64[(n // 2048,)](src, dst, n, BLOCK=2048),
)
