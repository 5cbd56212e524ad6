"""Grids around the wave sizes of three kernels that an SM holds 16, 32 and 2 blocks of on an H100 (132 SMs):
what Nsight Compute's Launch Statistics say per launch (waves per SM, the tail-effect and small-grid rules)
against irscope's launch statistics, offline (validation/ncu_launch_stats.py; issue 34).

- `copy` with 4 warps (16 blocks per SM: a wave of 2,112 blocks) and with 1 warp (32 blocks per SM, the
  block limit: 4,224), at grids below, at and just past one and two waves, and at the grids the issue names
  (66, 2,112, 2,400, 8,448);
- `matmul_tile`, a 128 x 128 tile with K steps of 64 in 3 stages (96 KB of shared memory: 2 blocks per SM, a
  wave of 264), at tile counts around one and two waves.
Every launch is checked against torch, so a launch that did not run as asked shows.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton.jit
def matmul_tile(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    rm = (pid // tiles_n) * BM + tl.arange(0, BM)
    rn = (pid % tiles_n) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


COPY_BLOCK = 1024
for warps, grids in (
    (4, (1, 66, 131, 132, 133, 264, 1000, 2111, 2112, 2113, 2400, 4224, 4300, 8448, 9000, 10561)),
    (1, (100, 4223, 4224, 4225, 5000, 8449)),
):
    for grid in grids:
        n = grid * COPY_BLOCK - COPY_BLOCK // 2  # a masked last block
        src = torch.randn(n, device="cuda")
        dst = torch.empty_like(src)
        copy[(grid,)](src, dst, n, BLOCK=COPY_BLOCK, num_warps=warps)
        assert torch.equal(src, dst), (warps, grid)

BM = BN = 128
for tiles_m, tiles_n in ((11, 12), (12, 22), (5, 53), (10, 30), (24, 22), (20, 30)):  # 132 .. 600 tiles
    M, N, K = tiles_m * BM, tiles_n * BN, 256
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    matmul_tile[(tiles_m * tiles_n,)](a, b, c, M, N, K, BM=BM, BN=BN, BK=64, num_warps=8, num_stages=3)
    torch.testing.assert_close(c, (a @ b), atol=0.5, rtol=0.05)
print("grid_waves: every launch checked")
