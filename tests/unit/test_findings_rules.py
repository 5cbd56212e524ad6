"""The findings engine on real compiler output: each rule's words against the kernel that shows it."""

import dataclasses
import json
import os

import pytest
from conftest import fixture_path, kernel_path

from irscope.engine.compile.compilation import compile_launch
from irscope.engine.session import open_file
from irscope.findings import SEVERITIES, findings, rank_key, ranked
from irscope.findings.rules.launch import LAUNCH_SIZE_RULES


def compiled(path, target="sm_90"):
    return open_file(path, target=target).compile_all()


def within_call(text, column, call):
    """The column Triton records for an op lies inside the call that made it (3.9: the call's name; 3.6
    may name an argument of it)."""
    start = text.index(call) + 1
    end = start + len(text[start - 1 :].split("#")[0].rstrip()) - 1
    return start <= column <= end


def kernel_findings(comp):
    """The findings about the kernel, without those about the launch's size (small-grid, tail-effect:
    every example launches a small test size)."""
    return [f for f in findings(comp) if f.rule not in LAUNCH_SIZE_RULES]


def rules(comp):
    return [(f.rule, f.source_line) for f in kernel_findings(comp)]


@pytest.fixture(scope="module")
def misaligned():
    return compiled(kernel_path("misaligned.py"))


def test_add_is_clean_but_for_its_small_launch():
    """Nothing about the kernel; its one finding is the launch's size (4 blocks on 132 SMs)."""
    (comp,) = compiled(kernel_path("add.py"))
    assert kernel_findings(comp) == []
    (f,) = findings(comp)
    assert (f.rule, f.severity, f.holds_for_launches) == ("small-grid", "info", 1)
    assert f.message.startswith("grid 4 x 1 x 1 is under one wave")


def test_strided_gather_is_uncoalesced_with_its_cost():
    (comp,) = compiled(kernel_path("strided.py"))
    (f,) = kernel_findings(comp)
    assert (f.rule, f.severity, f.source_line) == ("uncoalesced", "warning", 26)
    assert (
        f.source_text
        == "x = tl.load(x_ptr + offs * 8, mask=mask)  # stride 8 (= STRIDE): uncoalesced"
    )
    assert within_call(comp.source_text.splitlines()[25], f.column, "tl.load(")
    assert f.message.startswith(
        "load of x_ptr: neighbouring elements of the block are 32 bytes (8 elements) apart"
    )
    assert (
        "strided gather" in f.message
        and "32.0 sectors per request where 4.0 would do" in f.cost.text
    )
    assert f.cost.unit == "excess_sectors_per_request" and f.cost.value == 28.0
    assert f.weight == pytest.approx(1 - 4 / 32)
    assert "Read contiguous elements" in f.fix
    assert (
        f.what_if is not None
        and not f.what_if.recompiled
        and "4.0 sectors per request" in f.what_if.text
    )


def test_odd_length_is_a_masked_tail_named_by_its_argument(misaligned):
    comp = misaligned[0]  # n = 1000
    assert rules(comp) == [("masked-tail", 25), ("masked-tail", 26), ("masked-tail", 27)]
    for f in kernel_findings(comp):
        assert f.severity == "warning" and f.cost.unit == "vector_bytes_lost" and f.cost.value == 12
        assert "4 B per thread where the layout allows 16 B" in f.message
        assert (
            "the mask is built from n_elements = 1000, which is not a multiple of 16" in f.message
        )
        assert f.fix.startswith("pad n_elements to a multiple of 16")
        assert (
            f.what_if.recompiled
            and f.what_if.text == "recompiled with n_elements 1000 -> 1008: 4 B -> 16 B per thread"
        )
    # the 15.6 sectors per request come from the narrow access: said in its cost, not a second finding
    assert "15.6 sectors where 4.0 would do" in findings(comp)[0].cost.text
    assert not [f for f in findings(comp) if f.rule == "uncoalesced"]


