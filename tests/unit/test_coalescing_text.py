"""The coalescing text of a narrow access (misaligned.py): it blames what kept the access narrow, as the
report's findings do, and says sectors requested and moved apart instead of "4× the traffic"."""

from __future__ import annotations

import io

import pytest
from conftest import kernel_path
from rich.console import Console
from tui_helpers import open_view, source_line_of

from irscope.tui.panels.coalescing import access_summary

MISALIGNED = kernel_path("misaligned.py")


@pytest.fixture(scope="module")
def n1000():
    """misaligned.py's first launch: n_elements = 1000, aligned tensors."""
    session, comp = open_view(MISALIGNED)
    yield comp
    session.close()


def _text(renderable) -> str:
    console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_the_load_blames_n_1000_not_alignment_and_says_requested_and_moved(n1000):
    result = n1000.call("coalescing")
    line = source_line_of(MISALIGNED, "x = tl.load(")
    load = next(a for a in result.accesses if a.source_line == line and a.kind == "load")
    assert load.cause == "narrow_access"
    said = load.diagnosis
    assert "n_elements = 1000, which is not a multiple of 16" in said
    # the pointers are aligned: not the cause
    assert "aligned" not in said and "aligned" not in load.fix
    assert load.fix.startswith("Pad n_elements to a multiple of 16")
    assert "memory system moves" not in said and "less traffic" not in said
    c = load.counts
    assert (
        f"Sectors requested: {c.cost:.1f}× the ideal ({c.sectors} for {c.requests} requests)"
        in said
    )
    assert "sectors moved: 1.0× the bytes used (L1 serves the loads' re-reads)" in said
    assert "4× the instructions and requests, not 3.9× the memory traffic" in said
    summary = _text(access_summary(load, result))
    assert "3.9× the sectors requested, 1.0× moved" in summary and "excess bytes" not in summary


def test_the_store_says_l2_merges_its_writes(n1000):
    result = n1000.call("coalescing")
    store = next(a for a in result.accesses if a.kind == "store")
    assert "L2 merges the stores' partial writes" in store.diagnosis
    assert "n_elements = 1000" in store.diagnosis


@pytest.fixture(scope="module")
def shared_storage():
    from conftest import fixture_path

    from irscope.engine.session import open_file

    return {
        c.kernel.name: c
        for c in open_file(fixture_path("shared_storage.py"), target="sm_90").compile_all()
    }


@pytest.mark.parametrize("kernel, second", [("qk_product", "k_ptr"), ("halves_sum", "b_ptr")])
def test_views_of_one_storage_keep_their_own_names(shared_storage, kernel, second):
    """q, k = qk.unbind(0) and x[:, :D], x[:, D:]: every address lies in the storage of the first view, but
    the second view's loads are its own (in the recording, the stepper's locals and the coalescing rows)."""
    import numpy as np

    from irscope.analysis.coalescing.sectors import analyze_coalescing
    from irscope.engine.recording import record_program

    comp = shared_storage[kernel]
    rec = record_program(comp.launch, 1)
    loads = [a for a in rec.accesses if a.kind == "load"]
    assert [a.param for a in loads] == [loads[0].param, second] and loads[0].param != second
    # the same element offsets, each in its own view
    assert np.array_equal(loads[0].offsets, loads[1].offsets)
    at_second = next(s for s in rec.steps if second in s.locals and s.line == loads[1].line)
    assert at_second.locals[second].param == second
    rows = analyze_coalescing(comp).accesses
    assert [a.param for a in rows if a.kind == "load"] == [loads[0].param, second]


def test_a_pointer_is_named_after_the_argument_it_is_computed_from(shared_storage):
    """whole_and_head(qk.view(-1), q): both loads read q's elements; the kernel's arithmetic starts the first
    from whole_ptr, and the coalescing rows say so (the addresses alone would pick the smaller view, q)."""
    from irscope.analysis.coalescing.sectors import analyze_coalescing

    rows = analyze_coalescing(shared_storage["whole_and_head"]).accesses
    assert [(a.kind, a.param) for a in rows] == [
        ("load", "whole_ptr"),
        ("load", "head_ptr"),
        ("store", "out_ptr"),
    ]
    assert rows[0].counts.sectors == rows[1].counts.sectors  # the same bytes, counted the same
