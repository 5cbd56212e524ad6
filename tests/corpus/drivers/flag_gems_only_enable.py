# irscope corpus driver: flag-gems 5.0.2 (Apache-2.0, github.com/flagos-ai/FlagGems).
# `flag_gems.only_enable(include=[...])` registers only the named FlagGems ops for the rest of the
# program (the "Classic usage" of only_enable's docstring in flag_gems/__init__.py), then a small
# model step calls them through torch. Written for this corpus; no code copied. Needs a CUDA GPU.
import torch

import flag_gems

flag_gems.only_enable(include=["rms_norm", "softmax", "mm"])

torch.manual_seed(0)
x = torch.randn(128, 512, device="cuda", dtype=torch.bfloat16)
weight = torch.ones(512, device="cuda", dtype=torch.bfloat16)
proj = torch.randn(512, 512, device="cuda", dtype=torch.bfloat16)

h = torch.nn.functional.rms_norm(x, (512,), weight, eps=1e-6)
scores = torch.softmax(torch.mm(h, proj), dim=-1)
print(scores.shape, scores.float().sum(dim=-1)[:4])
