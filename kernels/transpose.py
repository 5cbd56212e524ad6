"""Tiled transpose of a 256x256 fp32 matrix, one 64x64 tile per program.

The tile is read along rows and written along the columns of the output, so the
register layout that suits the load is wrong for the store: the compiler inserts a
layout conversion that goes through shared memory (see the ttgir and the shared bytes).
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run in Triton's interpreter on the CPU

import triton
import triton.language as tl

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@triton.jit
def transpose_kernel(x_ptr, out_ptr, n_rows, n_cols, x_row_stride, out_row_stride,
                     TILE_M: tl.constexpr, TILE_N: tl.constexpr):
    rows = tl.program_id(0) * TILE_M + tl.arange(0, TILE_M)
    cols = tl.program_id(1) * TILE_N + tl.arange(0, TILE_N)
    in_mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    tile = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=in_mask)
    # out[c, r] = x[r, c]: row c of the output is column c of the input.
    out_offs = cols[:, None] * out_row_stride + rows[None, :]
    out_mask = (cols[:, None] < n_cols) & (rows[None, :] < n_rows)
    tl.store(out_ptr + out_offs, tl.trans(tile), mask=out_mask)


def transpose(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty((n_cols, n_rows), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(n_rows, 64), triton.cdiv(n_cols, 64))
    transpose_kernel[grid](x, out, n_rows, n_cols, x.stride(0), out.stride(0),
                           TILE_M=64, TILE_N=64, num_warps=4)
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(256, 256, device=DEVICE)
    assert torch.equal(transpose(x), x.t())
    print("transpose: OK")
