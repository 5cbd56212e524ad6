"""The layouts of Triton's Gluon tutorial 02 (python/tutorials/gluon/02-layouts.py), each launched once at a
small size: what Nsight Compute measures per launch on the H100 and irscope predicts offline from the PTX
(validation/ncu_coalescing.py; issue 31, item 3). The tutorial itself benchmarks 8 GB copies, too large to
profile launch by launch or to open on a CPU.

The kernels are the tutorial's, imported from the copy in tests/corpus that matches the installed Triton; the
launches are this file's: the 1-D copy with R = 1 to 16 elements per thread, the 2-D copy with lanes along
rows or columns of a row-major and of a transposed input, and the in-out copy between a transposed and a
row-major tensor with the layouts the tutorial picks for each.
"""

import importlib.util
import os

import torch
import triton
from triton.experimental.gluon import language as gl

HERE = os.path.dirname(os.path.abspath(__file__))
GLUON = os.path.join(HERE, "..", "..", "tests", "corpus", "tutorials", "gluon")
COPY = "triton-3.6" if triton.__version__.startswith("3.6") else "triton-main-2026-08-20"
spec = importlib.util.spec_from_file_location("gluon_layouts_tutorial", os.path.join(GLUON, COPY, "02-layouts.py"))
tutorial = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tutorial)  # defines the kernels; its benchmarks run only as __main__

torch.manual_seed(0)
NUM_WARPS = 4

# 1-D: R neighbouring elements per thread (the tutorial's "R vs. throughput")
x = torch.randn(2048 * 16, device="cuda")
y = torch.empty_like(x)
for R in (1, 2, 4, 8, 16):
    layout = gl.BlockedLayout([R], [32], [NUM_WARPS], [0])
    tutorial.memcpy_1d_impl(x, y, 2048, layout, num_warps=NUM_WARPS)

# 2-D: lanes along the rows (contiguous) or down the columns, on a row-major input and on its transpose
a = torch.randn(256, 512, device="cuda")
layouts_2d = [
    gl.BlockedLayout([1, 1], [1, 32], [1, NUM_WARPS], [1, 0]),
    gl.BlockedLayout([1, 4], [1, 32], [NUM_WARPS, 1], [1, 0]),
    gl.BlockedLayout([1, 1], [32, 1], [NUM_WARPS, 1], [0, 1]),
    gl.BlockedLayout([4, 1], [32, 1], [1, NUM_WARPS], [0, 1]),
]
for source in (a, a.t().contiguous().t()):
    out = torch.empty_like(a)
    for layout in layouts_2d:
        tutorial.memcpy_2d_impl(source, out, 128, 128, layout, num_warps=NUM_WARPS)

# in-out: a transposed input copied into a row-major output, each side with the layout the tutorial picks
src = torch.randn(384, 256, device="cuda").t()
dst = torch.empty(256, 384, device="cuda")
tutorial.memcpy_2d_inout(src, dst, num_warps=NUM_WARPS)
torch.cuda.synchronize()
print("launched", 5 + 2 * len(layouts_2d) + 1, "copies")
