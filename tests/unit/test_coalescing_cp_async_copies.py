"""How a cp.async copy's global side is counted (coalescing_requests.py), on this Triton's own compilations:
which threads issue it, and how its sectors are counted. The H100's measurements behind both rules are in
test_validation_measured_run4_copies.py (Triton 3.6, the binaries ncu profiled)."""

import os
import re

import numpy as np
from conftest import ROOT, fixture_path

from irscope.analysis.coalescing.requests import ASYNC_COPY, count_requests
from irscope.analysis.coalescing.sectors import analyze_coalescing
from irscope.analysis.layouts.owners import linear_layout
from irscope.engine.session import open_file


def test_a_scalar_pipelined_into_cp_async_is_copied_by_one_thread_of_the_block():
    """The per-step scale (pipelined_scale.py line 17) becomes a one-element cp.async that all 128 threads hold;
    the PTX predicates it (`@%p cp.async`, `%p` set from the thread id), so one thread of one warp copies it:
    one request and one sector an execution, not one a warp as for a load."""
    ws = open_file(fixture_path("pipelined_scale.py"), target="sm_90")
    comp = ws.compile_all()[0]
    ptx = comp.stage("ptx").splitlines()
    guarded = [
        text.strip()
        for index, text in enumerate(ptx)
        if "cp.async.c" in text
        and "shared.global" in text
        and comp.source_map.source_line("ptx", index) == 17
    ]
    assert guarded and all(re.match(r"@%p\d+ cp\.async", text) for text in guarded), guarded
    result = analyze_coalescing(comp, max_programs=10**6)
    (scale,) = [a for a in result.accesses if a.source_line == 17]
    assert scale.op == ASYNC_COPY and scale.shape == (1,)
    executions = 2 * 4  # programs x STEPS
    assert scale.executions == executions
    assert (scale.counts.requests, scale.counts.sectors) == (executions, executions)
    # the same addresses counted as a load (every warp issues it) give one request a warp
    layout = linear_layout(*_parsed(comp, scale))
    as_load = count_requests(np.zeros(1, np.int64), None, 4, layout, 1, "load", want_picture=False)
    assert (as_load.counts.requests, as_load.counts.sectors) == (4, 4)


def _parsed(comp, access):
    from irscope.analysis.coalescing.match import source_line_lookup
    from irscope.analysis.memory.ttgir import ttgir_access_ops

    ops = ttgir_access_ops(comp.stage("ttgir"), source_line_lookup(comp, "ttgir"), comp.kernel.file)
    op = next(o for o in ops if o.index == access.stage_line)
    return op.layout, op.shape


def test_a_16_byte_copy_whose_phases_read_the_same_sectors_counts_them_in_each_phase():
    """Tutorial 09 at M = N = K = 32 with 128 x 64 tiles: the masked rows wrap to row 0 (`tl.where(offs <
    M, offs, 0)`), so the 8-lane phases of a 16-byte copy read the same two sectors again. The H100 counted
    2 in each phase, 256 a line over the launch (test_validation_measured_run4_copies.py); the warp's distinct sectors
    would be 112."""
    ws = open_file(
        os.path.join(ROOT, "tests/corpus/tutorials/triton-3.6/09-persistent-matmul.py"),
        target="sm_90",
    )
    comp = ws.compile(ws.kernel("matmul_kernel"))[0]
    result = analyze_coalescing(comp, max_programs=10**6)
    copies = {a.source_line: a for a in result.accesses if a.op == ASYNC_COPY}
    assert {
        line: (copies[line].width_bytes, copies[line].counts.sectors) for line in (131, 132)
    } == {131: (16, 256), 132: (16, 256)}
