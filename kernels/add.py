"""Vector add: the smallest complete Triton kernel.

Each program handles one BLOCK_SIZE chunk; the mask guards the ragged tail. Because the
pointers are 16-byte aligned and n_elements is a multiple of 16, the compiler can turn the
contiguous loads into 128-bit vector loads (ld.global.v4.b32 in PTX).
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run in Triton's interpreter on the CPU

import triton
import triton.language as tl

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    # Contiguous offsets: the pattern the backend can vectorize.
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = out.numel()
    grid = (triton.cdiv(n_elements, 1024),)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=1024)
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    n = 4096
    x = torch.rand(n, device=DEVICE)
    y = torch.rand(n, device=DEVICE)
    assert torch.equal(add(x, y), x + y)
    print("add: OK")
