"""The plain-words explainer, on real compiler output of the example kernels."""

import re

import pytest
from conftest import kernel_path

from irscope.engine.session import open_file
from irscope.ir.explain import explain_line, explain_stage, layouts


@pytest.fixture(scope="module")
def add90():
    return open_file(kernel_path("add.py"), target="sm_90").compile_all()[0]


@pytest.fixture(scope="module")
def matmul90():
    return open_file(kernel_path("matmul.py"), target="sm_90").compile_all()[0]


def test_ptx_vector_load_in_words():
    e = explain_line("ptx", "@%p1 ld.global.v4.b32 {%r1,%r2,%r3,%r4}, [%rd1];")
    assert e.known and e.op == "ld.global.v4.b32"
    assert e.text.startswith("If predicate %p1 is true for this thread")
    assert "load 4 × 32 bits = 16 bytes from global memory at %rd1 into 4 registers" in e.text


def test_ptx_operands_fill_templates():
    e = explain_line("ptx", "setp.lt.s32 \t%p1, %r5, %r3;")
    assert "%p1 = (%r5 < %r3)" in e.text and "signed 32-bit" in e.text
    shfl = explain_line("ptx", "shfl.sync.bfly.b32 \t%r8, %r7, 16, 31, -1;")
    assert "lane (this lane XOR 16)" in shfl.text
    cp = explain_line("ptx", "cp.async.cg.shared.global [ %r1 + 0 ], [ %rd5 + 0 ], 0x10, %r9;")
    assert "copy 0x10 bytes from global memory at %rd5 to shared memory at %r1" in cp.text.lower()


def test_unknown_modifier_is_reported_not_hidden():
    e = explain_line("ptx", "add.frobnicate.s32 %r1, %r2, %r3;")
    assert not e.known and ".frobnicate" in e.unknown


def test_real_add_ptx_loads_are_16_bytes_and_masked(add90):
    ptx = add90.stage("ptx")
    loads = [explain_line("ptx", line) for line in ptx.splitlines() if "ld.global" in line]
    assert loads and all("16 bytes from global memory" in e.text for e in loads)
    assert all(e.text.startswith("If predicate") for e in loads)


@pytest.mark.parametrize("stage", ["ttir", "ttgir", "ptx"])
def test_every_line_of_add_is_explained(add90, stage):
    explained = explain_stage(stage, add90.stage(stage), add90)
    missing = {e.op for e in explained if e.op and not e.known}
    assert not missing


def test_blocked_layout_names_each_threads_elements(add90):
    ttgir = add90.stage("ttgir")
    line = next(line for line in ttgir.splitlines() if "tt.load" in line)
    e = explain_line("ttgir", line, add90)
    words = " ".join(e.details)
    # sizePerThread 4, 32 threads, 4 warps over 1024 elements: thread 0 holds 0..3 and 512..515.
    assert "thread 0 owns elements 0..3, 512..515" in words
    assert "thread 1 owns elements 4..7" in words


def test_blocked_owned_matches_hand_computation():
    p = {"sizePerThread": [1, 4], "threadsPerWarp": [2, 16], "warpsPerCTA": [4, 1], "order": [1, 0]}
    rows, cols = layouts.blocked_owned(p, [64, 64], 17)  # lane 17 = row 1, column group 1 of warp 0
    assert cols == [4, 5, 6, 7] and rows[:2] == [1, 9]


def test_matmul_layouts_are_all_explained(matmul90):
    ttgir = matmul90.stage("ttgir")
    kinds = {
        explain_line("ttgir", line).op
        for line in ttgir.splitlines()
        if line.startswith("#") and " = #" in line
    }
    assert "#ttg.nvidia_mma" in kinds and "#ttg.nvmma_shared" in kinds
    dot = next(line for line in ttgir.splitlines() if "ttng.warp_group_dot " in line)
    e = explain_line("ttgir", dot, matmul90)
    assert e.known and "wgmma" in e.text
    assert any("Dot-operand layout" in d or "tensor-core accumulator" in d for d in e.details)


def test_sass_load_width_and_control_field(add90):
    sass = add90.stage("sass")
    line = next(line for line in sass.splitlines() if "LDG.E.128" in line)
    e = explain_line("sass", line, add90)
    assert e.known and "load 16 bytes per thread from global memory" in e.text
    # @!P0: the mask is the predicate's negation
    assert e.text.startswith("If predicate P0 is false")
    control = [d for d in e.details if d.startswith("control [")]
    # decoded from the cubin's encoding: the load sets a scoreboard barrier
    assert control, e.details
    assert any("write scoreboard SB" in d for d in e.details)


