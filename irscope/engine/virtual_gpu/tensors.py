"""Tensors on the virtual GPU: `device="cuda"` gives a CPU tensor that says it is on `cuda:0`.

A file written for a GPU allocates with `device="cuda"` (or `DEVICE`, or `x.device`), moves data with
`.cuda()` / `.to("cuda")`, and checks `x.is_cuda` or `x.device == DEVICE`. `VirtualDeviceMode` (a torch
function mode, so it sees every torch call, Tensor methods and properties included) rewrites a virtual
device argument to the CPU, and answers for the device a tensor is on.

Which device a tensor is on: every CPU tensor is on the virtual GPU, unless the file put it on the host,
the way it would have been with a GPU:
- a factory with `device="cpu"`, or with no device and no tensor argument (torch's default device);
- `.cpu()` / `.to("cpu")` of a GPU tensor (a copy, as on a GPU);
- an operation whose tensor arguments are all on the host (views and results follow their inputs).
Host tensors carry an attribute; anything else, including tensors torch creates without a Python call
(gradients from autograd), answers `cuda:0`. `.cuda()` of a host tensor is a copy, as on a GPU.

Triton's interpreter and irscope's binder read `data_ptr()`, dtypes and strides, never the device, so
they run unchanged on these tensors. With the mode off, every tensor is an ordinary CPU tensor again.

The backward pass: `loss.backward()` reaches the mode as a torch function, and a mode is off inside its own
`__torch_function__`; the autograd engine keeps the torch-function modes active when it starts and gives
them to every Python function of the backward pass (an `autograd.Function`'s backward, hooks). Started from
inside the mode, the backward would run with no virtual GPU at all: a library's backward that sizes its
grid by the GPU's SM count "only if x.device.type == 'cuda'" (liger-kernel's norms) took one program for
the whole tensor, a specialization no GPU runs. `engine_in_mode` starts the engine with the mode on.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Callable, ContextManager, Iterator

import torch
from torch.overrides import TorchFunctionMode

from irscope.engine.virtual_gpu.registrations import library_implements_any

VIRTUAL_DEVICE = torch.device("cuda", 0)
_HOST = "_irscope_host"  # attribute set on tensors the file keeps in host memory
_Tensor = torch.Tensor


_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)


def is_host(t: torch.Tensor) -> bool:
    return getattr(t, _HOST, False)


def _mark_host(t: torch.Tensor, host: bool = True) -> None:
    try:
        if host:
            setattr(t, _HOST, True)
        elif is_host(t):
            delattr(t, _HOST)
    except (AttributeError, TypeError):  # a tensor subclass with slots: it stays as it is
        pass


def is_virtual(device: Any) -> bool:
    """Does this device argument name the (virtual) GPU? `"cuda"`, `"cuda:0"`, `torch.device("cuda")`, or a
    bare index, which torch reads as a CUDA device."""
    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device == "cuda" or device.startswith("cuda:")
    return _is_index(device)


def _is_index(device: Any) -> bool:
    return isinstance(device, int) and not isinstance(device, bool)


def _is_cpu(device: Any) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cpu"
    return isinstance(device, str) and (device == "cpu" or device.startswith("cpu:"))


def _split_to(args: tuple, kwargs: dict) -> tuple[Any, tuple, dict]:
    """`Tensor.to`'s arguments as (target device or None, the arguments after the device, the keywords less
    `device`), in each form torch accepts: `to(device, dtype, non_blocking, copy)` (the device positional, by
    keyword, or None, as `Module.to` passes it), `to(dtype, ...)`, and `to(other, ...)`, which becomes the
    device form with other's device and dtype. Passing the rest after a device always picks the device form."""
    if "device" in kwargs:
        kwargs = dict(kwargs)
        return kwargs.pop("device"), args, kwargs
    if not args:
        return None, args, kwargs
    first = args[0]
    if isinstance(first, _Tensor):
        return virtual_device_of(first), (first.dtype, *args[1:]), kwargs
    if isinstance(first, (str, torch.device)) or _is_index(first):
        return first, args[1:], kwargs
    # a dtype, or no device (`to(None, dtype, ...)`): torch's own call, unchanged
    return (
        None,
        args,
        kwargs,
    )


