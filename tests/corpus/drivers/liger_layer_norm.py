# irscope corpus driver: liger-kernel 0.8.5 (BSD-2-Clause, github.com/linkedin/Liger-Kernel).
# LigerLayerNorm against torch.nn.LayerNorm, forward and backward, fp32.
# Written for this corpus after test/transformers/test_layer_norm.py (same comparison); no code
# copied. Needs a CUDA GPU as written.
import torch

from liger_kernel.transformers import LigerLayerNorm

torch.manual_seed(0)
hidden = 1024
x = torch.randn(8, 64, hidden, device="cuda", requires_grad=True)
liger_ln = LigerLayerNorm(hidden, eps=1e-6).cuda()
torch_ln = torch.nn.LayerNorm(hidden, eps=1e-6).cuda()

out = liger_ln(x)
out.sum().backward()
print("matches torch:", torch.allclose(out, torch_ln(x), atol=1e-5, rtol=1e-5))
