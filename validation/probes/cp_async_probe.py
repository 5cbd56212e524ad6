"""A probe for the H100 (validation/h100_measure2.sh, PART=3): kernels/bank_conflict.py's BLOCK_K = 16 launch
measured 2432 shared wavefronts on its A-tile cp.async line where irscope's model predicts 2304 (the same in two
runs). Per instruction the first prologue copy measured conflict-free and the loop's copies conflicted in every
iteration, zero-filled ones included. These launches vary one thing each, so that the table of
validation/ncu_bank_conflicts.py shows which rule the hardware follows: K (how many loop iterations are
zero-filled), the number of stages (what the prologue copies), and where in a 128-byte line the A rows start."""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@triton.jit
def probe_kernel(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k + ks)[None, :])
        b = tl.load(b_ptr + (k + ks)[:, None] * stride_bk + cols[None, :])
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc)


def run(a: torch.Tensor, b: torch.Tensor, stages: int) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    probe_kernel[(M // 64, N // 64)](a, b, c, K, a.stride(0), b.stride(0), c.stride(0),
                                     BLOCK_M=64, BLOCK_N=64, BLOCK_K=16, num_warps=4, num_stages=stages)
    return c


if __name__ == "__main__":
    torch.manual_seed(0)
    for K, stages, shift in ((128, 3, 0), (256, 3, 0), (128, 2, 0), (128, 3, 16)):
        wide = torch.randn(128, K + 32, device=DEVICE)
        a = wide[:, shift:shift + K]          # shift 16 floats: every A row starts 64 bytes into a line
        b = torch.randn(K, 128, device=DEVICE)
        assert torch.allclose(run(a, b, stages), a @ b, atol=1e-3, rtol=1e-3)
    print("cp_async_probe: OK")
