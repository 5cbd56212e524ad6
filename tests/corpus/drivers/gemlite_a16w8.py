# irscope corpus driver: gemlite 0.6.0.post2 (Apache-2.0, github.com/dropbox/gemlite, formerly mobiusml/gemlite).
# Weight-only 8-bit quantization of an fp16 nn.Linear with the README's helper (A16W8_INT8().from_linear),
# then a decode-sized (GEMV) and a prefill-sized (GEMM) forward: gemlite picks the kernel family from the
# batch size and autotunes each. Written for this corpus after the README's "Helper Functions"; no code
# copied. Needs a CUDA GPU as written.
import torch

from gemlite.helper import A16W8_INT8

torch.manual_seed(0)
device, dtype = "cuda:0", torch.float16
layer = torch.nn.Linear(1024, 2048, bias=True, dtype=dtype, device=device)
qlinear = A16W8_INT8(device=device, dtype=dtype).from_linear(layer, del_orig=False)

for batch in (1, 64):
    x = torch.randn(batch, 1024, dtype=dtype, device=device)
    out = qlinear(x)
    ref = layer(x)
    print(batch, tuple(out.shape), (out - ref).abs().max().item())
