"""The ptxas Inductor compiles its kernels with: torch's own, where the torch wheel ships one.

Before it compiles a kernel, Inductor calls `_set_triton_ptxas_path()` (torch/_inductor/runtime/
compile_tasks.py): if `TRITON_PTXAS_PATH` is unset and `torch/bin/ptxas` exists and can be run, it sets the
variable to it, for the rest of the process. A CUDA build of torch has one (torch 2.11+cu130: CUDA 13.0),
so on a GPU Inductor's PTX says `.version 9.0` where Triton's bundled ptxas (CUDA 12.8 in Triton 3.6)
writes 8.7, and the SASS differs with it (measured on an H100: validation/gpu_inductor.py).

On the virtual GPU Inductor compiles nothing itself (kernels.py), so irscope applies the same rule when a
kernel of Inductor's is made: torch's own function where the installed torch has it, or the same rule
written out for a torch that does not. A CPU build of torch has no ptxas; then irscope compiles with
Triton's, and `ptxas_note` is the line that says so wherever an Inductor kernel's PTX and SASS are shown.
"""

from __future__ import annotations

import os

from irscope.base.target import Target
from irscope.engine.triton_compat import ptxas as triton_ptxas

NOTE = (
    "PTX/SASS from Triton's bundled ptxas: a CUDA build of torch compiles Inductor kernels with its own "
    "ptxas, so the PTX version and SASS may differ"
)


def torch_ptxas() -> str | None:
    """torch/bin/ptxas of the installed torch, if it ships one that can be run."""
    import torch

    path = os.path.join(os.path.dirname(os.path.abspath(torch.__file__)), "bin", "ptxas")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def use_inductors_ptxas() -> None:
    """Set `TRITON_PTXAS_PATH` as Inductor does before it compiles a kernel (see the module's docstring)."""
    before = os.environ.get(triton_ptxas.PTXAS_PATH)
    try:
        from torch._inductor.runtime.compile_tasks import _set_triton_ptxas_path
    # a torch without the function: its rule, as torch 2.11 through 2.13 write it
    except ImportError:
        _set_triton_ptxas_path = _same_rule
    _set_triton_ptxas_path()
    if os.environ.get(triton_ptxas.PTXAS_PATH) != before:
        triton_ptxas.path_changed()


def _same_rule() -> None:
    if os.environ.get(triton_ptxas.PTXAS_PATH) is None and torch_ptxas() is not None:
        os.environ[triton_ptxas.PTXAS_PATH] = torch_ptxas()


def ptxas_note(target: Target) -> str | None:
    """The line for an Inductor kernel compiled for `target`, when its PTX and SASS here may not be what a CUDA
    build of torch compiles: this torch has no ptxas of its own, nobody named one in `TRITON_PTXAS_PATH`, and
    Triton reads that variable for the target's architecture (so Inductor's would have been used)."""
    if not target.is_nvidia or torch_ptxas() is not None or os.environ.get(triton_ptxas.PTXAS_PATH):
        return None
    return NOTE if triton_ptxas.reads_ptxas_path(int(target.name.removeprefix("sm_"))) else None
