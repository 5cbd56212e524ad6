# irscope corpus driver: fla-core 0.6.0 (MIT, github.com/fla-org/flash-linear-attention).
# fla.modules.RMSNorm, the fused Triton RMSNorm the library's models use, with a residual added in
# the same kernel (prenorm), forward and backward. Written for this corpus after
# tests/modules/test_layernorm.py; no code copied. Needs a CUDA GPU as written.
import torch

from fla.modules import RMSNorm

torch.manual_seed(0)
hidden = 1024
norm = RMSNorm(hidden, eps=1e-5).cuda()
x = torch.randn(4, 128, hidden, device='cuda', requires_grad=True)
residual = torch.randn_like(x)

y, new_residual = norm(x, residual=residual, prenorm=True)
(y.sum() + new_residual.sum()).backward()
print(y.shape, x.grad.abs().mean().item())
