# irscope corpus driver: liger-kernel 0.8.5 (BSD-2-Clause, github.com/linkedin/Liger-Kernel).
# LigerCrossEntropyLoss over a vocabulary-sized logit matrix with ignored positions (-100), compared
# with torch. Written for this corpus after test/transformers/test_cross_entropy.py; no code copied.
# Needs a CUDA GPU as written.
import torch

from liger_kernel.transformers import LigerCrossEntropyLoss

torch.manual_seed(0)
tokens, vocab = 256, 32000
logits = torch.randn(tokens, vocab, device="cuda", requires_grad=True)
target = torch.randint(0, vocab, (tokens,), device="cuda")
target[::7] = -100

loss = LigerCrossEntropyLoss(ignore_index=-100)(logits, target)
ref = torch.nn.functional.cross_entropy(logits.detach(), target, ignore_index=-100)
loss.backward()
print(f"liger {loss.item():.6f}  torch {ref.item():.6f}")
