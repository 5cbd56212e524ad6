# irscope corpus: a test of liger-kernel 0.8.5 (BSD-2-Clause, github.com/linkedin/Liger-Kernel), written for
# irscope after the library's own test/transformers/test_rms_norm.py, test_layer_norm.py, test_swiglu.py and
# test_cross_entropy.py (same comparisons against torch, smaller shapes; no code copied). Needs a CUDA GPU as
# written; irscope runs it on its virtual GPU: `irscope check -m pytest tests/corpus/library_tests/test_liger_kernel.py`.
import pytest
import torch

from liger_kernel.transformers import (
    LigerCrossEntropyLoss,
    LigerLayerNorm,
    LigerRMSNorm,
    LigerSwiGLUMLP,
)


class Config:
    hidden_size = 256
    intermediate_size = 512
    hidden_act = "silu"


@pytest.mark.parametrize("bs, sl, hd", [(2, 8, 256), (1, 5, 300)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rms_norm(bs, sl, hd, dtype):
    torch.manual_seed(0)
    x = torch.randn(bs, sl, hd, device="cuda", dtype=dtype, requires_grad=True)
    norm = LigerRMSNorm(hd, eps=1e-6).to("cuda", dtype)
    y = norm(x)
    y.float().sum().backward()
    ref = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
    torch.testing.assert_close(y.float(), ref, atol=5e-2, rtol=5e-2)


@pytest.mark.parametrize("bs, sl, hd", [(2, 8, 256), (1, 5, 300)])
def test_layer_norm(bs, sl, hd):
    torch.manual_seed(0)
    x = torch.randn(bs, sl, hd, device="cuda", requires_grad=True)
    liger = LigerLayerNorm(hd, eps=1e-6).cuda()
    ref = torch.nn.LayerNorm(hd, eps=1e-6).cuda()
    out = liger(x)
    out.sum().backward()
    torch.testing.assert_close(out, ref(x), atol=1e-5, rtol=1e-5)


def test_swiglu_mlp():
    torch.manual_seed(0)
    mlp = LigerSwiGLUMLP(Config()).to("cuda", torch.bfloat16)
    x = torch.randn(2, 8, Config.hidden_size, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    mlp(x).float().sum().backward()
    assert x.grad is not None


@pytest.mark.parametrize("bt, vocab", [(8, 1000), (16, 4096)])
def test_cross_entropy(bt, vocab):
    torch.manual_seed(0)
    logits = torch.randn(bt, vocab, device="cuda", requires_grad=True)
    target = torch.randint(0, vocab, (bt,), device="cuda")
    target[0] = -100
    loss = LigerCrossEntropyLoss(ignore_index=-100)(logits, target)
    loss.backward()
    ref = torch.nn.functional.cross_entropy(logits, target, ignore_index=-100)
    torch.testing.assert_close(loss, ref, atol=1e-4, rtol=1e-4)
