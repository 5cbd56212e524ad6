"""The coalescing text of a narrow access (misaligned.py): it blames what kept the access narrow, as the
report's findings do, and says sectors requested and moved apart instead of "4× the traffic"."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from conftest import kernel_path
from irscope.tui.panels.coalescing import access_summary
from tui_helpers import open_view, source_line_of

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
    assert "aligned" not in said and "aligned" not in load.fix  # the pointers are aligned: not the cause
    assert load.fix.startswith("Pad n_elements to a multiple of 16")
    assert "memory system moves" not in said and "less traffic" not in said
    c = load.counts
    assert f"Sectors requested: {c.cost:.1f}× the ideal ({c.sectors} for {c.requests} requests)" in said
    assert "sectors moved: 1.0× the bytes used (L1 serves the loads' re-reads)" in said
    assert "4× the instructions and requests, not 3.9× the memory traffic" in said
    summary = _text(access_summary(load, result))
    assert "3.9× the sectors requested, 1.0× moved" in summary and "excess bytes" not in summary


def test_the_store_says_l2_merges_its_writes(n1000):
    result = n1000.call("coalescing")
    store = next(a for a in result.accesses if a.kind == "store")
    assert "L2 merges the stores' partial writes" in store.diagnosis
    assert "n_elements = 1000" in store.diagnosis
