# irscope corpus driver: liger-kernel 0.8.5 (BSD-2-Clause, github.com/linkedin/Liger-Kernel).
# LigerRMSNorm on a Llama-sized hidden state, forward and backward, in bf16 as in training.
# Written for this corpus the way the library's README and test/transformers/test_rms_norm.py use the
# module (Llama casting mode, bf16); no code copied. Needs a CUDA GPU as written.
import torch

from liger_kernel.transformers import LigerRMSNorm

torch.manual_seed(0)
hidden = 2048
norm = LigerRMSNorm(hidden, eps=1e-6).to("cuda", torch.bfloat16)
x = torch.randn(2, 128, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)

y = norm(x)
y.float().pow(2).mean().backward()

ref = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
print("max |y - ref|:", (y.float() - ref).abs().max().item())
print("grad norm:", x.grad.float().norm().item())