def test_sass_control_field_decoding():
    from irscope.ir.explain.sass import Control

    # High word of `LDC.64 R2, c[0x0][0x210]` on sm_90: stall 1, writes scoreboard 1, no waits.
    c = Control.from_high_word(0x000E620000000A00)
    assert (c.stall, c.write_barrier, c.read_barrier, c.wait_mask, c.reuse) == (1, 1, None, 0, 0)


def test_llvm_inline_ptx_is_explained_as_ptx(add90):
    llir = add90.stage("llir")
    line = next(line for line in llir.splitlines() if "ld.global" in line and "asm" in line)
    e = explain_line("llir", line, add90)
    assert e.known and "16 bytes from global memory" in e.text


def test_amdgcn_buffer_load_and_mfma():
    e = explain_line("amdgcn", "\tbuffer_load_dwordx4 v[0:3], v8, s[0:3], 0 offen")
    assert e.known and "Each lane loads 16 bytes" in e.text
    m = explain_line("amdgcn", "\tv_mfma_f32_32x32x8_f16 v[0:15], v[36:37], v[60:61], v[0:15]")
    assert m.known and "32×32 block" in m.text and "K = 8" in m.text


@pytest.mark.parametrize("target", ["sm_100", "gfx942"])
def test_every_line_of_matmul_is_explained(target):
    comp = open_file(kernel_path("matmul.py"), target=target).compile_all()[0]
    assert comp.ok, comp.failure
    for stage in comp.stage_names:
        missing = {
            e.op for e in explain_stage(stage, comp.stage(stage), comp) if e.op and not e.known
        }
        assert not missing, (stage, missing)


def _line_of(comp, needle):
    return next(
        i for i, text in enumerate(comp.stage("source").splitlines(), start=1) if needle in text
    )


def test_lowering_story_of_a_load_names_every_stage(add90):
    from irscope.ir.explain import lowering_story

    story = lowering_story(add90, _line_of(add90, "x = tl.load("))
    assert "tt.load" in story and "#blocked" in story
    assert "2 × ld.global.v4.b32" in story and "2 × LDG.E.128" in story
    assert "16 bytes" in story


def test_lowering_story_on_amd_names_buffer_loads():
    from irscope.ir.explain import lowering_story

    comp = open_file(kernel_path("add.py"), target="gfx942").compile_all()[0]
    story = lowering_story(comp, _line_of(comp, "x = tl.load("))
    assert "amdg.buffer_load" in story and "buffer_load_dwordx4" in story


def test_lowering_story_of_a_line_with_no_code(add90):
    from irscope.ir.explain import lowering_story

    assert "produces no code" in lowering_story(add90, 1)


def test_slice_layout_names_each_threads_elements():
    aliases = {
        "#blocked": "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], "
        "order = [1, 0]}>"
    }
    words = " ".join(layouts.describe("#ttg.slice<{dim = 1, parent = #blocked}>", [16], aliases))
    # The 16 rows left after reducing axis 1: a tile of the parent covers 8 rows, so lane 0 holds rows 0 and 8,
    # lane 1 (the next column group of the same row) holds the same rows: replicated.
    assert "thread 0 owns elements 0, 8." in words and "thread 1 owns elements 0, 8." in words


def test_no_note_only_repeats_what_it_explains():
    # A note must say what the op, modifier or type does: "arrive" for `arrive`, "up" for `up` or "trap" for
    # `TRAP` tells the reader nothing, nor does a guess marked "(from the name)".
    import importlib

    def words(text: str) -> set[str]:
        return {w for w in re.split(r"[^a-z0-9]+", text.lower()) if w}

    empty = []
    for dialect in ("ttir", "ttgir", "llvm", "ptx", "ptx_modifiers", "sass", "amdgcn"):
        data = importlib.import_module(f"irscope.ir.explain.data.{dialect}")
        for table, entries in vars(data).items():
            if not table.isupper() or not isinstance(entries, dict):
                continue
            for key, value in entries.items():
                note = value[-1] if isinstance(value, tuple) else value
                if not isinstance(note, str) or not words(note) or not words(str(key)):
                    continue
                if words(note) <= words(str(key)) or "from the name" in note:
                    empty.append(f"{dialect}.{table}[{key!r}] = {note!r}")
    assert not empty, empty
