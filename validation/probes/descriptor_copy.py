"""Tiles copied through host tensor descriptors (TMA on Hopper), for the DRAM bytes irscope predicts from the
interpreter's walk of each box against what Nsight Compute counts (validation/h200_descriptor_roofline.sh;
issue 34). Shapes whose rows or columns do not fill the last boxes (the copy engine reads and writes only the
part inside the tensor) and one fp16 tile; every launch fits in L2 with its writes, and is checked against
torch."""

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def tile_copy(x_desc, y_desc, BM: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(0) * BM
    col = tl.program_id(1) * BN
    y_desc.store([row, col], x_desc.load([row, col]))


def copy(rows: int, cols: int, dtype: torch.dtype, bm: int, bn: int) -> None:
    x = torch.randn(rows, cols, device="cuda").to(dtype)
    y = torch.zeros_like(x)
    x_desc = TensorDescriptor.from_tensor(x, [bm, bn])
    y_desc = TensorDescriptor.from_tensor(y, [bm, bn])
    tile_copy[(triton.cdiv(rows, bm), triton.cdiv(cols, bn))](x_desc, y_desc, BM=bm, BN=bn)
    assert torch.equal(x, y)


if __name__ == "__main__":
    copy(4096 + 32, 256, torch.float32, 64, 64)  # half of the last row of boxes inside the tensor
    copy(8192, 512 + 16, torch.float32, 128, 64)  # a quarter of the last column of boxes
    copy(8192 + 64, 1024, torch.float16, 128, 128)
