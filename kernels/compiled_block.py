"""A small PyTorch function compiled by torch.compile: layer norm, a linear layer, GELU and a sum.

Inductor turns it into Triton kernels (one fused layer norm, one fused GELU + sum) and a call to a matmul
library. Try:  irscope kernels/compiled_block.py   or   irscope report kernels/compiled_block.py --json
"""

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Block(torch.nn.Module):
    def __init__(self, width: int = 64, hidden: int = 128):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width, device=DEVICE)
        self.up = torch.nn.Linear(width, hidden, device=DEVICE)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.up(self.norm(x))).sum(dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    block = Block()
    compiled = torch.compile(block)
    x = torch.randn(32, 64, device=DEVICE)
    with torch.no_grad():
        y = compiled(x)
    print(y.shape)
