"""Per-line marks for the stage panes and the source, on real compiler output."""

import dataclasses

import pytest
from conftest import kernel_path

from irscope.analysis.marks import MARK_LEGEND, MARKS, line_marks
from irscope.engine.compile.compilation import compile_launch
from irscope.engine.session import open_file


@pytest.fixture(scope="module")
def add_sm90():
    return open_file(kernel_path("add.py"), target="sm_90").compile_all()[0]


def marked(comp, stage, mark):
    return sorted(i for i, marks in line_marks(comp, stage).items() if mark in marks)


def test_add_every_stage_marks_its_global_accesses_vector_and_masked(add_sm90):
    for stage in ("ttir", "ttgir", "llir", "ptx", "sass"):
        lines = add_sm90.stage(stage).splitlines()
        vector = marked(add_sm90, stage, "vector")
        assert vector, stage
        assert not marked(add_sm90, stage, "scalar"), stage
        assert all(
            any(
                k in lines[i]
                for k in ("tt.load", "tt.store", "ld.global", "st.global", "LDG", "STG")
            )
            for i in vector
        ), stage
    # source lines 26-28 (0-based 25-27) hold the loads and the store
    assert line_marks(add_sm90, "source") == {
        25: {"vector", "masked"},
        26: {"vector", "masked"},
        27: {"vector", "masked"},
    }


def test_misaligned_is_scalar_from_ttir_down():
    comp = open_file(kernel_path("misaligned.py"), target="sm_90").compile_all()[0]
    for stage in ("source", "ttir", "ttgir", "ptx", "sass"):
        assert marked(comp, stage, "scalar") and not marked(comp, stage, "vector"), stage


def test_transpose_marks_convert_layout_and_shared():
    comp = open_file(kernel_path("transpose.py"), target="sm_90").compile_all()[0]
    ttgir = comp.stage("ttgir").splitlines()
    assert [
        ttgir[i].strip().split(" = ")[1].split()[0] for i in marked(comp, "ttgir", "convert_layout")
    ] == ["ttg.convert_layout"]
    assert marked(comp, "ptx", "shared") and marked(comp, "sass", "shared")
    store_line = next(i for i, t in enumerate(comp.source_text.splitlines()) if "tl.trans" in t)
    assert {"convert_layout", "shared", "vector"} <= line_marks(comp, "source")[store_line]


def test_spills_are_marked_on_sass_and_source():
    base = open_file(kernel_path("matmul.py"), target="sm_80").compile_all()[0]
    squeezed = dataclasses.replace(base.launch, kwargs={**base.launch.kwargs, "maxnreg": 32})
    comp = compile_launch(squeezed, base.target, base.source_text)
    # spills live in the stack frame
    assert comp.resources.registers == 32 and comp.resources.spills > 0
    sass = comp.stage("sass").splitlines()
    spill_lines = marked(comp, "sass", "spill")
    assert spill_lines and all(("STL" in sass[i] or "LDL" in sass[i]) for i in spill_lines)
    assert any("spill" in m for m in line_marks(comp, "source").values())
    assert not marked(base, "sass", "spill")


def test_legend_covers_every_mark():
    assert set(MARK_LEGEND) == set(MARKS)


def test_amd_scratch_spills_are_marked():
    comp = open_file(kernel_path("attention.py"), target="gfx942").compile_all()[0]
    assert comp.resources.vgpr_spills > 0
    amdgcn = comp.stage("amdgcn").splitlines()
    spills = marked(comp, "amdgcn", "spill")
    assert spills and all(amdgcn[i].strip().startswith("scratch_") for i in spills)
    assert any("spill" in m for m in line_marks(comp, "source").values())


def test_the_tui_has_a_colour_for_every_mark():
    from irscope.tui.widgets.stage_rows import MARK_COLOURS

    assert set(MARK_COLOURS) == set(MARKS)
