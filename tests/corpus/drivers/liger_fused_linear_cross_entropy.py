# irscope corpus driver: liger-kernel 0.8.5 (BSD-2-Clause, github.com/linkedin/Liger-Kernel).
# The "Compose Your Own Model" example of the library's README (the PyPI long description of 0.8.5):
# the LM-head projection and the cross-entropy fused, so the logits are never materialised. Copied
# from that example as published, with one print added at the end.
from liger_kernel.transformers import LigerFusedLinearCrossEntropyLoss
import torch.nn as nn
import torch

model = nn.Linear(128, 256).cuda()

# fuses linear + cross entropy layers together and performs chunk-by-chunk computation to reduce memory
loss_fn = LigerFusedLinearCrossEntropyLoss()

input = torch.randn(4, 128, requires_grad=True, device="cuda")
target = torch.randint(256, (4, ), device="cuda")

loss = loss_fn(model.weight, input, target)
loss.backward()
print(loss.item())
