# irscope corpus: a test of mingru-scans 0.2.0 (MIT, github.com/chris-santiago/minGRU), written for irscope after
# the library's own tests of its Triton scans (the Triton scan against the sequential one, forward and
# backward; smaller shapes; no code copied). Needs a CUDA GPU as written; irscope runs it on its virtual GPU.
import os

os.environ.setdefault("MINGRU_SCAN", "triton")

import pytest  # noqa: E402
import torch  # noqa: E402

from mingru import MinGRUStack  # noqa: E402


@pytest.mark.parametrize("mixer", ["givens", "log"])
def test_stack_forward_backward(mixer):
    torch.manual_seed(0)
    stack = MinGRUStack(input_size=32, d_model=64, n_layers=2, mixer=mixer).to("cuda")
    x = torch.randn(4, 16, 32, device="cuda")
    y, state = stack(x)
    y.sum().backward()
    assert y.shape[:2] == (4, 16) and len(state) == 2
