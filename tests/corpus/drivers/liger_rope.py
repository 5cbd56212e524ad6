# irscope corpus driver: liger-kernel 0.8.5 (BSD-2-Clause, github.com/linkedin/Liger-Kernel).
# liger_rotary_pos_emb: rotary position embedding applied to q and k in place of the Hugging Face
# apply_rotary_pos_emb, with cos/sin built the Llama way. Written for this corpus after
# test/transformers/test_rope.py; no code copied. Needs a CUDA GPU as written.
import torch

from liger_kernel.transformers.rope import liger_rotary_pos_emb

torch.manual_seed(0)
batch, seq, heads, kv_heads, head_dim = 2, 128, 8, 2, 64
q = torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k = torch.randn(batch, kv_heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)

inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, device="cuda").float() / head_dim))
freqs = torch.outer(torch.arange(seq, device="cuda").float(), inv_freq)
emb = torch.cat((freqs, freqs), dim=-1)
cos = emb.cos()[None].to(torch.bfloat16).expand(batch, -1, -1)
sin = emb.sin()[None].to(torch.bfloat16).expand(batch, -1, -1)

q_rot, k_rot = liger_rotary_pos_emb(q, k, cos, sin)
(q_rot.float().sum() + k_rot.float().sum()).backward()
print(q_rot.shape, k_rot.shape)
