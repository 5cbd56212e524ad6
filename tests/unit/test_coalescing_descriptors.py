"""Kernels that load and store through host tensor descriptors (tutorial 09, tutorial 06 on Hopper): their
programs are recorded on the descriptors' tensors, so traffic is counted and coalescing says why it leaves
the TMA copies out, instead of calling every access out of bounds."""

import pytest
from conftest import fixture_path

from irscope.analysis.coalescing.sectors import analyze_coalescing
from irscope.analysis.roofline import roofline
from irscope.engine.session import open_file


@pytest.fixture(scope="module")
def copy_rows():
    ws = open_file(fixture_path("autotune_descriptors.py"), target="sm_90", compile_ahead=False)
    return ws.compile_all()[0]  # BLOCK=128: 2 programs copy 128 x 32 floats each


def test_each_descriptor_is_a_region_named_by_its_parameter(copy_rows):
    rec = copy_rows.record_program(0, with_locals=False)
    assert rec.error is None
    x = copy_rows.launch.args[0].base
    assert rec.regions["x_desc"].end - rec.regions["x_desc"].start == x.numel() * 4
    assert [(a.kind, a.param, a.line) for a in rec.accesses] == [
        ("load", "x_desc", 21),
        ("store", "y_desc", 21),
    ]
    assert (
        rec.accesses[0].byte_offsets.min() == 0
        and rec.accesses[0].byte_offsets.max() == 128 * 32 * 4 - 4
    )


def test_the_tiles_bytes_are_the_launchs_traffic(copy_rows):
    roof = roofline(copy_rows)
    assert roof.error is None
    by_name = {a.name: a for a in roof.arguments}
    assert by_name["x_desc"].read_bytes == 256 * 32 * 4 and by_name["x_desc"].write_bytes == 0
    assert by_name["y_desc"].write_bytes == 256 * 32 * 4 and by_name["y_desc"].read_bytes == 0


def test_coalescing_names_the_tma_copies_it_leaves_out(copy_rows):
    result = analyze_coalescing(copy_rows)
    assert result.error is None and result.accesses == []
    assert result.notes == [
        "line 21: 2 load(s) through a tensor descriptor (ttng.async_tma_copy_global_to_local: the whole tile "
        "is copied, no thread issues these addresses): not counted in coalescing",
        "line 21: 2 store(s) through a tensor descriptor (ttng.async_tma_copy_local_to_global: the whole "
        "tile is copied, no thread issues these addresses): not counted in coalescing",
    ]