def test_misaligned_views_are_not_vectorized_with_the_pointer_named(misaligned):
    comp = misaligned[1]  # x[1:], y[1:], n = 4095
    assert rules(comp) == [("not-vectorized", 25), ("not-vectorized", 26), ("masked-tail", 27)]
    x_load = findings(comp)[0]
    assert (
        "x_ptr is not known to be 16-byte aligned (its data starts 4 bytes past a 16-byte boundary"
        in x_load.message
    )
    assert "n_elements = 4095" in x_load.message
    assert x_load.fix.startswith("pass a 16-byte-aligned tensor as x_ptr")
    assert (
        "4 B -> 16 B per thread" in x_load.what_if.text
        and "x_ptr an aligned copy" in x_load.what_if.text
    )
    # the store's pointer is aligned: only its mask is named
    assert "out_ptr" not in findings(comp)[1].message
    assert (
        "x_ptr" not in findings(comp)[2].message
        and "n_elements = 4095" in findings(comp)[2].message
    )


def test_spills_name_the_lines_and_bytes():
    base = compiled(kernel_path("matmul.py"), "sm_80")[0]
    squeezed = dataclasses.replace(base.launch, kwargs={**base.launch.kwargs, "maxnreg": 32})
    comp = compile_launch(squeezed, base.target, base.source_text)
    spill = [f for f in findings(comp) if f.rule == "spill"]
    assert len(spill) == 1
    f = spill[0]
    assert f.severity == "warning" and f.cost.unit == "local_bytes_per_thread"
    assert f.cost.value == comp.resources.local_bytes > 0
    assert f.message.startswith("registers spill: 32 registers per thread are not enough")
    assert "STL" not in f.message and "stores" in f.cost.text and "loads in the SASS" in f.cost.text
    assert 39 < f.source_line <= 62  # a line of the kernel's body
    assert not [f for f in findings(base) if f.rule == "spill"]


def test_amd_spills_count_registers():
    comp = compiled(kernel_path("attention.py"), "gfx942")[0]
    (f,) = [f for f in findings(comp) if f.rule == "spill"]
    assert f.cost.unit == "spilled_registers" and f.cost.value == comp.resources.vgpr_spills + (
        comp.resources.sgpr_spills or 0
    )
    assert "VGPRs" in f.cost.text and "spilled to scratch" in f.cost.text


def test_attention_occupancy_is_low_and_says_its_limiter():
    comp = compiled(kernel_path("attention.py"))[0]
    (f,) = [f for f in findings(comp) if f.rule == "low-occupancy"]
    # pipelined kernels run so by design
    assert f.severity == "info" and f.source_line == comp.kernel.line
    assert f.message.startswith(
        "8 of 64 warps per SM (12%): 1 block(s) of 8 warps, limited by registers"
    )
    assert f.cost.unit == "occupancy_lost" and f.cost.value == 0.875
    assert f.fix.startswith("use fewer registers per thread")
    assert not f.what_if.recompiled and "by the occupancy model" in f.what_if.text


def test_full_occupancy_and_half_are_not_findings():
    for name in ("add.py", "matmul.py"):  # 100% and 50% (matmul: registers)
        comp = compiled(kernel_path(name))[0]
        assert not [f for f in findings(comp) if f.rule == "low-occupancy"], name


def test_transpose_shuffle_through_shared_memory_once_per_program():
    (comp,) = compiled(kernel_path("transpose.py"))
    (f,) = kernel_findings(comp)
    assert (f.rule, f.severity, f.source_line) == ("layout-shuffle", "info", 30)
    assert f.message.startswith(
        "ttg.convert_layout moves a 64×64 f32 tensor (16384 B) between threads through "
        "shared memory, once per program"
    )
    assert f.cost.value == 16384 and f.cost.unit == "shared_bytes_per_program"
    assert "a transpose needs one such exchange" in f.fix


def test_matmul_epilogue_shuffle_says_it_is_usually_fine():
    comp = compiled(kernel_path("matmul.py"))[0]
    (f,) = [f for f in findings(comp) if f.rule == "layout-shuffle"]
    assert "from #mma (nvidia_mma)" in f.message and f.fix.startswith("usually none")
    assert not [f for f in findings(comp) if f.rule == "no-tensor-core"]  # wgmma


