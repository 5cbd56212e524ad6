"""The core engine on real kernels and the real compiler: capture, specialization, stages, resources."""

import json
import os
import re
import subprocess

import pytest
from conftest import ROOT, fixture_path, kernel_path, run_irscope

from irscope.engine.overrides import Overrides
from irscope.engine.session import open_file
from irscope.engine.triton_compat import find_tool

EXAMPLES = sorted(f for f in os.listdir(os.path.join(ROOT, "kernels")) if f.endswith(".py"))
# Gluon examples: their authors wrote the layouts, for NVIDIA's 32-lane warps
WRITTEN_FOR_32_LANES = {"gluon_copy.py"}


def only(comps):
    assert len(comps) == 1, [c.spec.cache_key() for c in comps]
    return comps[0]


def global_loads(ptx: str) -> list[str]:
    return [line.strip() for line in ptx.splitlines() if "ld.global" in line]


@pytest.fixture(scope="module")
def add_ws():
    return open_file(kernel_path("add.py"), target="sm_90")


def test_tutorial_style_file_runs_unchanged_without_gpu():
    ws = open_file(fixture_path("tutorial_add.py"), target="sm_90")
    assert [k.name for k in ws.kernels] == ["add_kernel"]
    assert len(ws.launches) == 1
    launch = ws.launches[0]
    assert launch.grid == (97, 1, 1)  # cdiv(98432, 1024), from the file's own grid lambda
    assert launch.kwargs["BLOCK_SIZE"] == 1024


def test_add_discovery_and_capture(add_ws):
    kernel = add_ws.kernel(None)
    assert kernel.name == "add_kernel" and kernel.file == kernel_path("add.py")
    source = open(kernel_path("add.py")).read().splitlines()
    assert source[kernel.line - 1].lstrip().startswith("def add_kernel(")
    assert add_ws.launches[0].grid == (4, 1, 1)


def test_add_vectorizes_with_aligned_multiple_of_16(add_ws):
    comp = only(add_ws.compile(add_ws.kernel(None)))
    assert comp.specialization == {"x_ptr": "D", "y_ptr": "D", "out_ptr": "D", "n_elements": "D"}
    loads = global_loads(comp.stage("ptx"))
    assert loads and all("ld.global.v4.b32" in line for line in loads)
    sass = comp.stage("sass")
    assert "LDG.E.128" in sass
    assert re.search(r'//## File ".*add\.py", line \d+', sass), (
        "SASS must carry source-line comments"
    )


def test_add_for_amd_uses_16_byte_loads():
    ws = open_file(kernel_path("add.py"), target="gfx942")
    comp = only(ws.compile(ws.kernel(None)))
    amdgcn = comp.stage("amdgcn")
    # A real launch on a tensor under 2 GB gets Triton's pointer-range specialization (S), and the AMD
    # backend then loads through buffer instructions: still 16 bytes (dwordx4) per lane.
    assert comp.specialization["x_ptr"] == "DS"
    assert re.search(r"\b(global|buffer)_load_dwordx4\b", amdgcn)
    assert comp.resources.registers and comp.resources.sgprs


def test_misaligned_launches_defeat_vectorization():
    ws = open_file(kernel_path("misaligned.py"), target="sm_90")
    comps = ws.compile(ws.kernel("add_kernel"))
    assert len(comps) == 2, "n=1000 and the x[1:] slice are two specializations"
    for comp in comps:
        loads = global_loads(comp.stage("ptx"))
        assert loads and all(re.search(r"ld\.global(\.[a-z0-9]+)*\.b32 ", line) for line in loads)
        assert not any(".v4." in line or ".v2." in line for line in loads)
    specs = [c.specialization for c in comps]
    assert any(s["n_elements"] == "" and s["x_ptr"] == "D" for s in specs), specs  # n = 1000
    assert any(s["x_ptr"] == "" for s in specs), specs  # x[1:]


def test_int_equal_to_one_becomes_a_constant_and_do_not_specialize_is_honoured():
    ws = open_file(fixture_path("specialize.py"), target="sm_90")
    strided = only(ws.compile(ws.kernel("strided_copy")))
    assert strided.specialization["stride"] == "constant"
    assert strided.constexprs["stride"] == 1
    assert strided.specialization["n"] == "D"
    plain = only(ws.compile(ws.kernel("unspecialized_copy")))
    assert plain.specialization["n"] == ""  # 4096 is divisible by 16, but do_not_specialize=["n"]


def test_given_arguments_for_a_file_without_launches():
    ws = open_file(
        fixture_path("no_launch.py"),
        target="sm_90",
        overrides=Overrides.parse(["BLOCK=1024"], ["x_ptr=*fp16", "out_ptr=*fp16", "n=4096"]),
    )
    comp = only(ws.compile(ws.kernel("scale_kernel")))
    assert comp.signature["x_ptr"] == "*fp16" and comp.signature["alpha"] == "i32"
    assert comp.specialization["n"] == "D" and comp.specialization["x_ptr"] == "D"
    ws = open_file(
        fixture_path("no_launch.py"), target="sm_90", overrides=Overrides.parse(["BLOCK=1024"], [])
    )
    comp = only(ws.compile(ws.kernel("scale_kernel")))
    assert comp.signature["x_ptr"] == "*fp32"  # the default for a pointer-like name
    assert comp.specialization["n"] == ""  # an int of unknown value gets no divisibility


