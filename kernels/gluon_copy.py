"""A 2-D copy in Gluon, launched with two layouts: the one along the rows loads 16 bytes per thread.

In Gluon the author writes the layout Triton would otherwise choose, here as a constexpr argument.
ROWS gives each thread 4 neighbouring fp32 elements of a row and puts a warp's 32 lanes side by side
along it: each thread can load its 16 bytes at once (ld.global.v4.b32 in PTX). COLS puts the lanes down
a column, one element each: every load is a scalar 4-byte one (ld.global.b32), and a warp's 32 lanes
touch 32 different rows.

Triton's interpreter does not run Gluon, so with no GPU this file cannot compute its copies; irscope
still captures both launches and compiles them as the JIT would (`irscope kernels/gluon_copy.py`).
"""
import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# 4 warps; lanes along a row, 4 contiguous elements per thread (order [1, 0]: columns vary fastest)
ROWS = gl.BlockedLayout([1, 4], [1, 32], [4, 1], [1, 0])
# 4 warps; lanes down a column, one element per thread (order [0, 1]: rows vary fastest)
COLS = gl.BlockedLayout([1, 1], [32, 1], [1, 4], [0, 1])


@gluon.jit
def copy_2d_kernel(src_ptr, dst_ptr, n_rows, n_cols,
                   BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, layout: gl.constexpr):
    # The row and column indices carry the 2-D layout's slices, so the tile gets `layout` itself.
    rows = gl.program_id(0) * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, layout))
    cols = gl.program_id(1) * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, layout))
    offsets = rows[:, None] * n_cols + cols[None, :]
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    tile = gl.load(src_ptr + offsets, mask=mask)
    gl.store(dst_ptr + offsets, tile, mask=mask)


def copy_2d(x: torch.Tensor, layout, block_m: int = 32, block_n: int = 128) -> torch.Tensor:
    out = torch.empty_like(x)
    n_rows, n_cols = x.shape
    grid = (triton.cdiv(n_rows, block_m), triton.cdiv(n_cols, block_n))
    copy_2d_kernel[grid](x, out, n_rows, n_cols, BLOCK_M=block_m, BLOCK_N=block_n, layout=layout,
                         num_warps=4)
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(256, 512, device=DEVICE)
    for name, layout in (("rows", ROWS), ("cols", COLS)):
        assert torch.equal(copy_2d(x, layout), x), name
    print("gluon_copy: OK")
