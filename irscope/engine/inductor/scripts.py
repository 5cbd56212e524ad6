"""When a file's run needs Inductor's kernels recorded, and how a `torch.compile` script gets them here.

A kernel module, a wrapper and a script that calls `torch.compile` are told apart by their text. With no
GPU, a script's graphs are compiled by Inductor for the virtual GPU (virtual_compile.py: its GPU path, with
the virtual device's properties); a graph that cannot take that path goes through Inductor's Triton CPU
backend (`cpu_backend = "triton"`; left alone, Inductor's CPU path writes C++), and its kernels are
labelled as generated for CPU.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from irscope.engine.inductor.kernels import inductor_capture
from irscope.engine.inductor.virtual_compile import gpu_path_compile
from irscope.engine.triton_compat import RawLaunch

COMPILE_QUIET_S = (
    30.0  # the capture budget's quiet time for a torch.compile script (engine/capture/budget.py)
)
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
def inductor_scope(
    user_file, record: Callable[[RawLaunch], None], use_interpreter: bool, notes: list[str]
) -> Iterator[None]:
    """Inductor's decorators record (kernels.py) while the file runs, if its text asks for Inductor at all
    (a library that calls torch.compile for a file that does not say so is not noticed); a script that
    calls torch.compile with no GPU gets Inductor's GPU path for the virtual GPU, or its Triton CPU backend
    for a graph that cannot take it, and the notes say which."""
    if not needs_inductor(user_file.text):
        yield
        return

    compiling = use_interpreter and calls_torch_compile(user_file.text)
    config = None
    if compiling:
        import torch._inductor.config as config

        saved = config.cpu_backend
        config.cpu_backend = (
            "triton"  # for a graph that cannot take the GPU path (virtual_compile.py)
        )
    try:
        with (
            inductor_capture(record, user_file.path, virtual=use_interpreter, notes=notes),
            gpu_path_compile() if compiling else contextlib.nullcontext() as outcome,
        ):
            try:
                yield
            finally:
                if outcome is not None:
                    notes.extend(_compile_notes(outcome))
    finally:
        if config is not None:
            config.cpu_backend = saved


def _compile_notes(outcome) -> list[str]:
    notes = []
    if outcome.gpu_graphs:
        notes.append(
            f"torch.compile: Inductor generated {outcome.gpu_graphs} graph(s) for the virtual GPU "
            f"(its GPU path, as on that GPU); their Triton kernels are recorded, not run, so their "
            f"outputs are left unwritten"
        )
    if outcome.cpu_graphs:
        why = "; ".join(dict.fromkeys(outcome.why_cpu))
        notes.append(
            f"torch.compile: {outcome.cpu_graphs} graph(s) could not take the GPU path ({why}) and were "
            f"generated for CPU by Inductor's Triton CPU backend: a GPU run may choose other block sizes"
        )
    return notes


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


def virtual_compile_failure(error: BaseException | None, shown: str) -> str | None:
    """The line for a torch.compile that Inductor could not compile on the virtual GPU, or for an Inductor
    file from a PyTorch too old for the installed Triton; None for anything else."""
    if isinstance(error, ImportError) and "AttrsDescriptor" in str(error):
        return (
            f"{shown} was written by PyTorch before 2.6: its kernels import Triton's AttrsDescriptor, which "
            f"the installed Triton no longer has; regenerate it with PyTorch 2.6 or later (TORCH_COMPILE_DEBUG=1)"
        )
    if error is None or type(error).__name__ != "BackendCompilerFailed":
        return None
    cause = error.__cause__ or getattr(error, "inner_exception", None) or error
    detail = (str(cause).strip().splitlines() or [type(cause).__name__])[0][:160]
    return (
        f"{shown}: torch.compile could not compile a graph on irscope's virtual GPU ({type(cause).__name__}: "
        f"{detail}); open the output_code.py a GPU run wrote instead (TORCH_COMPILE_DEBUG=1 python FILE)"
    )