def test_autotune_configs_captured_and_pickable():
    ws = open_file(kernel_path("matmul.py"), target="sm_90")
    kernel = ws.kernel(None)
    assert kernel.is_autotuned and len(kernel.autotune_configs) == 2
    first = only(ws.compile(kernel))
    second = only(ws.compile(kernel, config=1))
    assert first.constexprs["BLOCK_M"] == 64 and second.constexprs["BLOCK_M"] == 32
    assert second.num_stages == 2
    assert "mma" in first.stage("ttgir")


@pytest.mark.parametrize("target", ["sm_80", "sm_90", "sm_100", "gfx942"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_compiles(example, target):
    ws = open_file(kernel_path(example), target=target)
    comps = ws.compile_all()
    assert comps
    if example in WRITTEN_FOR_32_LANES and target.startswith("gfx"):
        # its layouts spread a tile over 32 lanes: an AMD wavefront has 64, and the compiler says so
        assert all(not c.ok and "invalid layout" in c.failure.message for c in comps)
        return
    for comp in comps:
        assert comp.ok, comp.failure
        for stage in comp.stage_names:
            if stage != "sass":  # disassembly is covered elsewhere; it costs ~0.7 s per cubin
                assert comp.stage(stage).strip(), stage
        assert comp.resources.registers and comp.resources.registers > 0


def test_report_registers_equal_cuobjdump(add_ws):
    comp = only(add_ws.compile(add_ws.kernel(None)))
    cubin = os.path.join(os.environ["TRITON_CACHE_DIR"], "check.cubin")
    with open(cubin, "wb") as f:
        f.write(comp.asm["cubin"])
    out = subprocess.run(
        [find_tool("cuobjdump"), "-res-usage", cubin], capture_output=True, text=True
    ).stdout
    assert f"REG:{comp.resources.registers} " in out


def test_report_json_fields(cli):
    code, out, err = cli("report", kernel_path("add.py"), "--json")
    assert code == 0, err
    doc = json.loads(out)
    entry = doc["kernels"][0]
    for field in (
        "name",
        "file",
        "def_line",
        "target",
        "grid",
        "signature",
        "specialization",
        "constexprs",
        "num_warps",
        "num_stages",
        "registers",
        "spills",
        "shared_bytes",
        "stages",
    ):
        assert field in entry, field
    assert (
        entry["signature"]["x_ptr"] == "*fp32" and entry["signature"]["BLOCK_SIZE"] == "constexpr"
    )
    assert entry["constexprs"] == {"BLOCK_SIZE": 1024}
    assert set(entry["stages"]) == {"source", "ttir", "ttgir", "llir", "ptx", "sass"}
    assert all(v["lines"] > 0 for v in entry["stages"].values())


def test_dump_cli_prints_one_stage(cli):
    code, out, err = cli("dump", kernel_path("add.py"), "--stage", "ttir")
    assert code == 0, err
    assert out.startswith("#loc") or "module" in out
    assert "tt.load" in out


def test_reopen_hits_the_cache(tmp_path):
    env = {"TRITON_CACHE_DIR": str(tmp_path / "cache")}
    first = run_irscope("report", "kernels/add.py", env=env)
    assert first.returncode == 0, first.stderr

    def files():
        return sorted(str(p) for p in (tmp_path / "cache").rglob("*") if p.is_file())

    before = files()
    assert any(p.endswith(".cubin") for p in before), "TRITON_CACHE_DIR must be where Triton caches"
    second = run_irscope("report", "kernels/add.py", env=env)
    assert second.returncode == 0 and second.stdout == first.stdout
    assert files() == before, "a reopen with the same arguments must not compile anything new"


def test_autotune_records_every_config_even_if_running_fails():
    """Configs are recorded before any of them runs, so a failure while running cannot lose them."""
    ws = open_file(kernel_path("matmul.py"), target="sm_90")
    indexes = sorted(la.autotune_index for la in ws.launches)
    assert indexes == [0, 1]
    assert all(
        la.args[0].dtype.is_floating_point and la.args[0].element_size() == 2 for la in ws.launches
    )


def test_the_compilation_memo_keeps_the_newest_few(monkeypatch):
    """Each compilation holds its launch's tensors; a session of edits must not pin every one."""
    from irscope.engine.compile import compilation as compile_module
    from irscope.engine.compile.recompile import recompile

    monkeypatch.setattr(compile_module, "_MEMO_SIZE", 2)
    ws = open_file(kernel_path("add.py"), target="sm_90")
    comp = ws.compile_all()[0]
    comps = [recompile(comp, defines={"BLOCK_SIZE": block}) for block in (64, 128, 256)]
    assert [c.constexprs["BLOCK_SIZE"] for c in comps] == [64, 128, 256]
    assert len(compile_module._memo) == 2
    assert [c for c in compile_module._memo.values()] == comps[1:]
