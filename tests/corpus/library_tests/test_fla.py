# irscope corpus: a test of fla-core 0.6.0 (MIT, github.com/fla-org/flash-linear-attention), written for irscope
# after the library's own tests/ops/test_gla.py and tests/modules/test_layernorm.py (the chunked kernel against
# the recurrent one, RMSNorm against torch; smaller shapes; no code copied). Needs a CUDA GPU as written; irscope
# runs it on its virtual GPU.
import pytest
import torch
import torch.nn.functional as F

from fla.modules import RMSNorm
from fla.ops.gla import chunk_gla, fused_recurrent_gla


@pytest.mark.parametrize("B, T, H, D", [(1, 64, 2, 32)])
def test_chunk_gla_matches_fused_recurrent(B, T, H, D):
    torch.manual_seed(0)
    q = torch.randn(B, T, H, D, device="cuda")
    k = torch.randn(B, T, H, D, device="cuda")
    v = torch.randn(B, T, H, D, device="cuda")
    g = F.logsigmoid(torch.randn(B, T, H, D, device="cuda"))
    ref, _ = fused_recurrent_gla(q, k, v, g)
    out, _ = chunk_gla(q, k, v, g)
    torch.testing.assert_close(out, ref, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("N, D", [(16, 256), (10, 100)])
def test_rms_norm(N, D):
    torch.manual_seed(0)
    x = torch.randn(N, D, device="cuda", requires_grad=True)
    norm = RMSNorm(D, eps=1e-6).cuda()
    y = norm(x)
    y.sum().backward()
    ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    torch.testing.assert_close(y, ref, atol=1e-4, rtol=1e-4)
