"""Attention forward (FlashAttention-style): a big kernel, to see how large real IR gets.

Each program owns BLOCK_M query rows of one (batch, head). It streams K and V in BLOCK_N tiles,
keeps a running max and sum for the softmax (the "online softmax"), and never writes the N×N
score matrix to memory. Two tl.dot calls per tile become tensor-core MMAs (wgmma on Hopper), the
K/V loads become a software pipeline (num_stages), and the LLVM IR runs to thousands of lines.
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run in Triton's interpreter on the CPU

import triton
import triton.language as tl

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@triton.jit
def _attend_tiles(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_m, qk_scale, offs_m, offs_n, lo, hi,
                  BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    """Fold the K/V tiles [lo, hi) into the running softmax state (m_i, l_i) and the output acc."""
    for start_n in range(lo, hi, BLOCK_N):
        k = tl.load(k_ptrs + start_n * stride_m)
        qk = tl.dot(q, k) * qk_scale
        if MASKED:  # the diagonal tile of causal attention: a query sees only keys at or before it
            keep = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = tl.where(keep, qk, -1.0e6)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)  # rescales what was summed so far
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs + start_n * stride_m)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attention_fwd_kernel(Q, K, V, Out, sm_scale,
                         stride_z, stride_h, stride_m, stride_d,
                         H, N_CTX,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // H) * stride_z + (off_hz % H) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :] * stride_d)
    # K is read transposed ([HEAD_DIM, BLOCK_N]) so that q @ k is a plain dot.
    k_ptrs = K + base + offs_n[None, :] * stride_m + offs_d[:, None] * stride_d
    v_ptrs = V + base + offs_n[:, None] * stride_m + offs_d[None, :] * stride_d

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)  # running row max
    l_i = tl.zeros([BLOCK_M], tl.float32)                 # running row sum of exp
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.44269504  # log2(e): exp(x) = exp2(x * log2(e))

    if CAUSAL:
        # tiles wholly below the diagonal need no mask; the diagonal tiles do
        acc, l_i, m_i = _attend_tiles(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_m, qk_scale, offs_m, offs_n,
                                      0, start_m * BLOCK_M, BLOCK_N, False)
        acc, l_i, m_i = _attend_tiles(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_m, qk_scale, offs_m, offs_n,
                                      start_m * BLOCK_M, (start_m + 1) * BLOCK_M, BLOCK_N, True)
    else:
        acc, l_i, m_i = _attend_tiles(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_m, qk_scale, offs_m, offs_n,
                                      0, N_CTX, BLOCK_N, False)

    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :] * stride_d, acc.to(Out.dtype.element_ty))


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    batch, heads, n_ctx, head_dim = q.shape
    out = torch.empty_like(q)
    block_m, block_n = 128, 64
    grid = (triton.cdiv(n_ctx, block_m), batch * heads)
    attention_fwd_kernel[grid](q, k, v, out, head_dim ** -0.5,
                               q.stride(0), q.stride(1), q.stride(2), q.stride(3),
                               heads, n_ctx,
                               HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal,
                               num_warps=8, num_stages=3)
    return out


def reference(q, k, v, causal=False):
    scores = (q.float() @ k.float().transpose(-1, -2)) * q.shape[-1] ** -0.5
    if causal:
        n = q.shape[-2]
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return (scores.softmax(-1) @ v.float()).to(q.dtype)


if __name__ == "__main__":
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 256, 128, device=DEVICE, dtype=torch.float16) for _ in range(3))
    assert torch.allclose(attention(q, k, v, causal=True), reference(q, k, v, causal=True), atol=2e-2, rtol=2e-2)
    print("attention: OK")
