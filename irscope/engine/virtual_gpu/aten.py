"""CUDA-only ATen operators on the virtual GPU: CPU stand-ins with the outputs the CUDA operator gives.

An `output_code.py` that Inductor wrote on a GPU calls a few ATen operators directly that torch implements
only for CUDA: the fused attention kernels it keeps as extern calls (`_scaled_dot_product_efficient_attention`,
`_scaled_dot_product_flash_attention`, `_scaled_dot_product_cudnn_attention`, the lower
`_efficient_attention_forward` / `_flash_attention_forward`, their backward operators in a training graph),
and fp8 / int4 matmuls. On the virtual GPU the wrapper's tensors are CPU tensors, torch has no CPU kernel for
these, and the wrapper stopped at the first such call: the Triton kernels after it were never launched.

While the virtual GPU is on, each such operator that the installed torch has, with a meta function and no
CPU kernel of its own, gets one under the CPU dispatch key (torch.library):
- its outputs have the sizes, strides and dtypes of torch's meta function for it: the function Inductor
  traced the wrapper with, so what the wrapper asserts right after the call (`assert_size_stride`);
- the attention forwards compute their output and log-sum-exp by the math path (softmax(q kᵀ · scale + bias,
  causal mask) v, in float32), and `_scaled_mm` its scaled product, so that what later kernels read is a
  plausible value; dropout is not applied. Every other output (random state, gradients, int4 products) is
  zeros: only its shape matters to the wrapper.
Only virtual_gpu() registers them (never with a real GPU), and the registrations end with it.
"""

from __future__ import annotations

import contextlib
import math
import threading
from typing import Any, Callable, Iterator

import torch

# operator -> its overloads that get a stand-in
_ATTENTION_FORWARD = {  # q, k, v as (batch, heads, seq, dim) or as (batch, seq, heads, dim)
    "_scaled_dot_product_efficient_attention": ("bhmk", ("default",)),
    "_scaled_dot_product_flash_attention": ("bhmk", ("default", "quantized")),
    "_scaled_dot_product_cudnn_attention": ("bhmk", ("default",)),
    "_efficient_attention_forward": ("bmhk", ("default",)),
    "_flash_attention_forward": ("bmhk", ("default", "quantized")),
}
_SHAPES_ONLY = (
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_cudnn_attention_backward",
    "_efficient_attention_backward",
    "_flash_attention_backward",
    "_scaled_grouped_mm",
    "_weight_int4pack_mm",
)

_lock = threading.Lock()
_state: dict[str, Any] = {"depth": 0, "library": None, "names": []}


def _needs_standin(op) -> bool:
    name = op.name()
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    return (
        has(name, "Meta")
        and not has(name, "CPU")
        and not has(name, "CompositeImplicitAutograd")
        and not has(name, "CompositeExplicitAutograd")
    )


def _wanted() -> Iterator[tuple[str, Any, Callable | None]]:
    """(name for Library.impl, OpOverload, how its values are computed) of each operator to stand in for."""
    plan = [
        (name, overloads, _attention_values(layout))
        for name, (layout, overloads) in _ATTENTION_FORWARD.items()
    ]
    plan += [(name, ("default",), None) for name in _SHAPES_ONLY]
    plan.append(("_scaled_mm", ("default",), _scaled_mm_values))
    for name, overloads, values in plan:
        packet = getattr(torch.ops.aten, name, None)
        for overload in overloads:
            op = getattr(packet, overload, None) if packet is not None else None
            if op is not None and _needs_standin(op):
                yield (name if overload == "default" else f"{name}.{overload}"), op, values


@contextlib.contextmanager
def cuda_only_standins() -> Iterator[list[str]]:
    """While the block runs, the CUDA-only operators above have CPU kernels (nested uses share one set)."""
    with _lock:
        if _state["depth"] == 0:
            library = torch.library.Library("aten", "IMPL")
            names = []
            for name, op, values in _wanted():
                library.impl(name, _standin(op, values), "CPU")
                names.append(name)
            _state.update(library=library, names=names)
        _state["depth"] += 1
    try:
        yield list(_state["names"])
    finally:
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                _state["library"]._destroy()
                _state.update(library=None, names=[])


