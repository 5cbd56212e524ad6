"""Why an access is not vectorized, and the what-if recompile that proves the fix, on real kernels."""

import pytest
from conftest import kernel_path

from irscope.analysis.vectorize.what_if import what_if
from irscope.analysis.vectorize.why_not import why_not_vectorized
from irscope.engine.session import open_file


@pytest.fixture(scope="module")
def misaligned():
    return open_file(kernel_path("misaligned.py"), target="sm_90").compile_all()


def kinds(diag):
    return {(r.kind, r.arg) for r in diag.reasons}


def test_odd_length_names_the_int_behind_the_mask(misaligned):
    odd = misaligned[0]  # n_elements = 1000
    diags = why_not_vectorized(odd)
    assert [(d.op, d.pointer, d.width_bytes) for d in diags] == [
        ("load", "x_ptr", 4),
        ("load", "y_ptr", 4),
        ("store", "out_ptr", 4),
    ]
    for d in diags:
        assert kinds(d) == {("mask_not_divisible", "n_elements")}
        assert "n_elements = 1000" in d.reasons[0].text and "multiple of 16" in d.reasons[0].fix


def test_misaligned_views_name_the_pointers(misaligned):
    shifted = misaligned[1]  # x[1:], y[1:], n = 4095
    diags = {d.pointer: d for d in why_not_vectorized(shifted)}
    assert ("unaligned_pointer", "x_ptr") in kinds(diags["x_ptr"])
    assert ("unaligned_pointer", "y_ptr") in kinds(diags["y_ptr"])
    assert "4 bytes past a 16-byte boundary" in next(
        r.text for r in diags["x_ptr"].reasons if r.kind == "unaligned_pointer"
    )
    assert all(d.width_bytes == 4 for d in diags.values())


def test_what_if_recompiles_to_16_byte_accesses(misaligned):
    assert len(misaligned) == 2
    for comp in misaligned:
        result = what_if(comp)
        assert result is not None and result.comp.ok and result.improved
        assert {(r["op"], r["before"], r["after"]) for r in result.rows} == {
            ("load", 4, 16),
            ("store", 4, 16),
        }
    shifted = what_if(misaligned[1])
    assert shifted.changes == [
        "x_ptr an aligned copy",
        "y_ptr an aligned copy",
        "n_elements 4095 -> 4096",
    ]
    assert shifted.comp.specialization == {
        "x_ptr": "D",
        "y_ptr": "D",
        "out_ptr": "D",
        "n_elements": "D",
    }


def test_constant_stride_is_named():
    comp = open_file(kernel_path("strided.py"), target="sm_90").compile_all()[0]
    diags = why_not_vectorized(comp)
    assert [(d.op, d.width_bytes) for d in diags] == [("load", 4)]
    assert kinds(diags[0]) == {("constant_stride", None)}
    assert "8 elements apart" in diags[0].reasons[0].text
    assert what_if(comp, diags) is None  # nothing about the launch to change


def test_vectorized_kernel_has_nothing_to_explain():
    comp = open_file(kernel_path("add.py"), target="sm_90").compile_all()[0]
    assert why_not_vectorized(comp) == []
    every = why_not_vectorized(comp, only_narrow=False)
    assert [d.width_bytes for d in every] == [16, 16, 16] and all(not d.reasons for d in every)


def test_amd_why_and_what_if():
    comp = open_file(kernel_path("misaligned.py"), target="gfx942").compile_all()[0]
    diags = why_not_vectorized(comp)
    assert [(d.source_line, d.width_bytes) for d in diags] == [(25, 4), (26, 4), (27, 4)]
    assert all(kinds(d) == {("mask_not_divisible", "n_elements")} for d in diags)
    assert {(r["before"], r["after"]) for r in what_if(comp, diags).rows} == {(4, 16)}


def test_row_offsets_are_offsets_not_strides_and_the_what_if_pads_them():
    comp = open_file(kernel_path("softmax.py"), target="sm_90").compile_all()[0]  # 781 columns
    diags = why_not_vectorized(comp)
    assert {(d.op, d.pointer) for d in diags} == {("load", "in_ptr"), ("store", "out_ptr")}
    load = next(d for d in diags if d.op == "load")
    assert kinds(load) == {("unaligned_offset", "in_row_stride"), ("mask_not_divisible", "n_cols")}
    result = what_if(comp, diags)
    assert result.changes == [
        "in_row_stride 781 -> 784",
        "out_row_stride 781 -> 784",
        "n_cols 781 -> 784",
    ]
    assert {(r["op"], r["before"], r["after"]) for r in result.rows} == {
        ("load", 4, 16),
        ("store", 4, 16),
    }
    assert result.remaining == []


