# irscope corpus driver: liger-kernel 0.8.5 (BSD-2-Clause, github.com/linkedin/Liger-Kernel).
# LigerSwiGLUMLP, the fused SiLU(gate) * up of a Llama MLP block, forward and backward in bf16.
# Written for this corpus after test/transformers/test_swiglu.py, with a plain namespace standing in
# for transformers' LlamaConfig (only hidden_size, intermediate_size and hidden_act are read); no code
# copied. Needs a CUDA GPU as written.
from types import SimpleNamespace

import torch

from liger_kernel.transformers import LigerSwiGLUMLP

torch.manual_seed(0)
config = SimpleNamespace(hidden_size=1024, intermediate_size=2816, hidden_act="silu")
mlp = LigerSwiGLUMLP(config).to("cuda", torch.bfloat16)
x = torch.randn(2, 64, config.hidden_size, device="cuda", dtype=torch.bfloat16, requires_grad=True)

y = mlp(x)
y.sum().backward()
print(y.shape, x.grad.abs().mean().item())
