"""A load the compiler makes in two layouts inside a loop (tests/fixtures/two_layout_loop.py): both loads
run every trip, and both are counted. test_coalescing_counting.py has the case outside a loop (Liger's RoPE)."""

from conftest import fixture_path

from irscope.analysis.coalescing.sectors import analyze_coalescing
from irscope.analysis.memory.ops import memory_ops, primary_stage
from irscope.engine.session import open_file

TRIPS, WARPS = 16, 4  # the fixture's T and Triton's default num_warps, one program


def test_a_load_made_in_two_layouts_inside_a_loop_is_counted_in_each_every_trip():
    """Line 17 loads `q` once a trip; Triton loads it in a slice layout and again in a blocked one, and the PTX
    has both loads in the loop body. The interpreter records one access a trip, so a program records 16 at the
    site against 2 TTGIR ops, and the rule that split a site only where a program recorded fewer accesses than
    ops (right for Liger's RoPE, outside a loop) counted the slice layout alone. fla's fused recurrent backward
    loads `b_q` and `b_k` so (lines 339/340): 65,536 sectors predicted, 69,632 measured on the H100, now equal
    (tests/functional/test_validation_measured_run4_copies.py). The requests now equal the PTX's
    loads on the line, every warp, every
    trip."""
    ws = open_file(fixture_path("two_layout_loop.py"), target="sm_90", compile_ahead=False)
    comp = ws.compile_all()[0]
    assert comp.num_warps == WARPS
    ptx_loads = [
        op
        for op in memory_ops(comp, [primary_stage(comp)])
        if op.source_line == 17 and op.op == "load"
    ]
    result = analyze_coalescing(comp)
    entries = [e for e in result.accesses if e.source_line == 17 and e.kind == "load"]
    assert len(entries) == 2 and len({e.layout for e in entries}) == 2
    assert all(e.executions == TRIPS for e in entries)
    # 32 for the slice layout (32 elements a thread), 1 for the blocked one
    assert len(ptx_loads) == 33
    assert sum(e.counts.requests for e in entries) == len(ptx_loads) * WARPS * TRIPS
