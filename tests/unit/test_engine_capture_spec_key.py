"""The capture's stand-in for the JIT's specialization (engine/capture/spec_key.py) never merges two launches the
JIT compiles apart."""

import pytest
import torch
import triton
import triton.language as tl

from irscope.engine.capture.spec_key import specialization_key


@triton.jit
def copy_tile(desc, n, BLOCK: tl.constexpr):
    pass


def test_descriptors_with_other_block_shapes_are_other_launches():
    """A descriptor's block shape is part of its type: an H200 run of Gluon tutorial 05 took six block shapes
    of one matmul for repeats of one launch (block sizes keyed as plain ints: multiples of 16 all) and did not
    capture five of its compilations."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    x = torch.zeros(256, 256)
    wide = TensorDescriptor.from_tensor(x, [64, 128])
    tall = TensorDescriptor.from_tensor(x, [128, 64])
    again = TensorDescriptor.from_tensor(x, [64, 128])
    key = lambda desc, n: specialization_key(copy_tile, (desc, n, 64), {}, None)  # noqa: E731
    assert key(wide, 256) != key(tall, 256)
    assert key(wide, 256) == key(again, 256)
    assert key(wide, 256) == key(wide, 512)  # a runtime int: both multiples of 16


def test_gluon_descriptors_with_other_layouts_are_other_launches():
    gluon_hopper = pytest.importorskip("triton.experimental.gluon.nvidia.hopper")
    from triton.experimental.gluon import language as gl

    x = torch.zeros(256, 256, dtype=torch.float16)
    layouts = [
        gl.NVMMASharedLayout.get_default_for(block, gl.float16) for block in ([128, 64], [64, 64])
    ]
    keys = {
        specialization_key(
            copy_tile,
            (gluon_hopper.TensorDescriptor.from_tensor(x, block, layout), 256, 64),
            {},
            None,
        )
        for block, layout in zip(([128, 64], [64, 64]), layouts)
    }
    assert len(keys) == 2