def test_fp32_ieee_dot_has_no_tensor_core_and_tf32_has():
    ieee, tf32 = compiled(fixture_path("dot_fp32_ieee.py"))
    assert "mma" not in ieee.stage("ptx") and "mma.sync" in tf32.stage("ptx")
    (f,) = [f for f in findings(ieee) if f.rule == "no-tensor-core"]
    assert f.severity == "warning" and f.source_line == 13
    assert f.message.startswith(
        "tl.dot of 32×32 by 32×32 f32 runs on the FMA pipes, not tensor cores"
    )
    assert "input_precision='ieee'" in f.message and "input_precision='tf32'" in f.fix
    assert f.cost.value == 32**3 and f.cost.unit == "fma_per_dot"
    assert not [f for f in findings(tf32) if f.rule == "no-tensor-core"]


def test_compile_error_is_an_error_finding_at_its_line():
    (comp,) = open_file(fixture_path("compile_error.py"), target="sm_90").compile_all()
    (f,) = kernel_findings(comp)
    assert f.rule == "compile-error" and f.severity == "error"
    assert f.source_line == comp.failure.line and f.source_text == comp.failure.source_line.strip()


def test_ranking_puts_severity_then_the_larger_loss_first():
    items = [
        {"severity": "info", "weight": 0.9, "file": "a", "source_line": 1, "rule": "x"},
        {"severity": "warning", "weight": 0.5, "file": "a", "source_line": 2, "rule": "x"},
        {"severity": "warning", "weight": None, "file": "a", "source_line": 3, "rule": "x"},
        {"severity": "warning", "weight": 0.75, "file": "a", "source_line": 4, "rule": "x"},
        {"severity": "error", "weight": 0.1, "file": "a", "source_line": 5, "rule": "x"},
    ]
    assert [i["source_line"] for i in ranked(items)] == [5, 4, 2, 3, 1]
    assert SEVERITIES == ("error", "warning", "info") and rank_key(items[0])[0] == 2


def test_report_opens_with_the_ranked_findings_and_json_carries_them(cli):
    code, out, _ = cli("report", kernel_path("misaligned.py"), "--target", "sm_90")
    assert code == 0
    lines = out.splitlines()
    assert lines[1] == "findings (8, most costly first):"  # 6 about the kernel, 2 small grids
    assert lines[2].startswith("  1. warning[") and "(add_kernel, compilation 1)" in lines[2]
    assert (
        "     fix: pad n_elements to a multiple of 16" in out
        and "     what if: recompiled with" in out
    )
    assert out.index("findings (8") < out.index("add_kernel  (")
    code, out, _ = cli("report", kernel_path("misaligned.py"), "--target", "sm_90", "--json")
    doc = json.loads(out)
    f = doc["kernels"][0]["findings"][0]
    assert set(f) >= {"rule", "severity", "source_line", "cost", "message", "fix", "what_if"}
    assert (
        f["rule"] == "masked-tail"
        and f["source_line"] == 25
        and f["cost"]["unit"] == "vector_bytes_lost"
    )
    assert f["what_if"] == {
        "text": "recompiled with n_elements 1000 -> 1008: 4 B -> 16 B per thread",
        "recompiled": True,
    }


def test_report_json_line_numbers_are_one_based_and_named(cli):
    code, out, _ = cli("report", kernel_path("misaligned.py"), "--target", "sm_90", "--json")
    k = json.loads(out)["kernels"][0]
    ptx = k["memory_ops"][0]
    assert "line" not in ptx and ptx["stage"] == "ptx"
    from irscope.engine.session import open_file as reopen

    comp = reopen(kernel_path("misaligned.py"), target="sm_90").compile_all()[0]
    ptx_lines = comp.stage("ptx").splitlines()
    for op in k["memory_ops"]:
        assert (
            ptx_lines[op["ptx_line"] - 1].strip().startswith(op["opcode"])
            or op["opcode"] in ptx_lines[op["ptx_line"] - 1]
        )
    ttir = comp.stage("ttir").splitlines()
    assert k["vectorization"] and k["coalescing"]  # the loops below check something
    for d in k["vectorization"]:
        assert ("tt.load" if d["op"] == "load" else "tt.store") in ttir[d["ttir_line"] - 1]
    ttgir = comp.stage("ttgir").splitlines()
    for row in k["coalescing"]:
        assert row["op"] in ttgir[row["ttgir_line"] - 1]
    src = comp.source_text.splitlines()
    assert src[k["def_line"] - 1].startswith("def add_kernel")


