"""When a file's run needs Inductor's kernels recorded, and how a `torch.compile` script gets them here.

A kernel module, a wrapper and a script that calls `torch.compile` are told apart by their text. With no
GPU, irscope's virtual GPU gives tensors that say they are on `cuda:0` but live in CPU memory; Inductor,
asked to compile for them, generates through its CPU path. What was measured on torch 2.13 (see the
README): Inductor's CPU path writes C++ unless `torch._inductor.config.cpu_backend = "triton"`, and then
writes Triton kernels for the CPU (`DeviceProperties(type='cpu')`, configs chosen for a CPU). So a script's
kernels are Inductor's Triton CPU-backend kernels, and every one of them is labelled so.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from ..triton_compat import RawLaunch

COMPILE_QUIET_S = 30.0  # the capture budget's quiet time for a torch.compile script (core/budget.py)
_MARKS = ("triton_heuristics", "async_compile", "torch.compile", "torch._inductor", "_inductor")


def needs_inductor(text: str) -> bool:
    return any(mark in text for mark in _MARKS)


def calls_torch_compile(text: str) -> bool:
    return "torch.compile" in text or "torch._dynamo.optimize" in text


def import_before_device(text: str) -> None:
    """Import torch's compiler stack before the virtual GPU starts, as a file on a GPU machine meets it:
    imported under the virtual GPU (at the file's first torch.compile), Dynamo set itself up for a device
    it then could not run on, and the compiled function ran eagerly with no kernel at all (measured)."""
    if needs_inductor(text):
        import torch._dynamo  # noqa: F401
        import torch._inductor.config  # noqa: F401
        from torch._inductor.runtime import triton_heuristics  # noqa: F401


@contextlib.contextmanager
def inductor_scope(user_file, record: Callable[[RawLaunch], None], use_interpreter: bool,
                   notes: list[str]) -> Iterator[None]:
    """Inductor's decorators record (kernels.py) while the file runs, if its text asks for Inductor at all;
    a script that calls torch.compile with no GPU gets Inductor's Triton CPU backend, and a note says so."""
    if not needs_inductor(user_file.text):
        yield
        return
    from .kernels import inductor_capture

    saved = None
    config = None
    if use_interpreter and calls_torch_compile(user_file.text):
        import torch._inductor.config as config
        saved = config.cpu_backend
        config.cpu_backend = "triton"
        notes.append(CPU_BACKEND_NOTE)
    try:
        with inductor_capture(record, user_file.path):
            yield
    finally:
        if config is not None:
            config.cpu_backend = saved


CPU_BACKEND_NOTE = ("torch.compile ran on the virtual GPU through Inductor's Triton CPU backend (cpu_backend='triton'): "
                    "its kernels are generated for CPU, a GPU run may choose other block sizes; Inductor's kernels "
                    "are recorded, not run, so their outputs are left unwritten")


def generated_target(kernels) -> str | None:
    """The GPU Inductor generated these kernels for, as an irscope target name ('sm_90', 'gfx942'), when
    they all agree on one (their triton_meta's DeviceProperties); None for CPU-generated or mixed ones."""
    names = set()
    for kernel in kernels:
        if kernel.inductor is None:
            continue
        device = kernel.inductor.triton_meta.get("device")
        kind, cc = getattr(device, "type", None), getattr(device, "cc", None)
        if kind == "cuda" and cc:
            names.add(f"sm_{cc}")
        elif kind == "hip" and cc:
            names.add(str(cc).split(":")[0])
        else:
            return None
    return names.pop() if len(names) == 1 else None
