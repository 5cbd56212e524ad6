"""Launches of one wave and more whose DRAM traffic, FLOPs and time irscope predicts offline
(`analysis/roofline.py`), for the H100 to measure (issue 34, items 2-4; `validation/h100_roofline.sh`):

- `copy`, `add3`: streaming, memory-bound, at one to eight waves (16 blocks of 4 warps per SM: a wave is 2,112);
- `gather_stride`: reads one float of every 8, so each 32-byte sector it pulls carries 4 useful bytes (the
  traffic is in sectors, not in the tensor's bytes it uses);
- `row_softmax`: one row of 2,048 floats per program, reductions and exponentials;
- `fma_loop`: 256 multiply-adds per element, compute-bound on the CUDA cores;
- `tile_matmul`: a 4,096-cube fp16 matmul in 128 x 128 tiles, on the tensor cores.

On a GPU, with IRSCOPE_PROBE_TIMING unset or 1, each launch is also timed with triton.testing.do_bench and
printed as `TIMING kernel grid median_ms` (under ncu the script runs with it set to 0: ncu would profile every
launch of the benchmark).
"""

import os

import torch
import triton
import triton.language as tl

TIMING = os.environ.get("IRSCOPE_PROBE_TIMING", "1") == "1" and torch.cuda.is_available()


@triton.jit
def copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton.jit
def add3(x, y, z, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    total = tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask) + tl.load(z + offs, mask=mask)
    tl.store(out + offs, total, mask=mask)


@triton.jit
def gather_stride(src, dst, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs * STRIDE, mask=mask), mask=mask)


@triton.jit
def row_softmax(x, y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def fma_loop(x, out, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask)
    for _ in range(ITERS):
        v = v * 0.999 + 0.5
    tl.store(out + offs, v, mask=mask)


@triton.jit
def tile_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    rm = (pid // tiles_n) * BM + tl.arange(0, BM)
    rn = (pid % tiles_n) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a + rm[:, None] * K + (k + rk)[None, :]), tl.load(b + (k + rk)[:, None] * N + rn[None, :]))
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def timed(name, grid, launch):
    launch()
    if TIMING:
        median = triton.testing.do_bench(launch, return_mode="median")
        print(f"TIMING {name} {grid} {median:.6f}", flush=True)


BLOCK = 1024
for grid in (2112, 4224, 8448, 16896):
    n = grid * BLOCK
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    timed("copy", grid, lambda: copy[(grid,)](src, dst, n, BLOCK=BLOCK))

n = 8448 * BLOCK
x, y, z = (torch.randn(n, device="cuda") for _ in range(3))
out = torch.empty_like(x)
timed("add3", 8448, lambda: add3[(8448,)](x, y, z, out, n, BLOCK=BLOCK))

n = 4224 * BLOCK
src = torch.randn(n * 8, device="cuda")
dst = torch.empty(n, device="cuda")
timed("gather_stride", 4224, lambda: gather_stride[(4224,)](src, dst, n, STRIDE=8, BLOCK=BLOCK))

rows, cols = 8192, 2048
x = torch.randn(rows, cols, device="cuda")
y = torch.empty_like(x)
timed("row_softmax", rows, lambda: row_softmax[(rows,)](x, y, cols, BLOCK=cols))

n = 8448 * BLOCK
x = torch.randn(n, device="cuda")
out = torch.empty_like(x)
timed("fma_loop", 8448, lambda: fma_loop[(8448,)](x, out, n, ITERS=256, BLOCK=BLOCK))

size = 4096
a = torch.randn(size, size, device="cuda", dtype=torch.float16)
b = torch.randn(size, size, device="cuda", dtype=torch.float16)
c = torch.empty(size, size, device="cuda", dtype=torch.float16)
tiles = (size // 128) ** 2
timed(
    "tile_matmul",
    tiles,
    lambda: tile_matmul[(tiles,)](a, b, c, size, size, size, BM=128, BN=128, BK=64, num_warps=8),
)