def virtual_device_of(t: torch.Tensor) -> torch.device:
    """The device this tensor answers: `cuda:0` for a CPU tensor on the virtual GPU. Call with the mode off."""
    real = t.device
    if real.type == "cpu" and not is_host(t):
        return VIRTUAL_DEVICE
    return real


def _tensors(values, depth: int = 0):
    for value in values:
        if isinstance(value, _Tensor):
            yield value
        elif depth < 2 and isinstance(value, (list, tuple)):
            yield from _tensors(value, depth + 1)


# A tensor of this many elements or more is GPU-sized: an operation on it takes this CPU tens of milliseconds
# to seconds (a cross-entropy over 8192 x 65536 logits: seconds), a GPU microseconds.
GPU_SIZED_ELEMENTS = 1 << 24


def _gpu_sized(inputs: list[torch.Tensor]) -> bool:
    """Whether an operation takes a GPU-sized tensor on the virtual GPU (`inputs`: its tensor arguments). The
    capture's quiet time does not count such work: it measures how long the file goes without launching
    anything new, as it would beside a GPU (a benchmark's torch baseline over large inputs ended the run
    between two of its kernel's sizes)."""
    return any(t.numel() >= GPU_SIZED_ELEMENTS and not is_host(t) for t in inputs)


def _fresh(out, inputs: list) -> list:
    """The tensors of an op's result that are not one of its inputs (an in-place op returns its input)."""
    ids = {id(t) for t in inputs}
    return [
        t for t in _tensors(out if isinstance(out, (list, tuple)) else (out,)) if id(t) not in ids
    ]


# Random floating-point fills, and the zero fill each becomes while no launch reads what it makes
_RANDOM_FILLS = {
    torch.randn: torch.zeros,
    torch.rand: torch.zeros,
    torch.randn_like: torch.zeros_like,
    torch.rand_like: torch.zeros_like,
}
_RANDOM_FILLS_IN_PLACE = (_Tensor.normal_, _Tensor.uniform_)
# A random fill of a GPU-sized tensor that the CPU would take seconds and gigabytes to make, and the fresh,
# untouched memory it is made of instead (pages the kernel gives as zeros, held only once written). Counted in
# elements, which is what the random numbers cost: on the H200 machine's CPU, `randn` of 8192 x 16384 halves
# (256 MiB) took over 9 s, and Gluon tutorial 05's run was stopped there before its matmuls.
LARGE_FILL_ELEMENTS = 1 << 26
_UNFILLED = {
    torch.randn: torch.empty,
    torch.rand: torch.empty,
    torch.randn_like: torch.empty_like,
    torch.rand_like: torch.empty_like,
}


def _on_the_virtual_gpu(func, args: tuple, kwargs: dict) -> bool:
    """Whether a random fill makes (or fills) a tensor on the virtual GPU rather than in host memory."""
    device = kwargs.get("device")
    if device is not None:
        return is_virtual(device)
    if func in _RANDOM_FILLS_IN_PLACE or func in (torch.randn_like, torch.rand_like):
        return not is_host(args[0])
    return is_virtual(torch.get_default_device())


def _fill_size(func, args: tuple, kwargs: dict) -> tuple[int, int]:
    """The elements and bytes a random fill makes, worked out without making them."""
    if func in _RANDOM_FILLS_IN_PLACE:
        tensor = args[0]
    elif func in (torch.randn_like, torch.rand_like):
        tensor = torch.empty_like(args[0], dtype=kwargs.get("dtype"), device="meta")
    else:
        shape_only = {k: v for k, v in kwargs.items() if k in ("dtype", "size", "names")}
        tensor = func(*args, **shape_only, device="meta")
    return tensor.numel(), tensor.numel() * tensor.element_size()


# The modes of the runs in progress, innermost last (device.py adds and removes them)
RUNNING: list["VirtualDeviceMode"] = []


def products_left_uncomputed() -> bool:
    """Whether the run in progress has left a matrix product uncomputed (`VirtualDeviceMode._product`)."""
    return bool(RUNNING and RUNNING[-1].uncomputed)