def test_the_tui_gets_the_same_findings_through_its_worker():
    from tui_helpers import open_view

    session, view = open_view(kernel_path("strided.py"))
    try:
        found = view.call("findings")
    finally:
        session.close()
    assert [f.rule for f in found] == ["uncoalesced", "small-grid"]
    assert found == findings(compiled(kernel_path("strided.py"))[0])


def test_a_shuffle_in_the_innermost_loop_is_a_warning():
    (comp,) = compiled(fixture_path("loop_shuffle.py"))
    (f,) = kernel_findings(comp)
    assert (f.rule, f.severity, f.source_line) == ("layout-shuffle", "warning", 14)
    assert within_call(comp.source_text.splitlines()[13], f.column, "tl.store(")
    assert f.message.startswith(
        "ttg.convert_layout moves a 64 f32 tensor (256 B) between threads through shared "
        "memory, inside the innermost loop, so every iteration pays it: from "
        "#ttg.slice<{dim = 1, parent = #blocked}>"
    )
    assert f.cost.text == "256 B written to and read back from shared memory per iteration"
    assert f.fix.startswith("convert less often")


def test_rows_that_start_off_a_sector_cost_l1_requests_not_dram_bytes():
    """softmax.py's rows of 781 floats start off 32-byte boundaries: each request straddles one more sector,
    which the next request reads too; over the row, the sectors hold as many bytes as it uses."""
    (comp,) = compiled(kernel_path("softmax.py"))
    found = [f for f in findings(comp) if f.rule == "uncoalesced"]
    assert [(f.source_line, f.severity) for f in found] == [(26, "info"), (30, "info")]
    assert "start off a 32-byte boundary" in found[0].message
    assert (
        "over one execution of the access the sectors hold 1.0× the bytes it uses"
        in found[0].cost.text
    )


def test_a_stride_of_two_fetches_twice_the_bytes_though_each_request_spans_more(tmp_path):
    """strided.py with stride 2 and one element per thread: lanes 8 bytes apart, four to a sector; each
    request spans twice the sectors its bytes need, and so does the whole access (a real 2× in DRAM)."""
    text = open(kernel_path("strided.py")).read()
    text = (
        text.replace("offs * 8", "offs * 2")
        .replace("STRIDE = 8", "STRIDE = 2")
        .replace("1024", "128")
    )
    path = tmp_path / "stride2.py"
    path.write_text(text)
    (comp,) = compiled(str(path))
    (f,) = [f for f in findings(comp) if f.rule == "uncoalesced"]
    assert f.severity == "warning" and f.source_line == 26
    assert (
        "neighbouring lanes are 8 bytes apart: 4 lanes share each 32-byte sector and use 16 of its bytes"
        in f.message
    )
    assert f.cost.text.startswith("8.0 sectors per request where 4.0 would do")


def test_the_row_padding_fix_names_the_stride_in_elements_as_the_source_does():
    """padded_rows.py passes row_stride = 33 (elements) and reads 32 columns a row: the fix says 33 elements,
    with its bytes beside, not the 132 bytes the addresses show."""
    (comp,) = compiled(fixture_path("padded_rows.py"))
    (f,) = [f for f in findings(comp) if f.rule == "uncoalesced"]
    assert "start off a 32-byte boundary" in f.message
    assert (
        "make row strides a multiple of 16 elements (pad the rows) — here rows are 33 elements (132 bytes) "
        "apart" in f.fix
    )


