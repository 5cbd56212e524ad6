# irscope corpus driver: mingru-scans 0.2.0 (MIT, github.com/chris-santiago/minGRU).
# A stack of minGRU blocks (a parallel-scan recurrent model) built on the CPU and moved to the GPU with
# nn.Module.to("cuda"), with the Triton scan backend forced (MINGRU_SCAN=triton, as the README documents)
# so that the "givens" mixer's matrix scans run the library's fused kernels; forward and backward.
# Written for this corpus after the README's MinGRUStack examples; no code copied. Needs a CUDA GPU as
# written.
import os

os.environ.setdefault("MINGRU_SCAN", "triton")

import torch  # noqa: E402

from mingru import MinGRUStack  # noqa: E402

torch.manual_seed(0)
stack = MinGRUStack(input_size=32, d_model=64, n_layers=2, mixer="givens").to("cuda")
x = torch.randn(4, 16, 32, device="cuda")
y, state = stack(x)
y.sum().backward()
print(y.shape, len(state))
