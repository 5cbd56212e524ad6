"""The source map on real compiler output: every stage of real example kernels, NVIDIA and AMD."""

import re

import pytest

from conftest import kernel_path
from irscope.core.session import open_file
from irscope.core.sourcemap import IRLine, LineKind, SourceLoc, SourceMap

_cache: dict = {}


def compiled(name: str, target: str):
    key = (name, target)
    if key not in _cache:
        ws = open_file(kernel_path(name), target=target)
        comps = ws.compile_all()
        _cache[key] = comps[0]
    return _cache[key]


def source_lines_with(comp, needle: str) -> set[int]:
    return {i + 1 for i, text in enumerate(comp.source_text.splitlines()) if needle in text}


def mapped_lines_of(comp, stage: str, pattern: str) -> list[int | None]:
    sm = comp.source_map
    text = comp.stage(stage).splitlines()
    rx = re.compile(pattern)
    return [sm.source_line(stage, i) for i, line in enumerate(text)
            if rx.search(line) and sm.lines(stage)[i].kind is LineKind.INSTRUCTION]


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
def test_one_entry_per_line_in_every_stage(target):
    comp = compiled("add.py", target)
    sm = comp.source_map
    assert isinstance(sm, SourceMap) and comp.source_map is sm  # cached
    assert sm.stages == comp.stage_names
    for stage in sm.stages:
        lines = sm.lines(stage)
        assert len(lines) == len(comp.stage(stage).splitlines())
        assert all(isinstance(line, IRLine) for line in lines)
        for line in lines:
            if line.loc is not None:
                assert line.frames[0] == line.loc and line.loc.line > 0


def test_source_stage_maps_to_itself():
    comp = compiled("add.py", "sm_90")
    sm = comp.source_map
    for i in range(len(comp.source_text.splitlines())):
        assert sm.source_line("source", i) == i + 1
    assert sm.ir_lines("source", 26) == [25]


def test_add_memory_instructions_map_to_load_and_store_lines_nvidia():
    comp = compiled("add.py", "sm_90")
    loads, stores = source_lines_with(comp, "tl.load("), source_lines_with(comp, "tl.store(")
    ld = mapped_lines_of(comp, "ptx", r"\bld\.global")
    st = mapped_lines_of(comp, "ptx", r"\bst\.global")
    assert len(ld) == 4 and set(ld) == loads   # two v4 loads of x (line 26) and of y (line 27)
    assert len(st) == 2 and set(st) == stores
    ldg = mapped_lines_of(comp, "sass", r"\bLDG\b")
    stg = mapped_lines_of(comp, "sass", r"\bSTG\b")
    assert len(ldg) == 4 and set(ldg) == loads
    assert len(stg) == 2 and set(stg) == stores
    ttgir_loads = mapped_lines_of(comp, "ttgir", r"tt\.load ")
    assert set(ttgir_loads) == loads


def test_add_memory_instructions_map_to_load_and_store_lines_amd():
    comp = compiled("add.py", "gfx942")
    loads, stores = source_lines_with(comp, "tl.load("), source_lines_with(comp, "tl.store(")
    ld = mapped_lines_of(comp, "amdgcn", r"\b(global|buffer)_load")
    st = mapped_lines_of(comp, "amdgcn", r"\b(global|buffer)_store")
    assert ld and set(ld) == loads
    assert st and set(st) == stores


def test_ptx_inline_asm_line_shift_is_undone():
    """LLVM numbers the lines of a multi-line inline asm upward from the call's line; the load at line 26
    must not be reported at 29 (a blank line after the kernel)."""
    comp = compiled("add.py", "sm_90")
    sm = comp.source_map
    kernel_end = max(source_lines_with(comp, "tl.store("))
    for stage in ("ptx", "sass"):
        for line in sm.lines(stage):
            if line.loc is not None:
                assert line.loc.line <= kernel_end, (stage, line)


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
def test_inverse_agrees_with_forward(target):
    comp = compiled("add.py", target)
    sm = comp.source_map
    for stage in sm.stages:
        for src in range(1, len(comp.source_text.splitlines()) + 1):
            indices = sm.ir_lines(stage, src)
            assert indices == sorted(set(indices))
            assert all(src in sm.source_lines(stage, i) for i in indices)
            covered = [i for start, end in sm.blocks(stage, src) for i in range(start, end)]
            assert covered == indices


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
def test_mapped_fraction_and_instruction_counts(target):
    comp = compiled("add.py", target)
    sm = comp.source_map
    for stage in sm.stages:
        n = sm.instruction_lines(stage)
        assert n == sum(1 for line in sm.lines(stage) if line.kind is LineKind.INSTRUCTION) and n > 0
        assert sm.mapped_fraction(stage) >= (0.99 if stage in ("source", "ttir", "ttgir") else 0.95)


def test_line_kinds_in_each_dialect():
    comp = compiled("add.py", "sm_90")
    sm = comp.source_map

    def kind_of(stage, predicate):
        text = comp.stage(stage).splitlines()
        return {sm.lines(stage)[i].kind for i, line in enumerate(text) if predicate(line)}

    assert kind_of("ttgir", lambda s: s.startswith("#loc")) == {LineKind.DEBUG}
    assert kind_of("ttgir", lambda s: "tt.load" in s) == {LineKind.INSTRUCTION}
    assert kind_of("llir", lambda s: s.startswith("!")) == {LineKind.DEBUG}
    assert kind_of("ptx", lambda s: s.strip().startswith(".loc")) == {LineKind.DEBUG}
    assert kind_of("ptx", lambda s: s.strip().startswith(".reg")) == {LineKind.DIRECTIVE}
    assert kind_of("ptx", lambda s: s.startswith("$L__")) == {LineKind.LABEL}
    assert kind_of("ptx", lambda s: s.strip().startswith(".b8")) == {LineKind.DEBUG}
    assert kind_of("sass", lambda s: "//##" in s) == {LineKind.DEBUG}
    assert kind_of("sass", lambda s: re.match(r"\s*/\*[0-9a-f]{4}\*/", s) is not None) == {LineKind.INSTRUCTION}
    assert kind_of("ptx", lambda s: not s.strip()) == {LineKind.BLANK}


def test_loc_file_is_the_users_file():
    comp = compiled("add.py", "sm_90")
    sm = comp.source_map
    for stage in sm.stages:
        for line in sm.lines(stage):
            for frame in line.frames:
                assert isinstance(frame, SourceLoc) and frame.file == comp.kernel.file


def test_dump_annotate_prefixes_source_lines(cli):
    code, out, err = cli("dump", kernel_path("add.py"), "--stage", "ptx", "--annotate")
    assert code == 0, err
    lines = out.splitlines()
    assert any(re.match(r"^26 \| \s*@%p\d ld\.global\.v4\.b32", line) for line in lines)
    assert any(re.match(r"^28 \| \s*@%p\d st\.global\.v4\.b32", line) for line in lines)
    assert any(line.startswith("   | ") for line in lines)  # unmapped lines (blank, labels)
    assert all(re.match(r"^(\d\d|  ) \| ", line) for line in lines)


def test_report_json_has_coverage_per_stage(cli):
    import json
    code, out, err = cli("report", kernel_path("add.py"), "--json")
    assert code == 0, err
    stages = json.loads(out)["kernels"][0]["stages"]
    for name, entry in stages.items():
        assert entry["instruction_lines"] > 0 and 0.0 <= entry["mapped_fraction"] <= 1.0, name
    assert stages["ptx"]["mapped_fraction"] >= 0.95
