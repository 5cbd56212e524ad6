"""The add kernel from add.py, launched twice in ways that defeat vectorization.

Triton specializes each launch on whether sizes and pointers are divisible by 16: with
n = 1000, or with x[1:] and y[1:] (4 bytes past a 16-byte boundary), it cannot prove
128-bit accesses are safe and emits scalar ld.global.b32 instead of add.py's v4 loads.
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
    # Launch 0: an odd length, so n_elements is not divisible by 16.
    x = torch.rand(1000, device=DEVICE)
    y = torch.rand(1000, device=DEVICE)
    assert torch.equal(add(x, y), x + y)
    # Launch 1: views that start one float in, so x_ptr and y_ptr are not 16-byte aligned.
    x = torch.rand(4096, device=DEVICE)[1:]
    y = torch.rand(4096, device=DEVICE)[1:]
    assert torch.equal(add(x, y), x + y)
    print("misaligned: OK")