def _standin(op, values: Callable | None) -> Callable:
    def kernel(*args: Any, **kwargs: Any):
        # Torch function modes (the virtual GPU's device mode) stay out: these are plain CPU tensors.
        with torch._C.DisableTorchFunction():
            shaped = op(*_as_meta(args), **_as_meta(kwargs))
            outputs = tuple(
                _on_cpu(value) for value in (shaped if isinstance(shaped, tuple) else (shaped,))
            )
            if values is not None:
                try:
                    values(outputs, _bound(op, args, kwargs))
                except Exception:  # noqa: BLE001 - an odd case (varlen, fp8 scales): the shapes stay right, values 0
                    pass
        return outputs if isinstance(shaped, tuple) else outputs[0]

    return kernel


def _as_meta(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return torch.empty_strided(
            tuple(value.shape), tuple(value.stride()), dtype=value.dtype, device="meta"
        )
    if isinstance(value, (list, tuple)):
        return type(value)(_as_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_meta(v) for k, v in value.items()}
    return value


def _on_cpu(value: Any) -> Any:
    """A meta output as a CPU tensor of the same sizes, strides and dtype, filled with zeros."""
    if not isinstance(value, torch.Tensor):
        return int(value) if isinstance(value, torch.SymInt) else value
    out = torch.empty_strided(
        tuple(value.shape), tuple(value.stride()), dtype=value.dtype, device="cpu"
    )
    try:
        out.zero_()
    except RuntimeError:  # a dtype the installed torch cannot fill on the CPU: left as allocated
        pass
    return out


def _bound(op, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The call's arguments by their schema names, defaults filled in (the installed torch's schema)."""
    bound: dict[str, Any] = {}
    positional = list(args)
    for argument in op._schema.arguments:
        if positional and not argument.kwarg_only:
            bound[argument.name] = positional.pop(0)
        elif argument.name in kwargs:
            bound[argument.name] = kwargs[argument.name]
        else:
            bound[argument.name] = argument.default_value if argument.has_default_value() else None
    return bound


def _attention_values(layout: str) -> Callable:
    def fill(outputs: tuple, a: dict[str, Any]) -> None:
        if any(
            a.get(n) is not None for n in ("cum_seq_q", "cu_seqlens_q", "cum_seq_k", "cu_seqlens_k")
        ):
            return  # packed variable-length batches: zeros
        q, k, v = a["query"], a["key"], a["value"]
        if layout == "bmhk":
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        # _efficient_attention_forward: 1 top-left causal, 2 bottom-right
        mask = a.get("custom_mask_type") or 0
        causal = "bottom" if mask == 2 else "top" if (a.get("is_causal") or mask == 1) else None
        out, lse = attention_math(
            q, k, v, a.get("attn_bias", a.get("bias")), causal, a.get("scale")
        )
        first = outputs[0].transpose(1, 2) if layout == "bmhk" else outputs[0]
        first.copy_(out)
        second = outputs[1] if len(outputs) > 1 else None
        if isinstance(second, torch.Tensor) and second.dim() >= 3 and second.numel():
            second = second[..., 0] if second.dim() == 4 else second
            n = min(second.shape[-1], lse.shape[-1])
            second[..., :n].copy_(lse[..., :n])

    return fill


def attention_math(q, k, v, bias=None, causal: str | None = None, scale: float | None = None):
    """(output, log-sum-exp) of scaled dot-product attention on (batch, heads, seq, dim) tensors, in float32;
    fewer key/value heads than query heads are shared out (grouped-query attention)."""
    q, k, v = (t.float() for t in (q, k, v))
    if k.size(1) != q.size(1):
        k, v = (t.repeat_interleave(q.size(1) // k.size(1), dim=1) for t in (k, v))
    scores = (q @ k.transpose(-2, -1)) * (
        scale if scale is not None else 1.0 / math.sqrt(q.size(-1))
    )
    if bias is not None:
        scores = scores + bias.float()
    if causal is not None:
        rows, cols = scores.shape[-2:]
        keep = torch.ones(rows, cols, dtype=torch.bool).tril(
            diagonal=0 if causal == "top" else cols - rows
        )
        scores = scores.masked_fill(~keep, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    return torch.softmax(scores, dim=-1).nan_to_num(0.0) @ v, lse


def _scaled_mm_values(outputs: tuple, a: dict[str, Any]) -> None:
    product = (a["self"].float() * a["scale_a"].float()) @ (
        a["mat2"].float() * a["scale_b"].float()
    )
    if a.get("bias") is not None:
        product = product + a["bias"].float()
    outputs[0].copy_(product)
