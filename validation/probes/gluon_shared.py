"""Shared memory in Gluon kernels, each launched once at a small size: Triton's Gluon tutorial 03's
cp.async copies through shared memory, with the tutorial's swizzled layout and with a layout whose rows all
start in the same bank. What Nsight Compute measures per SASS instruction on the H100 (L1 wavefronts shared)
against irscope's bank-conflict prediction, which runs the PTX per thread (validation/ncu_bank_conflicts.py;
issue 31, item 4). The kernels are the tutorial's, imported from the copy in tests/corpus that matches the
installed Triton; the launches are this file's."""

import importlib.util
import os

import torch
import triton
from triton.experimental.gluon import language as gl

HERE = os.path.dirname(os.path.abspath(__file__))
GLUON = os.path.join(HERE, "..", "..", "tests", "corpus", "tutorials", "gluon")
COPY = "triton-3.6" if triton.__version__.startswith("3.6") else "triton-main-2026-08-20"
spec = importlib.util.spec_from_file_location("gluon_async_copy_tutorial", os.path.join(GLUON, COPY, "03-async-copy.py"))
tutorial = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tutorial)  # defines the kernels; its benchmarks run only as __main__

torch.manual_seed(0)
x = torch.randn(4 * 8192, device="cuda")
y = torch.empty_like(x)
tutorial.memcpy_1d_cpasync(x, y)

a, b = torch.randn(256, 512, device="cuda"), torch.randn(256, 512, device="cuda")
c = torch.empty_like(a)
for layout in (
    gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0]),
    gl.SwizzledSharedLayout(vec=4, per_phase=1, max_phase=8, order=[1, 0]),
):
    tutorial.elementwise_add_cpasync(a, b, c, layout)
torch.cuda.synchronize()
print("launched 3 copies through shared memory")
