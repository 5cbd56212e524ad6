"""A strided gather: each output element reads every 8th input element.

Neighbouring threads touch addresses 32 bytes apart, so a warp's load spans many memory
sectors and cannot be merged into vector loads: the PTX shows scalar ld.global.b32, while
the contiguous store to out_ptr still vectorizes.
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run in Triton's interpreter on the CPU

import triton
import triton.language as tl

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")

STRIDE = 8


@triton.jit
def strided_gather_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs * 8, mask=mask)  # stride 8 (= STRIDE): uncoalesced
    tl.store(out_ptr + offs, x, mask=mask)  # stride 1: coalesced


def strided_gather(x: torch.Tensor) -> torch.Tensor:
    n_elements = x.numel() // STRIDE
    out = torch.empty(n_elements, device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(n_elements, 1024),)
    strided_gather_kernel[grid](x, out, n_elements, BLOCK_SIZE=1024)
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    n = 4096
    x = torch.randn(STRIDE * n, device=DEVICE)
    assert torch.equal(strided_gather(x), x[::STRIDE])
    print("strided: OK")