class VirtualDeviceMode(TorchFunctionMode):
    """See the module's docstring. Inside `__torch_function__` the mode is off, so torch calls here are real."""

    def __init__(self, untimed: Callable[[], ContextManager] | None = None):
        super().__init__()
        # the capture budget's quiet time leaves out the block's time: torch work on GPU-sized tensors
        # (`_gpu_sized`)
        self.untimed = untimed
        self.in_compiler = (
            False  # set for the mode irscope runs Inductor's own compile under (core/inductor)
        )
        self._unread_depth = 0  # values_unread() blocks the call is in
        # the bytes of each random fill left unfilled (LARGE_FILL_ELEMENTS)
        self.unfilled: list[int] = []
        # the floating-point operations of each matrix product left uncomputed (LARGE_PRODUCT_FLOPS)
        self.uncomputed: list[int] = []
        # pinned host memory needs a GPU; plain memory does here
        self._special = {
            _Tensor.device.__get__: lambda t: virtual_device_of(t),
            _Tensor.is_cuda.__get__: lambda t: virtual_device_of(t).type == "cuda",
            _Tensor.is_cpu.__get__: lambda t: virtual_device_of(t).type == "cpu",
            _Tensor.get_device: lambda t: (
                0 if virtual_device_of(t).type == "cuda" else t.get_device()
            ),
            _Tensor.cuda: self._cuda,
            _Tensor.cpu: self._cpu,
            _Tensor.to: self._to,
            torch._C._nn._parse_to: self._parse_to,
            _Tensor.data.__set__: self._set_data,
            _Tensor.pin_memory: lambda t, *a, **k: t,
            _Tensor.is_pinned: lambda t, *a, **k: False,
            _Tensor.record_stream: lambda t, stream: None,
        }

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _compiling() and not self.in_compiler:
            # Dynamo traces this mode inside a torch.compile'd function: the graph records the op itself
            # (its node named after it, as Inductor's comments then name it), not this mode's bookkeeping
            return func(*args, **kwargs)
        special = self._special.get(func)
        if special is not None:
            return special(*args, **kwargs)
        if func in _RANDOM_FILLS or func in _RANDOM_FILLS_IN_PLACE:
            func, args, kwargs = self._random_fill(func, args, kwargs)
            if func is None:
                return args[0]
        host = None  # None: follow the inputs
        device = kwargs.get("device")
        if device is not None:
            if is_virtual(device):
                kwargs = {**kwargs, "device": "cpu"}
                host = False
            elif _is_cpu(device):
                host = True
        if func is not torch.device and any(
            isinstance(a, torch.device) and a.type == "cuda" for a in args
        ):
            args = tuple(
                torch.device("cpu") if isinstance(a, torch.device) and a.type == "cuda" else a
                for a in args
            )
            host = False
        if kwargs.get("pin_memory"):
            kwargs = {**kwargs, "pin_memory": False}
        inputs = list(_tensors(list(args) + list(kwargs.values())))
        with (
            self.untimed()
            if self.untimed is not None and _gpu_sized(inputs)
            else contextlib.nullcontext()
        ):
            # a product the file's library implements for CUDA gets the file's dtype, as on a GPU (FlagGems' mm)
            if func in _PRODUCTS and not library_implements_any(_PRODUCTS[func]):
                out = self._product(func, args, kwargs, inputs)
            else:
                out = func(*args, **kwargs)
        if host is False:
            return out
        if host is None:
            host = (
                all(is_host(t) for t in inputs)
                if inputs
                else torch.get_default_device().type == "cpu"
            )
        if host:
            for t in _fresh(out, inputs):
                _mark_host(t)
        return out

    def _random_fill(self, func, args: tuple, kwargs: dict):
        """The call a random fill becomes: itself; zeros while no launch reads the values (`values_unread`);
        fresh memory for a tensor of `LARGE_FILL_ELEMENTS` or more. A GPU fills 8 GB of `randn` in milliseconds,
        the CPU here in half a minute, and holds the 8 GB (Gluon tutorial 02 makes five such inputs for its
        bandwidth sweep; irscope ran out of its time before the first launch). Such a tensor's pages read as
        zeros and take memory only where a kernel in the interpreter writes; the note says so. `func` None:
        the in-place fill is left out, its tensor returned as it is. A fill the file makes in host memory is
        the file's own CPU work, as it would be beside a GPU, and stays real."""
        if _on_the_virtual_gpu(func, args, kwargs):
            elements, size = _fill_size(func, args, kwargs)
            if elements >= LARGE_FILL_ELEMENTS:
                self.unfilled.append(size)
                if func in _RANDOM_FILLS_IN_PLACE:
                    return None, args, kwargs
                return _UNFILLED[func], args, _without_generator(kwargs)
        if not self._unread_depth:
            return func, args, kwargs
        if func in _RANDOM_FILLS_IN_PLACE:
            return None, (args[0].zero_(),), {}
        return _RANDOM_FILLS[func], args, _without_generator(kwargs)

    def unfilled_note(self) -> str | None:
        """One line for the report when random fills were left unfilled (`_random_fill`)."""
        if not self.unfilled:
            return None
        count, total = len(self.unfilled), sum(self.unfilled)
        return (
            f"the virtual GPU left {count} random fill{'s' if count > 1 else ''} of 2^26 elements or more "
            f"unfilled ({total / 2**30:.1f} GiB in all): on this CPU "
            "they take longer and more memory than the launches need; their values read as zeros, in the "
            "interpreter and in the file's own checks"
        )

    def _product(self, func, args: tuple, kwargs: dict, tensors: list[torch.Tensor]):
        """A matrix product on the virtual GPU: computed (in float32 for half-precision inputs), or, from
        `LARGE_PRODUCT_FLOPS` on, left uncomputed: its result is fresh memory that reads as zeros, of the shape
        and dtype the product gives. Tutorial 10 computes its reference as an 8192^3 float32 product before
        its launch, 25 s of this CPU's time; a cross-entropy benchmark's 8192 x 2048 x 65536 projections,
        forward and backward, took its whole minute before its first launch. A GPU does either in
        milliseconds. Host tensors are computed as the file asked; an `out=` of the result's shape keeps what it
        held (a GPU would have written the product there). `tensors`: its tensor arguments."""
        flops, shaped = _product_flops(func, args, kwargs, tensors)
        if flops < LARGE_PRODUCT_FLOPS or not tensors or any(is_host(t) for t in tensors):
            return _product_in_float32(func, args, kwargs)
        out = kwargs.get("out")
        if out is not None:
            if not isinstance(out, _Tensor) or (out.shape, out.dtype) != (
                shaped.shape,
                shaped.dtype,
            ):
                return _product_in_float32(func, args, kwargs)
            self.uncomputed.append(flops)
            return out
        self.uncomputed.append(flops)
        needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
        if needs_grad:
            return _LeftUncomputed.apply(shaped.shape, shaped.dtype, *tensors)
        return _zeros_untouched(shaped.shape, shaped.dtype)

    def uncomputed_note(self) -> str | None:
        """One line for the report when products were left uncomputed (`_product`)."""
        if not self.uncomputed:
            return None
        count = len(self.uncomputed)
        return (
            f"the virtual GPU left {count} matrix product{'s' if count > 1 else ''} of 2^36 floating-point "
            f"operations or more uncomputed ({sum(self.uncomputed) / 1e12:.1f} TFLOP in all; this CPU takes "
            "seconds for each, a GPU milliseconds): their results read as zeros, and the file's result "
            "comparisons after them pass without comparing"
        )

    @contextlib.contextmanager
    def values_unread(self) -> Iterator[None]:
        """While the block runs, random floating-point fills (`randn`, `rand`, their `_like`, `normal_`,
        `uniform_`) make zeros. For a benchmark sweep's exploration, which records its launches and runs none:
        a specialization depends on shapes, dtypes, strides and alignment, never on these values, and on the
        CPU the fills cost seconds a point (tutorial 06's sweep: 8.7 s of `randn` for 4 x 32 x 16384 x 64
        inputs). Integer fills (`randint`, `randperm`) can set sizes and indices, and stay real."""
        self._unread_depth += 1
        try:
            yield
        finally:
            self._unread_depth -= 1

    # Moving between host and device: a copy, as on a GPU; a no-op when already there.

    def _cuda(self, t, device=None, non_blocking=False, memory_format=torch.preserve_format):
        return t.clone(memory_format=memory_format) if is_host(t) else t

    def _cpu(self, t, memory_format=torch.preserve_format):
        if is_host(t) or t.device.type != "cpu":
            return t.cpu(memory_format=memory_format)
        copy = t.clone(memory_format=memory_format)
        _mark_host(copy)
        return copy

    def _to(self, t, *args, **kwargs):
        target, rest, kwargs = _split_to(args, kwargs)
        if target is None:  # a dtype, memory format or copy only: the tensor stays where it is
            out = t.to(*rest, **kwargs)
            if out is not t and is_host(t):
                _mark_host(out)
            return out
        if not (is_virtual(target) or _is_cpu(target)):
            return t.to(target, *rest, **kwargs)  # meta and the like: torch's own answer
        out = t.to("cpu", *rest, **kwargs)
        to_host = _is_cpu(target)
        if out is t and is_host(t) != to_host:
            out = t.clone(memory_format=kwargs.get("memory_format") or torch.preserve_format)
        if out is not t:
            _mark_host(out, to_host)
        return out

    def _parse_to(self, *args, **kwargs):
        """`Module.to`'s parser of its arguments: a device as the file wrote it (not the CPU the mode makes of a
        device argument), and another tensor's device as the mode answers it."""
        # torch asks the accelerator what a bare index means: the virtual GPU
        if args and _is_index(args[0]):
            args = (torch.device("cuda", args[0]), *args[1:])
        if _is_index(kwargs.get("device")):
            kwargs = {**kwargs, "device": torch.device("cuda", kwargs["device"])}
        device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*args, **kwargs)
        other = args[0] if args else kwargs.get("tensor")
        if isinstance(other, _Tensor):
            device = virtual_device_of(other)
        return device, dtype, non_blocking, memory_format

    def _set_data(self, t, value):
        _Tensor.data.__set__(t, value)
        _mark_host(t, is_host(value))  # `module.cuda()` swaps a parameter's data: it moves with it