def test_sibling_field_loads_that_use_every_byte_together_are_not_4x_traffic_each():
    """struct_fields.py reads points[i] = (x, y, z, w) as four loads p[4*i + k]: each alone spans 32 sectors per
    request with 4 bytes of every 16 used, but the four read the same sectors and use all of them together."""
    (comp,) = compiled(fixture_path("struct_fields.py"))
    found = [f for f in findings(comp) if f.rule == "uncoalesced"]
    assert [(f.source_line, f.severity) for f in found] == [
        (12, "info"),
        (13, "info"),
        (14, "info"),
        (15, "info"),
    ]
    first = found[0]
    # as Nsight Compute counts
    assert first.cost.text.startswith("32.0 sectors per request where 4.0 would do")
    assert (
        "the loads on lines 13, 14 and 15 read the other fields of the same sectors"
        in first.message
    )
    assert "together the sectors hold 1.0× the bytes used" in first.message
    assert (
        "not 8.0× the DRAM / L2 traffic" in first.message
        and "lines 12, 13 and 14" in found[3].message
    )
    assert all("less traffic" not in f.message and f.what_if is None for f in found)
    assert "one load of a [BLOCK, 4] tile" in first.fix and "structure of arrays" in first.fix
    assert all(f.weight < 0.1 for f in found)  # ranked below accesses that do move more bytes


def test_a_rule_that_raises_fails_the_tests_and_is_named_outside_them(monkeypatch):
    """Outside tests a rule's error drops that rule and is named (the report says so); the suite runs with
    IRSCOPE_STRICT_RULES=1 (conftest.py), where it raises, so no findings test passes on a crashed rule."""
    from irscope.findings import engine, rule_errors

    def broken(comp, new):
        raise ValueError("no such layout")

    assert os.environ.get("IRSCOPE_STRICT_RULES") == "1"
    monkeypatch.setattr(engine, "RULE_FUNCTIONS", (broken, *engine.RULE_FUNCTIONS))
    with pytest.raises(ValueError, match="no such layout"):
        findings(compiled(kernel_path("strided.py"))[0])
    monkeypatch.delenv("IRSCOPE_STRICT_RULES")
    comp = compiled(kernel_path("strided.py"))[0]
    assert [f.rule for f in findings(comp)] == ["uncoalesced", "small-grid"]  # the others still ran
    assert rule_errors(comp) == ["broken: ValueError: no such layout"]


def test_many_short_programs_are_a_warning_that_names_the_bytes_a_program_should_move():
    """A copy of 131,072 programs of 32 floats on sm_90: starting 993 blocks per SM takes 8x its bytes' time.
    The same file's gathers of 4 programs, which start 1 block per SM, have no such finding."""
    by_name = {}
    for comp in open_file(fixture_path("short_programs.py"), target="sm_90").compile_all():
        by_name.setdefault(comp.kernel.name, []).append(
            [f for f in findings(comp) if f.rule == "short-programs"]
        )
    (short,) = by_name["copy"][0]
    assert short.severity == "warning" and short.source_text.startswith("def copy(")
    assert "131072 programs moving 256 B each" in short.message
    assert "starting 993 per SM takes 80.4 us" in short.message
    assert "moves 2.06 KB or more" in short.fix  # 81 ns of an H100 SM's share of 3.35 TB/s
    assert 0.87 < short.weight < 0.88 and short.cost.unit == "block_start_share_of_run"
    assert short.cost.text == "starting blocks takes 8.04x the launch's bytes and arithmetic"
    assert by_name["gather"] == [[], []]


def test_an_uncoalesced_load_of_one_sector_a_pair_says_what_dram_reads():
    """One float per 64 bytes: 8 times the bytes in sectors, 16 times from DRAM, which reads each sector's
    64-byte pair on an NVIDIA GPU (measured on an H200); one float per 32 bytes reads every pair whole, and an
    AMD target's fetch is not known: neither says more than the sectors."""
    per_64, per_32 = (
        c
        for c in open_file(fixture_path("short_programs.py"), target="sm_90").compile_all()
        if c.kernel.name == "gather"
    )
    (finding,) = [f for f in findings(per_64) if f.rule == "uncoalesced"]
    assert finding.cost.text.endswith(
        "; DRAM reads the 64-byte pair of each sector, 2× the sectors of src: about 16× from DRAM"
    )
    (finding,) = [f for f in findings(per_32) if f.rule == "uncoalesced"]
    assert "DRAM reads" not in finding.cost.text
    amd = open_file(fixture_path("short_programs.py"), target="gfx942").compile_all()[0]
    assert all("DRAM reads" not in f.cost.text for f in findings(amd))
