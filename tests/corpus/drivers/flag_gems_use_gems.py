# irscope corpus driver: flag-gems 5.0.2 (Apache-2.0, github.com/flagos-ai/FlagGems).
# The library's main way in: inside `flag_gems.use_gems()`, ordinary torch calls on CUDA tensors run
# FlagGems' Triton kernels instead of ATen's. Written for this corpus around the use_gems context
# manager defined in flag_gems/__init__.py (the library's scoped way in); no code copied. Needs a
# CUDA GPU as written.
import torch

import flag_gems

torch.manual_seed(0)
x = torch.randn(256, 1024, device="cuda", dtype=torch.float16)
w = torch.randn(1024, device="cuda", dtype=torch.float16)
b = torch.zeros(1024, device="cuda", dtype=torch.float16)

with flag_gems.use_gems():
    y = torch.nn.functional.layer_norm(x, (1024,), w, b)
    p = torch.softmax(y, dim=-1)
    z = torch.add(p, x, alpha=0.5)

print(z.shape, z.float().abs().mean().item())
