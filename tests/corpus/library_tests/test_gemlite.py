# irscope corpus: a test of gemlite 0.6.0.post2 (Apache-2.0, github.com/dropbox/gemlite), written for irscope
# after the library's own tests/test_gemlitelineartriton.py (a quantized linear layer against torch's, for a
# GEMV batch and a GEMM batch; smaller shapes; no code copied). Needs a CUDA GPU as written; irscope runs it on
# its virtual GPU.
import pytest
import torch

from gemlite.helper import A16W8_INT8


@pytest.mark.parametrize("batch", [1, 64])
def test_a16w8_linear(batch):
    torch.manual_seed(0)
    layer = torch.nn.Linear(512, 1024, bias=True, dtype=torch.float16, device="cuda:0")
    qlinear = A16W8_INT8(device="cuda:0", dtype=torch.float16).from_linear(layer, del_orig=False)
    x = torch.randn(batch, 512, dtype=torch.float16, device="cuda:0")
    out = qlinear(x)
    assert out.shape == (batch, 1024)
    assert (out.float() - layer(x).float()).abs().max().item() < 1.0
