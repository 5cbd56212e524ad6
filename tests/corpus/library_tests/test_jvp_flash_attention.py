# irscope corpus: a test of jvp-flash-attention 0.14.0 (MIT with LBNL terms, github.com/amorehead/jvp-flash-attention),
# written for irscope after the library's README and tests (attention forward and backward, then its
# forward-mode JVP through torch.func.jvp; smaller shapes; no code copied). Needs a CUDA GPU as written; irscope
# runs it on its virtual GPU.
import torch

from jvp_flash_attention.jvp_attention import attention


def test_attention_forward_backward_and_jvp():
    torch.manual_seed(0)
    shape = (1, 2, 128, 64)
    q, k, v = (
        torch.randn(shape, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3)
    )
    out = attention(q, k, v)
    out.float().sum().backward()
    tangents = tuple(torch.randn_like(t) for t in (q, k, v))
    primal, tangent = torch.func.jvp(
        lambda a, b, c: attention(a, b, c), (q.detach(), k.detach(), v.detach()), tangents
    )
    assert primal.shape == shape and tangent.shape == shape
