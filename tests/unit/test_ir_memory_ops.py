"""Memory-op parsing on real compiler output: widths, spaces, masks, per dialect."""

import pytest
from conftest import kernel_path

from irscope.analysis.memory.asm import parse_amdgcn, parse_ptx, parse_sass
from irscope.analysis.memory.ir import parse_mlir
from irscope.analysis.memory.ops import memory_ops, primary_stage, totals_by_source_line
from irscope.engine.session import open_file


@pytest.fixture(scope="module")
def add_sm90():
    return open_file(kernel_path("add.py"), target="sm_90").compile_all()[0]


@pytest.fixture(scope="module")
def misaligned_sm90():
    return open_file(kernel_path("misaligned.py"), target="sm_90").compile_all()


def globals_of(ops):
    return [op for op in ops if op.space == "global"]


def test_add_sm90_ptx_every_global_access_is_16_bytes_and_masked(add_sm90):
    ops = globals_of(parse_ptx(add_sm90.stage("ptx")))
    assert [op.op for op in ops] == ["load"] * 4 + ["store"] * 2
    assert all(
        op.width_bytes == 16 and op.masked and op.vector == 4 and op.elem_type == "b32"
        for op in ops
    )
    assert ops[0].predicate == "%p1"
    lines = add_sm90.stage("ptx").splitlines()
    assert "ld.global.v4.b32" in lines[ops[0].line]  # `line` indexes the stage's own lines


def test_add_sm90_sass_widths(add_sm90):
    ops = globals_of(parse_sass(add_sm90.stage("sass")))
    assert [(op.opcode, op.width_bytes) for op in ops] == [("LDG.E.128", 16)] * 4 + [
        ("STG.E.128", 16)
    ] * 2
    # ptxas turned the second store's guard into an early EXIT: that store carries no predicate
    assert [op.masked for op in ops] == [True] * 5 + [False]
    assert ops[0].predicate == "!P0"


def test_add_mlir_ops_carry_mask_and_other(add_sm90):
    for stage in ("ttir", "ttgir"):
        ops = parse_mlir(add_sm90.stage(stage), stage)
        assert [(op.opcode, op.op, op.space, op.masked, op.elem_type) for op in ops] == [
            ("tt.load", "load", "global", True, "f32")
        ] * 2 + [("tt.store", "store", "global", True, "f32")]
        assert all(op.width_bytes is None and op.other is None for op in ops)


def test_add_gfx942_buffer_ops_are_16_bytes_and_masked_through_the_offset():
    comp = open_file(kernel_path("add.py"), target="gfx942").compile_all()[0]
    ops = parse_amdgcn(comp.stage("amdgcn"))
    assert [(op.opcode, op.op, op.width_bytes, op.masked) for op in ops] == [
        ("buffer_load_dwordx4", "load", 16, True),
        ("buffer_load_dwordx4", "load", 16, True),
        ("buffer_store_dwordx4", "store", 16, True),
    ]
    assert primary_stage(comp) == "amdgcn"


def test_misaligned_launches_are_scalar(misaligned_sm90):
    assert len(misaligned_sm90) == 2
    for comp in misaligned_sm90:
        ops = globals_of(parse_ptx(comp.stage("ptx")))
        assert ops and all(op.width_bytes == 4 and op.masked for op in ops)
        sass = globals_of(parse_sass(comp.stage("sass")))
        assert {op.opcode for op in sass} <= {"LDG.E", "STG.E"}


def test_matmul_async_copies_and_shared_ops():
    comp = open_file(kernel_path("matmul.py"), target="sm_80").compile_all()[0]
    ptx = parse_ptx(comp.stage("ptx"))
    copies = [op for op in ptx if op.opcode.startswith("cp.async")]
    # src-size operand zero-fills masked lanes
    assert copies and all(
        op.space == "global" and op.copy_to == "shared" and op.width_bytes == 16 and op.masked
        for op in copies
    )
    ldmatrix = [op for op in ptx if op.opcode.startswith("ldmatrix")]
    assert ldmatrix and all(op.space == "shared" and op.width_bytes == 16 for op in ldmatrix)
    sass = parse_sass(comp.stage("sass"))
    assert any(
        op.opcode.startswith("LDGSTS") and op.width_bytes == 16 and op.copy_to == "shared"
        for op in sass
    )
    assert any(op.opcode.startswith("LDSM") and op.space == "shared" for op in sass)
    ttgir = parse_mlir(comp.stage("ttgir"), "ttgir")
    async_copies = [op for op in ttgir if op.opcode == "ttg.async_copy_global_to_local"]
    assert async_copies and all(op.masked and op.other is not None for op in async_copies)
    assert any(op.opcode == "ttg.local_load" and op.space == "shared" for op in ttgir)


def test_transpose_goes_through_shared_memory():
    comp = open_file(kernel_path("transpose.py"), target="sm_90").compile_all()[0]
    spaces = {op.space for op in parse_ptx(comp.stage("ptx"))}
    assert spaces == {"global", "shared"}
    assert any(op.space == "shared" and op.op == "store" for op in parse_sass(comp.stage("sass")))
    amd = open_file(kernel_path("transpose.py"), target="gfx942").compile_all()[0]
    assert any(
        op.opcode.startswith("ds_write") and op.space == "shared"
        for op in parse_amdgcn(amd.stage("amdgcn"))
    )


