# irscope corpus: a test of flag-gems 5.0.2 (Apache-2.0, github.com/flagos-ai/FlagGems), written for irscope
# after the library's own tests/test_binary_pointwise_ops.py, test_reduction_ops.py and test_norm_ops.py (torch
# ops inside `flag_gems.use_gems()` against torch's own; smaller shapes; no code copied). Needs a CUDA GPU as
# written; irscope runs it on its virtual GPU.
import pytest
import torch

import flag_gems


@pytest.mark.parametrize("shape", [(1024,), (33, 65)])
def test_add(shape):
    x = torch.randn(shape, device="cuda")
    y = torch.randn(shape, device="cuda")
    with flag_gems.use_gems():
        out = torch.add(x, y, alpha=0.5)
    torch.testing.assert_close(out, x + 0.5 * y)


@pytest.mark.parametrize("shape", [(64, 256), (7, 1000)])
def test_softmax(shape):
    x = torch.randn(shape, device="cuda")
    with flag_gems.use_gems():
        out = torch.softmax(x, dim=-1)
    torch.testing.assert_close(out, torch.softmax(x.cpu(), dim=-1).to(out.device))


@pytest.mark.parametrize("shape", [(64, 256)])
def test_sum(shape):
    x = torch.randn(shape, device="cuda")
    with flag_gems.use_gems():
        out = torch.sum(x, dim=1)
    torch.testing.assert_close(out, x.sum(dim=1), atol=1e-4, rtol=1e-4)


def test_layer_norm():
    x = torch.randn(32, 512, device="cuda", dtype=torch.float16)
    w = torch.randn(512, device="cuda", dtype=torch.float16)
    b = torch.zeros(512, device="cuda", dtype=torch.float16)
    with flag_gems.use_gems():
        out = torch.nn.functional.layer_norm(x, (512,), w, b)
    ref = torch.nn.functional.layer_norm(x.float(), (512,), w.float(), b.float())
    torch.testing.assert_close(out.float(), ref, atol=2e-2, rtol=2e-2)
