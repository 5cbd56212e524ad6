"""Bank conflicts in the copies that stage a matmul's tiles in shared memory, and the tile shape that fixes them.

Both tiles reach shared memory through cp.async (LDGSTS): 16 bytes a lane, 8 lanes (128 bytes) a phase.
Shared memory takes a phase's data one global 128-byte line at a time, so a phase whose lanes copy from
two lines costs two wavefronts where one would do (Nsight Compute counts the extra ones as "L1 Wavefronts
Shared Excessive", a conflict; irscope's `bank-conflict` says why). With BLOCK_K = 16 float32 a row of the
A tile is 64 bytes, and the rows lie K × 4 bytes apart in memory: every phase spans two lines. With
BLOCK_K = 32 a row is one whole line: the fix is the tile's shape, the product is the same.

Measured on an H100 (docs/validation.md, "Bank conflicts"): the BLOCK_K = 32 launch is conflict-free, every
shared access at its ideal (the A copies 1536 wavefronts for 1536 ideal, the A reads, which ptxas merges
into LDS.128, 8192 for 8192), and the same 64-byte-row copy in kernels/matmul.py (float16, BLOCK_K = 32)
took 1280 wavefronts where 768 would do, as irscope predicts. The BLOCK_K = 16 launch has not been measured
yet: irscope predicts 2304 wavefronts where 1280 would do for its A copies.
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run in Triton's interpreter on the CPU

import triton
import triton.language as tl

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@triton.jit
def matmul_fp32_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):  # K is a multiple of BLOCK_K here: no masks, to keep the lesson plain
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k + ks)[None, :])
        b = tl.load(b_ptr + (k + ks)[:, None] * stride_bk + cols[None, :])
        acc = tl.dot(a, b, acc, input_precision="ieee")  # exact float32: FMA pipes, operands from shared memory
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc)


def matmul_fp32(a: torch.Tensor, b: torch.Tensor, block_k: int) -> torch.Tensor:
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    matmul_fp32_kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
                             BLOCK_M=64, BLOCK_N=64, BLOCK_K=block_k, num_warps=4)
    return c


if __name__ == "__main__":
    torch.manual_seed(0)
    a = torch.randn(128, 128, device=DEVICE)
    b = torch.randn(128, 128, device=DEVICE)
    expected = a @ b
    conflicted = matmul_fp32(a, b, block_k=16)   # 64-byte rows of A: each copy phase spans 2 global lines
    fixed = matmul_fp32(a, b, block_k=32)        # 128-byte rows: the same product, conflict-free
    assert torch.allclose(conflicted, expected, atol=1e-3, rtol=1e-3)
    assert torch.allclose(fixed, expected, atol=1e-3, rtol=1e-3)
    print("bank_conflict: OK")
