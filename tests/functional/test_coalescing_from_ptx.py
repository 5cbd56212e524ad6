"""Coalescing from the PTX (what a Gluon kernel gets, which Triton's interpreter cannot run) against coalescing
from the interpreter's recorded addresses, on Triton kernels where both can run: two independent ways to the
addresses each lane touches (one steps the compiled PTX per thread, the other runs the source program and maps
elements to lanes through the layout), which must count the same requests and sectors for every source line,
kind and argument. Real compiles of the examples; the examples cover masks, strides, a misaligned start, a
transpose, reductions and cp.async copies to shared memory (matmul)."""

import pytest
from conftest import kernel_path

from irscope.analysis.coalescing.from_ptx import ptx_coalescing
from irscope.analysis.coalescing.requests import Counts
from irscope.analysis.coalescing.sectors import KernelCoalescing, analyze_coalescing
from irscope.engine.session import open_file

EXAMPLES = [
    "add.py",
    "softmax.py",
    "matmul.py",
    "transpose.py",
    "strided.py",
    "misaligned.py",
    "layernorm.py",
]


def _counts(result: KernelCoalescing) -> dict:
    return {
        (a.source_line, a.kind, a.param): (
            a.counts.requests,
            a.counts.sectors,
            a.counts.ideal_sectors,
        )
        for a in result.accesses
    }


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_ptx_and_the_interpreter_count_the_same_sectors(example):
    ws = open_file(kernel_path(example), target="sm_90", compile_ahead=False)
    comps = [comp for comp in ws.compile_all() if comp.ok]
    assert comps
    for comp in comps:
        recorded = analyze_coalescing(comp)
        assert recorded.error is None and recorded.accesses, recorded.error
        from_ptx = KernelCoalescing(comp.kernel.name, recorded.grid, [], [], Counts(), Counts())
        ptx_coalescing(comp, recorded.programs, from_ptx)
        assert from_ptx.error is None
        assert not [n for n in from_ptx.notes if "not counted" in n or "stopped early" in n], (
            from_ptx.notes
        )
        assert _counts(from_ptx) == _counts(recorded)


LONG_LOOP = """
import torch
import triton
import triton.language as tl


@triton.jit
def long_sum(x_ptr, out_ptr, n_iter, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(n_iter):
        total += tl.load(x_ptr + i * BLOCK + offsets)
    tl.store(out_ptr + offsets, total)


x = torch.ones(3000 * 128, device="cuda")
out = torch.empty(128, device="cuda")
long_sum[(1,)](x, out, 3000, BLOCK=128, num_warps=4)
"""


def test_a_long_loop_is_cut_after_a_count_of_executions_with_its_sectors_per_request(tmp_path):
    """A benchmark-sized launch loops long in each program (Gluon tutorial 03's adds ran for minutes); the PTX
    run stops after a count of executions, the same on a busy machine as on an idle one, and says so."""
    path = tmp_path / "long_loop.py"
    path.write_text(LONG_LOOP)
    ws = open_file(str(path), target="sm_90", compile_ahead=False)
    (comp,) = [comp for comp in ws.compile_all() if comp.ok]
    result = KernelCoalescing(comp.kernel.name, (1, 1, 1), [], [], Counts(), Counts())
    ptx_coalescing(comp, [(0, 0, 0)], result)
    assert (
        "the PTX run stopped early: stopped after 1024 executions of its global accesses"
        in result.notes
    )
    (load,) = [a for a in result.accesses if a.kind == "load"]
    assert load.counts.requests <= 1024 * 4 and load.counts.sectors == 4 * load.counts.requests
