# irscope corpus driver: adasplash 0.2.2 (BSD-3-Clause, github.com/deep-spin/adasplash).
# AdaSplash sparse (entmax) attention: the README's default dispatcher (causal alpha=1.5 routes to
# AdaSplash-2) and its v1 path (alpha != 1.5, non-causal), forward and backward, plus the standalone
# Triton entmax. Written for this corpus after the README's "Default Dispatcher" example; no code copied.
# Needs a CUDA GPU as written.
import torch

from adasplash import adasplash, triton_entmax

torch.manual_seed(0)
q, k, v = (torch.randn(1, 4, 128, 64, device="cuda", requires_grad=True) for _ in range(3))

out_v2 = adasplash(q, k, v, is_causal=True)
out_v1 = adasplash(q, k, v, alpha=1.333, is_causal=False)
(out_v2.sum() + out_v1.sum()).backward()

probs = triton_entmax(torch.randn(8, 256, device="cuda"), alpha=1.5)
print(out_v2.shape, out_v1.shape, probs.sum(-1))
