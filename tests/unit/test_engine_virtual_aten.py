"""CUDA-only ATen operators on the virtual GPU (engine/virtual_gpu/aten.py): a GPU-written Inductor wrapper calls
`torch.ops.aten._scaled_dot_product_efficient_attention` and the like, which torch has only for CUDA. Their CPU
stand-ins give the outputs' sizes and strides the wrapper asserts right after the call, and the math path's
values; outside the virtual GPU there is no CPU kernel at all, as before."""

import math
import re

import pytest
import torch
import torch.nn.functional as F
from conftest import fixture_path

from irscope.engine.triton_compat import Target
from irscope.engine.virtual_gpu.device import virtual_gpu

BLOCK = fixture_path("inductor/h100_t211_block_output_code.py")


def _qkv(b=2, h=4, m=48, n=40, d=32, layout="bhmd", dtype=torch.float32):
    torch.manual_seed(0)
    q, k, v = torch.randn(b, m, h, d), torch.randn(b, n, h, d), torch.randn(b, n, h, d)
    q, k, v = (t.to(dtype) for t in (q, k, v))
    return (q, k, v) if layout == "bmhd" else tuple(t.transpose(1, 2) for t in (q, k, v))


def _reference(q, k, v, causal):
    return F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)


def test_the_efficient_attention_stand_in_gives_what_the_h100_wrapper_asserts_after_it():
    text = open(BLOCK, encoding="utf-8").read()
    call = re.search(
        r"buf5 = torch\.ops\.aten\._scaled_dot_product_efficient_attention\.default\((.*)\)\n", text
    ).group(1)
    views = [
        tuple(eval(g) for g in m)
        for m in re.findall(r"reinterpret_tensor\(buf4, (\([^)]*\)), (\([^)]*\)), (\d+)\)", call)
    ]
    flags = call.rsplit(")", 1)[1]  # ", None, False, 0.0, True"
    size, stride = (
        eval(g)
        for g in re.search(
            r"assert_size_stride\(buf6, (\([^)]*\)), (\([^)]*\)), 'torch\.ops\.aten\._scaled_dot_product_efficient",
            text,
        ).groups()
    )
    assert len(views) == 3 and flags.strip() == ", None, False, 0.0, True"
    # as the wrapper allocates it: empty_strided_cuda((256, 384), (384, 1))
    buf4 = torch.randn(256, 384)
    q, k, v = (torch.as_strided(buf4, s, st, off) for s, st, off in views)
    with virtual_gpu(Target("sm_90")):
        out = torch.ops.aten._scaled_dot_product_efficient_attention.default(
            q, k, v, None, False, 0.0, True
        )
    assert tuple(out[0].shape) == size and tuple(out[0].stride()) == stride
    assert out[0].data_ptr() % 16 == 0  # assert_alignment(buf6, 16)
    assert torch.allclose(out[0], _reference(q, k, v, causal=True), atol=1e-5)
    assert out[1].shape == (4, 4, 0)  # compute_log_sumexp=False: none, as the CUDA kernel gives


@pytest.mark.parametrize("causal", [False, True])
def test_each_sdpa_operator_has_the_meta_shapes_and_the_math_values(causal):
    q, k, v = _qkv()
    expected = _reference(q, k, v, causal)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if causal:
        scores = scores.masked_fill(~torch.ones(48, 40, dtype=torch.bool).tril(), float("-inf"))
    lse = torch.logsumexp(scores, -1)
    aten = torch.ops.aten
    calls = {
        "efficient": lambda q, k, v: aten._scaled_dot_product_efficient_attention(
            q, k, v, None, True, 0.0, causal
        ),
        "flash": lambda q, k, v: aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal),
        "cudnn": lambda q, k, v: aten._scaled_dot_product_cudnn_attention(
            q, k, v, None, True, 0.0, causal
        ),
    }
    on_meta = [torch.empty_strided(t.shape, t.stride(), device="meta") for t in (q, k, v)]
    for name, call in calls.items():
        with virtual_gpu(Target("sm_90")):
            out = call(q, k, v)
            shaped = call(*on_meta)  # torch's meta function: the shapes a GPU run's trace asserts
        for got, want in zip(out, shaped):
            if isinstance(want, torch.Tensor):
                assert (got.shape, got.stride(), got.dtype) == (
                    want.shape,
                    want.stride(),
                    want.dtype,
                ), name
                assert got.device.type == "cpu"
            else:
                assert got == want, name
        assert torch.allclose(out[0], expected, atol=1e-5), name
        logsumexp = out[1][..., 0] if out[1].dim() == 4 else out[1]
        assert torch.allclose(logsumexp[..., :48], lse, atol=1e-5), name


def test_the_lower_attention_forwards_take_batch_seq_heads_dim_and_their_causal_kinds():
    q, k, v = _qkv(m=40, layout="bmhd")
    as_bhmd = [t.transpose(1, 2) for t in (q, k, v)]
    with virtual_gpu(Target("sm_90")):
        eff = torch.ops.aten._efficient_attention_forward(
            q, k, v, None, None, None, None, None, 0.0, 1, True
        )
        flash = torch.ops.aten._flash_attention_forward(
            q, k, v, None, None, 40, 40, 0.0, False, False
        )
    assert eff[0].shape == q.shape and flash[0].shape == q.shape
    assert torch.allclose(eff[0].transpose(1, 2), _reference(*as_bhmd, causal=True), atol=1e-5)
    assert torch.allclose(flash[0].transpose(1, 2), _reference(*as_bhmd, causal=False), atol=1e-5)


def test_half_precision_inputs_give_half_precision_outputs():
    q, k, v = _qkv(dtype=torch.float16)
    with virtual_gpu(Target("sm_90")):
        out = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, True)
    assert out[0].dtype == torch.float16 and out[1].dtype == torch.float32
    assert torch.allclose(out[0].float(), _reference(q, k, v, causal=True), atol=2e-3)


def test_a_backward_operator_gets_zero_gradients_of_the_right_shapes():
    q, k, v = _qkv()
    with virtual_gpu(Target("sm_90")):
        out, lse, seed, offset = torch.ops.aten._scaled_dot_product_efficient_attention(
            q, k, v, None, True, 0.0, False
        )
        grads = torch.ops.aten._scaled_dot_product_efficient_attention_backward(
            torch.ones_like(out),
            q,
            k,
            v,
            None,
            out,
            lse,
            seed,
            offset,
            0.0,
            [True, True, True, False],
        )
    for grad, like in zip(grads[:3], (q, k, v)):
        assert grad.shape == like.shape and not grad.any()


def test_the_stand_ins_exist_only_while_the_virtual_gpu_does():
    q, k, v = _qkv()
    name = "aten::_scaled_dot_product_efficient_attention"
    assert not torch._C._dispatch_has_kernel_for_dispatch_key(name, "CPU")
    with virtual_gpu(Target("sm_90")):
        # nested: one set of registrations, kept until the outer one ends
        with virtual_gpu(Target("sm_90")):
            assert torch._C._dispatch_has_kernel_for_dispatch_key(name, "CPU")
        assert torch._C._dispatch_has_kernel_for_dispatch_key(name, "CPU")
    assert not torch._C._dispatch_has_kernel_for_dispatch_key(name, "CPU")
    with pytest.raises(NotImplementedError, match="CPU"):
        torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, None, False)
