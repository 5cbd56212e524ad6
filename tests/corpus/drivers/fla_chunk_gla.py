# irscope corpus driver: fla-core 0.6.0 (MIT, github.com/fla-org/flash-linear-attention).
# chunk_gla, gated linear attention in chunked form, with an initial state and the final state out.
# Follows the Examples section of chunk_gla's docstring in fla/ops/gla/chunk.py (the equal-length
# case), trimmed to smaller sizes (B, T, H, K, V = 2, 256, 4, 64, 64 instead of 4, 2048, 4, 512, 512).
# Needs a CUDA GPU as written.
import torch
import torch.nn.functional as F

from fla.ops.gla import chunk_gla

B, T, H, K, V = 2, 256, 4, 64, 64
q = torch.randn(B, T, H, K, device='cuda')
k = torch.randn(B, T, H, K, device='cuda')
v = torch.randn(B, T, H, V, device='cuda')
g = F.logsigmoid(torch.randn(B, T, H, K, device='cuda'))
h0 = torch.randn(B, H, K, V, device='cuda')
o, ht = chunk_gla(
    q, k, v, g,
    initial_state=h0,
    output_final_state=True
)
print(o.shape, ht.shape)
