"""What the roofline's time leaves out (issue 34): memory-bound launches that run slower than their bytes over the
bandwidth. Two launches of the H100 timing probe and the H200 holdout do (a gather of one float per 32-byte
sector, 1.26-1.31x the estimate; a row sum of 32,768 programs of 2 KB each, 1.27x), and this probe was written
before any model of them, to find what governs them (validation/h200_roofline_holdout.sh, call `latency`):

- copies of 64 MB whose programs move 0.5 KB to 16 KB each (the bytes a program has in flight, and the number
  of programs, over a fixed footprint);
- row sums of 134 MB whose rows are 0.5 KB to 32 KB, and 2 KB rows with 1, 2 and 8 warps (bytes in flight per
  SM: blocks per SM times a row);
- gathers of every STRIDE-th float, STRIDE 1 to 32, of about 134 MB of sectors each, and of every 8th with 256
  and 4,096 floats a program (one float per sector from STRIDE 8 on: as many sectors, a quarter to an eighth of
  the requests' useful bytes).

Each launch is its own specialization (a block size, a stride or a warp count), so that irscope on a GPU, which
keeps the first launch of each, has a roofline for every one, and each has its own grid, so that do_bench's
time (`TIMING kernel grid median_ms`) names one launch. Under ncu and irscope it runs with
IRSCOPE_PROBE_TIMING=0.
"""

import os

import torch
import triton
import triton.language as tl

TIMING = os.environ.get("IRSCOPE_PROBE_TIMING", "1") == "1" and torch.cuda.is_available()
MB = 2**20


@triton.jit
def copy_blocks(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton.jit
def row_total(x, out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    values = tl.load(x + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out + row, tl.sum(values, axis=0))


@triton.jit
def strided_gather(src, dst, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs * STRIDE, mask=mask), mask=mask)


def timed(name, grid, launch):
    launch()
    if TIMING:
        median = triton.testing.do_bench(launch, return_mode="median")
        print(f"TIMING {name} {grid} {median:.6f}", flush=True)


n = 16 * MB  # 64 MB read, 64 MB written
src = torch.randn(n, device="cuda")
dst = torch.empty_like(src)
for block in (128, 256, 512, 1024, 4096):
    grid = n // block
    timed("copy_blocks", grid, lambda: copy_blocks[(grid,)](src, dst, n, BLOCK=block))

for cols in (128, 512, 2048, 8192):
    rows = 32 * MB // cols  # 134 MB of float32
    x = torch.randn(rows, cols, device="cuda")
    sums = torch.empty(rows, device="cuda")
    timed("row_total", rows, lambda: row_total[(rows,)](x, sums, cols, BLOCK=cols))

for warps, rows in ((1, 65535), (2, 65534), (8, 65533)):
    x = torch.randn(rows, 512, device="cuda")
    sums = torch.empty(rows, device="cuda")
    timed(
        "row_total",
        rows,
        lambda: row_total[(rows,)](x, sums, 512, BLOCK=512, num_warps=warps),
    )

for stride in (1, 2, 4, 8, 16, 32):
    # about 134 MB of sectors read: every float's sector up to STRIDE 8, one sector a float from there on
    n = 32 * MB // min(stride, 8) - 1024 * (stride // 16)
    src = torch.randn(n * stride, device="cuda")
    dst = torch.empty(n, device="cuda")
    grid = triton.cdiv(n, 1024)
    timed(
        "strided_gather",
        grid,
        lambda: strided_gather[(grid,)](src, dst, n, STRIDE=stride, BLOCK=1024),
    )

for block in (256, 4096):
    n = 4 * MB - block
    src = torch.randn(n * 8, device="cuda")
    dst = torch.empty(n, device="cuda")
    grid = triton.cdiv(n, block)
    timed(
        "strided_gather",
        grid,
        lambda: strided_gather[(grid,)](src, dst, n, STRIDE=8, BLOCK=block),
    )
