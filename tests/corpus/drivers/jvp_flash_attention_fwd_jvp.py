# irscope corpus driver: jvp-flash-attention 0.14.0 (MIT, github.com/amorehead/jvp-flash-attention).
# Flash attention that supports forward-mode AD: a plain forward and backward, then a Jacobian-vector
# product through torch.func.jvp (the use the library exists for: consistency-model training).
# Written for this corpus after the README's usage example (jvp_attention in place of
# scaled_dot_product_attention); no code copied. Needs a CUDA GPU as written.
import torch

from jvp_flash_attention.jvp_attention import attention as jvp_attention

torch.manual_seed(0)
shape = (2, 4, 256, 64)
q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3))

out = jvp_attention(q, k, v)
out.float().sum().backward()

tangents = tuple(torch.randn_like(t) for t in (q, k, v))
primal, tangent = torch.func.jvp(lambda a, b, c: jvp_attention(a, b, c), (q.detach(), k.detach(), v.detach()), tangents)
print(out.shape, primal.shape, tangent.shape)
