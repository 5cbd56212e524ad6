# irscope corpus driver: fla-core 0.6.0 (MIT, github.com/fla-org/flash-linear-attention).
# fused_recurrent_gla, the token-by-token form of gated linear attention used for decoding, in bf16,
# forward and backward. Written for this corpus after tests/ops/test_gla.py (same shapes convention
# [B, T, H, K], gates from logsigmoid); no code copied. Needs a CUDA GPU as written.
import torch
import torch.nn.functional as F

from fla.ops.gla import fused_recurrent_gla

torch.manual_seed(0)
B, T, H, K, V = 2, 64, 4, 64, 64
dtype = torch.bfloat16
q = torch.randn(B, T, H, K, device='cuda', dtype=dtype, requires_grad=True)
k = torch.randn(B, T, H, K, device='cuda', dtype=dtype, requires_grad=True)
v = torch.randn(B, T, H, V, device='cuda', dtype=dtype, requires_grad=True)
gk = F.logsigmoid(torch.randn(B, T, H, K, device='cuda')).to(dtype).requires_grad_()

o, _ = fused_recurrent_gla(q, k, v, gk=gk)
o.float().sum().backward()
print(o.shape, q.grad.abs().mean().item())
