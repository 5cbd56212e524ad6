"""Shared-memory bank conflicts in an exact float32 matmul, and the tile shape that removes them.

An exact float32 tl.dot (input_precision="ieee") cannot use tensor cores, which take float32 only as
tf32: Triton computes it on the FMA pipes, with both tiles staged in shared memory in a plain row-major
layout (the TTGIR's #shared is vec = 1, maxPhase = 1: Triton swizzles the buffers it converts layouts
through and the tensor-core operand tiles, not these). Each thread then reads, for every k, the A values
of its 4 rows of C from that buffer.

With BLOCK_N = 64 the dot's layout puts a warp's 32 lanes on 2 groups of rows × 16 columns
(threadsPerWarp = [2, 16]): lanes 0-15 read A[m, k] while lanes 16-31 read A[m + 4, k], four rows of
BLOCK_K float32 = 512 bytes further on, in the same bank. Every read of A takes 2 wavefronts where one
would do: a 2-way bank conflict (Nsight Compute's "L1 Conflicts Shared N-Way", irscope's `bank-conflict`).
With BLOCK_N = 128 the 32 lanes lie along N, all read the same word of A, and one wavefront broadcasts it:
the fix is the tile's shape, the data and the result are the same.
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


def matmul_fp32(a: torch.Tensor, b: torch.Tensor, block_n: int) -> torch.Tensor:
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, block_n))
    matmul_fp32_kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
                             BLOCK_M=64, BLOCK_N=block_n, BLOCK_K=32, num_warps=4)
    return c


if __name__ == "__main__":
    torch.manual_seed(0)
    a = torch.randn(128, 128, device=DEVICE)
    b = torch.randn(128, 128, device=DEVICE)
    expected = a @ b
    conflicted = matmul_fp32(a, b, block_n=64)   # 2-way bank conflicts on every read of A
    fixed = matmul_fp32(a, b, block_n=128)       # the same product, conflict-free
    assert torch.allclose(conflicted, expected, atol=1e-3, rtol=1e-3)
    assert torch.allclose(fixed, expected, atol=1e-3, rtol=1e-3)
    print("bank_conflict: OK")
