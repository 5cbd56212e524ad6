"""torch.compile on the virtual GPU: Inductor generates its GPU-path kernels for the virtual device.

With no GPU, the virtual GPU's tensors live in CPU memory, so Dynamo hands Inductor graphs whose inputs
are on the CPU, and Inductor would generate for the CPU. Here the `inductor` backend's `compile_fx` is
given the same graph with inputs that are fake tensors on `cuda:0` (same sizes, strides, dtypes): Inductor
lowers and generates for CUDA, asking the device for its properties through Dynamo's device interface,
which is pointed at the virtual GPU's `torch.cuda` (an H100's 132 SMs and sm_90 for the default target).
Measured on torch 2.13: its kernel modules then carry `DeviceProperties(type='cuda', cc=90, ...)` and
configs chosen for it, as on an H100. The compiled function is then called with the file's own tensors:
its Triton kernels are recorded (kernels.py) and not run; extern kernels (matmuls) run on the CPU.

A graph this cannot take (one that needs gradients: autograd on a fake CUDA tensor aborts a CPU-only torch;
dynamic shapes; anything Inductor rejects on the way) is compiled as Inductor would for the CPU tensors
it has, through its Triton CPU backend, and those kernels are labelled as generated for CPU.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Iterator

import torch

from irscope.engine.inductor.provenance import remember_node_lines
from irscope.engine.patching import Patches
from irscope.engine.virtual_gpu.tensors import VirtualDeviceMode


@dataclass
class CompileOutcome:
    gpu_graphs: int = 0
    cpu_graphs: int = 0
    why_cpu: list[str] = field(default_factory=list)


def _fake_gpu_inputs(example_inputs) -> list:
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    mode = FakeTensorMode()
    grad_enabled = torch.is_grad_enabled()
    out = []
    # Made from meta tensors, not through a factory: the virtual GPU's device mode would put device="cuda"
    # back on the CPU, and a factory call may reach the CUDA backend a CPU-only torch lacks.
    with torch._C.DisableTorchFunction():
        for value in example_inputs:
            if not isinstance(value, torch.Tensor):
                if isinstance(value, torch.SymInt):
                    raise ValueError("a dynamic shape")
                out.append(value)
                continue
            if any(isinstance(d, torch.SymInt) for d in (*value.shape, *value.stride())):
                raise ValueError("a dynamic shape")
            if value.requires_grad and grad_enabled:
                # autograd's metadata for a CUDA tensor asks for a CUDA device guard, which a CPU-only torch
                # answers with an abort of the whole process (measured), not an exception
                raise ValueError(
                    "a graph that needs gradients (autograd cannot record a CUDA tensor without CUDA)"
                )
            meta = torch.empty_strided(
                tuple(value.shape), tuple(value.stride()), dtype=value.dtype, device="meta"
            )
            out.append(FakeTensor(mode, meta, torch.device("cuda", 0)))
    return out


@contextlib.contextmanager
def gpu_path_compile() -> Iterator[CompileOutcome]:
    """While the block runs (inside the virtual GPU), Inductor compiles each graph for the virtual GPU."""
    import torch._dynamo.device_interface as device_interface
    import torch._inductor.compile_fx as compile_fx_module
    import torch._subclasses.fake_tensor as fake_tensor

    outcome = CompileOutcome()
    patches = Patches()
    cuda_interface = device_interface.CudaInterface
    # bound to torch.cuda when torch was imported
    for name, value in list(vars(cuda_interface).items()):
        if isinstance(value, staticmethod) and hasattr(torch.cuda, name):
            patches.patch(cuda_interface, name, staticmethod(getattr(torch.cuda, name)))
    # A fake cuda tensor "initializes the GPU context" with a real one-element allocation on the device
    # whenever torch.cuda says it is available (torch 2.11; 2.13 asks torch.accelerator): the virtual GPU says
    # so, and a CUDA build of torch with no GPU then fails every graph ("No CUDA GPUs are available",
    # measured on the H100 machine with the GPU hidden). The context only serves autograd, which this path
    # never records.
    patches.patch(fake_tensor, "init_gpu_context", lambda device: None)
    cached = device_interface.caching_worker_device_properties
    saved = cached.pop("cuda", None)
    original = compile_fx_module.compile_fx

    def compile_fx(model, example_inputs, *args: Any, **kwargs: Any):
        # the model's lines of its nodes, for "from the model line to the kernel"
        remember_node_lines(model)
        try:
            fake = _fake_gpu_inputs(example_inputs)
            # constant folding runs on the virtual GPU
            with (
                _compiler_mode(),
                _keyed_by_capability(),
            ):
                compiled = original(model, fake, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - Inductor's own path for the tensors it has, labelled CPU
            first = (str(exc).strip().splitlines() or [""])[0]
            outcome.why_cpu.append(f"{type(exc).__name__}: {first}"[:200])
            outcome.cpu_graphs += 1
            return original(model, example_inputs, *args, **kwargs)
        outcome.gpu_graphs += 1
        return compiled

    patches.patch(compile_fx_module, "compile_fx", compile_fx)
    try:
        yield outcome
    finally:
        patches.restore()
        cached.pop("cuda", None)
        if saved is not None:
            cached["cuda"] = saved


def _compiler_mode() -> VirtualDeviceMode:
    """The virtual GPU's device mode for Inductor's own compile, where torch.compiler.is_compiling() is
    true: it rewrites device="cuda" there too (in a traced function it steps aside, virtual_tensors.py)."""
    mode = VirtualDeviceMode()
    mode.in_compiler = True
    return mode


def _keyed_by_capability():
    """Inductor's FX graph cache keys a graph by the device's name only where torch was built for CUDA (a
    CPU-only torch gives it an empty name), so the code generated for one virtual GPU came back for another
    (compiled_block.py for sm_80, then sm_90: cc 80 both times). The capability goes into the key through
    Inductor's own `cuda.arch` setting, which names it (and is read by nothing else on this path)."""
    major, minor = torch.cuda.get_device_capability()
    return torch._inductor.config.patch({"cuda.arch": f"{major}{minor}"})