def _without_generator(kwargs: dict) -> dict:
    return {k: v for k, v in kwargs.items() if k != "generator"}


_LOW = (torch.float16, torch.bfloat16)
_MATMUL = ("matmul", "mm", "bmm", "mv", "dot")
# Products a file computes its reference with; torch's CPU kernels for them in half precision are a hundred
# times slower than in float32 (a 2048 x 512 x 2048 fp16 matmul: 9 s against 0.06 s here), and a reference
# computed that way ran into the capture budget before the file's next launch (tutorial 09's validation).
# Each with the ATen operators it reaches (itself, and what torch takes it apart into).
_PRODUCTS = {
    torch.matmul: _MATMUL,
    torch.mm: ("mm",),
    torch.bmm: ("bmm",),
    torch.addmm: ("addmm", "mm"),
    torch.baddbmm: ("baddbmm", "bmm"),
    torch.einsum: ("einsum", "bmm", "mm"),
    _Tensor.matmul: _MATMUL,
    _Tensor.__matmul__: _MATMUL,
    _Tensor.__rmatmul__: _MATMUL,
    _Tensor.mm: ("mm",),
    _Tensor.bmm: ("bmm",),
    torch.nn.functional.linear: ("linear", "addmm", *_MATMUL),
    torch.nn.functional.scaled_dot_product_attention: (
        "scaled_dot_product_attention",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention",
        "_scaled_dot_product_flash_attention_for_cpu",
        "baddbmm",
        *_MATMUL,
    ),
}


