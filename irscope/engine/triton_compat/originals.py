"""What irscope keeps of Triton before any patch of its own: the JIT's launch path and the methods a
capture patches, and torch's answer to whether there is a GPU (the virtual GPU, engine/virtual_gpu/device.py, makes
torch.cuda.is_available() true while a file runs). Imported first, by the package."""

from __future__ import annotations

import torch
import triton
from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

TRITON_VERSION = triton.__version__
JIT_RUN = JITFunction.run
JIT_CALL = JITFunction.__call__
AUTOTUNER_RUN = Autotuner.run
AUTOTUNER_BENCH = Autotuner._bench
AUTOTUNER_WARMUP = Autotuner.warmup
TORCH_HAS_GPU = torch.cuda.is_available