def test_param_and_constant_reads_are_not_memory_ops(add_sm90):
    assert not any("param" in op.opcode for op in parse_ptx(add_sm90.stage("ptx")))
    assert not any(op.opcode.startswith("LDC") for op in parse_sass(add_sm90.stage("sass")))


def test_memory_ops_of_a_compilation_and_totals(add_sm90):
    ops = memory_ops(add_sm90)
    assert {op.stage for op in ops} == {"ttir", "ttgir", "llir", "ptx", "sass"}
    assert memory_ops(add_sm90, ["ptx"]) == [op for op in ops if op.stage == "ptx"]
    totals = totals_by_source_line(memory_ops(add_sm90, ["ptx"]))
    assert sum(t.loads for t in totals) == 4 and sum(t.stores for t in totals) == 2
    assert sum(t.bytes_per_thread for t in totals) == 6 * 16


def test_source_lines_come_from_the_source_map(add_sm90):
    # add.py: line 26 loads x, 27 loads y, 28 stores; every stage's ops land on those lines
    for stage in ("ttir", "ttgir", "ptx", "sass"):
        ops = [op for op in memory_ops(add_sm90, [stage]) if op.space == "global"]
        assert {op.source_line for op in ops if op.op == "load"} == {26, 27}, stage
        assert {op.source_line for op in ops if op.op == "store"} == {28}, stage


def test_amd_ttgir_buffer_ops():
    comp = open_file(kernel_path("add.py"), target="gfx942").compile_all()[0]
    ops = memory_ops(comp, ["ttgir"])
    assert [(op.op, op.space, op.masked, op.elem_type, op.source_line) for op in ops] == [
        ("load", "global", True, "f32", 26),
        ("load", "global", True, "f32", 27),
        ("store", "global", True, "f32", 28),
    ]


def test_llvm_ir_inline_asm_plain_and_buffer_ops(add_sm90):
    from irscope.analysis.memory.ir import parse_llvm

    ops = parse_llvm(add_sm90.stage("llir"))
    assert [(op.opcode, op.width_bytes, op.masked) for op in ops] == [
        ("ld.global.v4.b32", 16, True)
    ] * 4 + [("st.global.v4.b32", 16, True)] * 2
    amd = open_file(kernel_path("add.py"), target="gfx942").compile_all()[0]
    assert [
        (op.op, op.space, op.width_bytes, op.masked) for op in parse_llvm(amd.stage("llir"))
    ] == [("load", "global", 16, True)] * 2 + [("store", "global", 16, True)]
    transpose = open_file(kernel_path("transpose.py"), target="sm_90").compile_all()[0]
    shared = [op for op in parse_llvm(transpose.stage("llir")) if op.space == "shared"]
    assert shared and {op.op for op in shared} == {"load", "store"}


@pytest.fixture(scope="module")
def kinds_sm90():
    from conftest import fixture_path

    return {
        c.kernel.name: c
        for c in open_file(fixture_path("memory_kinds.py"), target="sm_90").compile_all()
    }


def test_cache_hints_and_other_value(kinds_sm90):
    comp = kinds_sm90["hinted_copy"]
    load, store = memory_ops(comp, ["ttir"])
    assert load.other == "1.500000e+00" and load.cache == ("eviction_policy=evict_last",)
    assert store.cache == ("cache_modifier=cs",)
    ptx = [op for op in memory_ops(comp, ["ptx"]) if op.space == "global"]
    assert {op.cache for op in ptx if op.op == "load"} == {("L1::evict_last", "L2::cache_hint")}
    assert {op.cache for op in ptx if op.op == "store"} == {("cs",)}
    assert all(op.width_bytes == 16 for op in ptx)


def test_atomics_in_every_stage(kinds_sm90):
    from conftest import fixture_path

    comp = kinds_sm90["histogram"]
    for stage, opcode in (
        ("ttir", "tt.atomic_rmw"),
        ("ptx", "atom.global.gpu.acq_rel.add.u32"),
        ("sass", "ATOMG"),
    ):
        atomics = [op for op in memory_ops(comp, [stage]) if op.op == "atomic"]
        assert atomics and all(
            op.opcode.startswith(opcode) and op.space == "global" for op in atomics
        ), stage
        assert all(op.source_line == 21 for op in atomics), stage
    assert all(
        op.width_bytes == 4 and op.masked for op in memory_ops(comp, ["ptx"]) if op.op == "atomic"
    )
    amd = {
        c.kernel.name: c
        for c in open_file(fixture_path("memory_kinds.py"), target="gfx942").compile_all()
    }
    atomics = [op for op in memory_ops(amd["histogram"], ["amdgcn", "ttgir"]) if op.op == "atomic"]
    assert {op.opcode for op in atomics} == {"buffer_atomic_add", "amdg.buffer_atomic_rmw"}
    assert all(op.masked for op in atomics) and {op.width_bytes for op in atomics} == {4, None}