# A matrix product this CPU would take a second or more for (2^36 operations: 2048 x 4096 x 8192), which a GPU
# does in well under a millisecond; in floating-point operations, two per multiply-add.
LARGE_PRODUCT_FLOPS = 1 << 36
# Which operand's last dimension is the one each product sums over (its K)
_SUMMED_OPERAND = {
    torch.matmul: 0,
    torch.mm: 0,
    torch.bmm: 0,
    torch.addmm: 1,
    torch.baddbmm: 1,
    _Tensor.matmul: 0,
    _Tensor.__matmul__: 0,
    _Tensor.__rmatmul__: 1,
    _Tensor.mm: 0,
    _Tensor.bmm: 0,
    torch.nn.functional.linear: 0,
}


def _product_flops(
    func, args: tuple, kwargs: dict, tensors: list[torch.Tensor]
) -> tuple[int, torch.Tensor | None]:
    """Two operations per multiply-add of the product, and its result on the meta device (its shape and
    dtype), worked out from the shapes alone; (0, None) for a product this does not size (einsum,
    attention), which is then computed, and for one too small to leave out. The two operands of M x N x K
    hold M K and K N elements, whose product bounds half the operations from above: a small product is
    told without the meta device's work, on every product a file makes."""
    index = _SUMMED_OPERAND.get(func)
    if index is None or len(args) <= index or not isinstance(args[index], _Tensor):
        return 0, None
    if math.prod(t.numel() for t in tensors) < LARGE_PRODUCT_FLOPS // 2:
        return 0, None
    try:
        shaped = func(*_on_meta(args), **_on_meta({k: v for k, v in kwargs.items() if k != "out"}))
    except Exception:  # noqa: BLE001 - shapes that do not multiply: torch says so when it computes
        return 0, None
    if not isinstance(shaped, _Tensor) or args[index].dim() == 0:
        return 0, None
    return 2 * shaped.numel() * args[index].shape[-1], shaped