def test_single_element_stores_are_not_diagnosed_and_the_layout_remains():
    comp = open_file(kernel_path("helper.py"), target="sm_90").compile_all()[
        0
    ]  # BLOCK 256, 4 warps
    diags = why_not_vectorized(comp)
    assert [(d.op, d.pointer) for d in diags] == [
        ("load", "x_ptr")
    ]  # not the per-row sum/max stores
    result = what_if(comp, diags)
    assert [(r["before"], r["after"]) for r in result.rows] == [(4, 8)]
    # after the fix, 2 elements per thread is what is left: the layout is the reason
    assert [[r.kind for r in d.reasons] for d in result.remaining] == [["layout"]]
    assert "sizePerThread = [2]" in result.remaining[0].reasons[0].text


def test_mma_layout_store_is_explained_by_triton_contiguity():
    comp = open_file(kernel_path("attention.py"), target="gfx942").compile_all()[0]
    diags = why_not_vectorized(comp)
    store = next(d for d in diags if d.op == "store")
    assert store.width_bytes == 8 and store.contiguous_per_thread == 4
    result = what_if(comp, diags)
    # the launch fix does not change it
    assert result.rows and all(r["before"] == r["after"] for r in result.rows)
    remaining = [r for d in result.remaining for r in d.reasons]
    assert [r.kind for r in remaining] == ["layout"] and "contiguity = 4" in remaining[0].text


def test_runtime_stride_and_its_what_if():
    from conftest import fixture_path

    comps = {
        c.kernel.name: c
        for c in open_file(fixture_path("memory_kinds.py"), target="sm_90").compile_all()
    }
    # atomics act per element: nothing to explain
    assert why_not_vectorized(comps["histogram"]) == []
    diags = why_not_vectorized(comps["strided_read"])  # src_ptr + offs * stride, stride = 3
    assert [(d.op, d.width_bytes, [(r.kind, r.arg) for r in d.reasons]) for d in diags] == [
        ("load", 4, [("runtime_stride", "stride")])
    ]
    result = what_if(comps["strided_read"], diags)
    assert result.changes == ["stride 3 -> 1 (contiguous)"]
    assert [(r["before"], r["after"]) for r in result.rows] == [(4, 16)]


def test_do_not_specialize_is_named_not_misread_as_odd():
    from conftest import fixture_path

    comps = {
        c.kernel.name: c
        for c in open_file(fixture_path("specialize.py"), target="sm_90").compile_all()
    }
    diags = why_not_vectorized(comps["unspecialized_copy"])  # n = 4096, do_not_specialize=["n"]
    assert diags and all(kinds(d) == {("not_specialized", "n")} for d in diags)
    assert "n = 4096 is a multiple of 16" in diags[0].reasons[0].text
    # nothing about the launch would change it
    assert what_if(comps["unspecialized_copy"], diags) is None


def test_store_of_a_loop_carried_pointer_names_the_pointer_not_the_value():
    from conftest import fixture_path

    comp = open_file(fixture_path("loop_carried_store.py"), target="sm_90").compile_all()[0]
    diags = {d.op: d for d in why_not_vectorized(comp)}
    # the loop yields (sum of x, pointer into out): the store's address is the second result alone
    assert diags["store"].pointer == "out_ptr"
    assert kinds(diags["store"]) == {("unaligned_pointer", "out_ptr")}
    assert kinds(diags["load"]) == {("unaligned_pointer", "x_ptr")}


def test_a_runtime_row_stride_is_a_row_offset_not_a_stride_between_elements():
    """padded_rows.py: `rows[:, None] * row_stride` moves whole rows (row_stride = 33 elements); the columns
    are contiguous. The reason is the offset that is not a multiple of 16, not a stride to make 1."""
    from conftest import fixture_path

    comp = open_file(fixture_path("padded_rows.py"), target="sm_90").compile_all()[0]
    load = next(d for d in why_not_vectorized(comp) if d.op == "load")
    assert kinds(load) == {("unaligned_offset", "row_stride")}
    assert "row_stride = 33, which is not a multiple of 16" in load.reasons[0].text
    assert what_if(comp, [load]).changes == ["row_stride 33 -> 48"]
