# irscope corpus driver: fla-core 0.6.0 (MIT, github.com/fla-org/flash-linear-attention).
# chunk_gated_delta_rule (the Gated DeltaNet layer of Qwen3-Next-style models) with q/k L2-normalised
# inside the kernel, forward only, bf16. Written for this corpus after tests/ops/test_gated_delta.py
# (g in log space, beta in (0, 1)); no code copied. Needs a CUDA GPU as written.
import torch
import torch.nn.functional as F

from fla.ops.gated_delta_rule import chunk_gated_delta_rule

torch.manual_seed(0)
B, T, H, K, V = 1, 256, 4, 64, 64
dtype = torch.bfloat16
q = torch.randn(B, T, H, K, device='cuda', dtype=dtype)
k = torch.randn(B, T, H, K, device='cuda', dtype=dtype)
v = torch.randn(B, T, H, V, device='cuda', dtype=dtype)
g = F.logsigmoid(torch.randn(B, T, H, device='cuda', dtype=torch.float32))
beta = torch.rand(B, T, H, device='cuda', dtype=dtype).sigmoid()

o, final_state = chunk_gated_delta_rule(
    q, k, v, g, beta,
    output_final_state=True,
    use_qk_l2norm_in_kernel=True,
)
print(o.shape, final_state.shape)