def _on_meta(values):
    """The arguments with each tensor replaced by one of its shape and dtype on the meta device."""
    if isinstance(values, dict):
        return {name: _on_meta(value) for name, value in values.items()}
    if isinstance(values, (list, tuple)):
        return type(values)(_on_meta(value) for value in values)
    if isinstance(values, _Tensor):
        return torch.empty_strided(values.shape, values.stride(), dtype=values.dtype, device="meta")
    return values


def _zeros_untouched(shape, dtype) -> torch.Tensor:
    """Zeros of a product's result: fresh pages the kernel gives as zeros for a large one (held only once
    written), zeroed for a small one (its memory may be reused)."""
    out = torch.empty(shape, dtype=dtype)
    if out.nbytes < 1 << 25:
        out.zero_()
    return out


class _LeftUncomputed(torch.autograd.Function):
    """A product left uncomputed where autograd records it: its gradients are zeros too, made as cheaply."""

    @staticmethod
    def forward(ctx, shape, dtype, *inputs):
        ctx.inputs = [(t.shape, t.dtype) for t in inputs]
        return _zeros_untouched(shape, dtype)

    @staticmethod
    def backward(ctx, grad):
        return (None, None, *(_zeros_untouched(shape, dtype) for shape, dtype in ctx.inputs))


def _product_in_float32(func, args, kwargs):
    """A product of half-precision tensors on the virtual GPU, computed in float32 and rounded back to the
    inputs' precision: what a GPU's matrix units do too (they accumulate in float32), and fast on a CPU.
    Host tensors (the file put them in CPU memory on purpose) are computed as the file asked. Not called for
    a product whose operator a library of the file implements for CUDA (FlagGems' `mm`): on a GPU its Triton
    kernels get the file's half-precision tensors, and compile for them (bf16 descriptors, not fp32)."""
    low = [t for t in _tensors(list(args) + list(kwargs.values())) if t.dtype in _LOW]
    if not low or all(is_host(t) for t in low) or "out" in kwargs:
        return func(*args, **kwargs)

    def up(value):
        if isinstance(value, _Tensor) and value.dtype in _LOW:
            return value.float()
        if isinstance(value, (list, tuple)):
            return type(value)(up(v) for v in value)
        return value

    out = func(*up(args), **{k: up(v) for k, v in kwargs.items()})
    return out.to(low[0].dtype) if isinstance(out, _Tensor) and out.dtype == torch.float32 else out


def engine_in_mode(mode: VirtualDeviceMode, run_backward):
    """Torch's `_engine_run_backward` (what `Tensor.backward`, `torch.autograd.backward` and `grad` start the
    engine with), started with `mode` on the torch-function stack when it is not (see the module's
    docstring)."""

    def run(*args, **kwargs):
        if any(m is mode for m in torch.overrides._get_current_function_mode_stack()):
            return run_backward(*args, **kwargs)
        torch._C._push_on_torch_function_stack(mode)
        try:
            return run_backward(*args, **kwargs)
        finally:
            torch._C._pop_torch_function_stack()

    return run
