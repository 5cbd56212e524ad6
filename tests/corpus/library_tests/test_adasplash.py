# irscope corpus: a test of adasplash 0.2.2 (BSD-3-Clause, github.com/deep-spin/adasplash), written for irscope
# after the library's README and its entmax tests (attention forward and backward, causal and not; entmax rows
# sum to one; smaller shapes; no code copied). Needs a CUDA GPU as written; irscope runs it on its virtual GPU.
import pytest
import torch

from adasplash import adasplash, triton_entmax


@pytest.mark.parametrize("is_causal", [True, False])
def test_adasplash_forward_backward(is_causal):
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 64, 64, device="cuda", requires_grad=True) for _ in range(3))
    out = adasplash(q, k, v, alpha=1.5, is_causal=is_causal)
    out.sum().backward()
    assert out.shape == q.shape and q.grad is not None


@pytest.mark.parametrize("alpha", [1.5, 2.0])
def test_triton_entmax_rows_sum_to_one(alpha):
    torch.manual_seed(0)
    probs = triton_entmax(torch.randn(8, 256, device="cuda"), alpha=alpha)
    torch.testing.assert_close(probs.sum(-1), torch.ones(8, device="cuda"), atol=1e-3, rtol=1e-3)
