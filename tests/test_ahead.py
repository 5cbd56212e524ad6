"""Compile ahead (irscope/core/ahead.py): without a GPU, each captured launch starts compiling in a forked
child while the user's file is still running. What irscope shows must not depend on whether it did."""

import os
import re
import signal
import subprocess
import sys

import pytest

from conftest import ROOT, fixture_path, kernel_path

from irscope.core import ahead
from irscope.core.session import open_file


@pytest.fixture(autouse=True)
def _no_child_still_running():
    """Children get the cores the file's run leaves free (one here); one left over from an earlier test
    would hold that slot and keep this test's launch from getting a child."""
    for key in list(ahead._children):
        ahead.wait(key, ahead.DISASSEMBLED)


def _key(comp):
    return ahead.compilation_key(comp.kernel.jit, comp.target, comp.spec)


def _every_stage(comp) -> dict[str, str]:
    return {name: comp.stage(name) for name in comp.stage_names}


def test_the_child_compiles_and_disassembles_and_the_parent_shows_the_same_text(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "with-child"))
    helped = open_file(kernel_path("helper.py"), target="sm_90").compile_all()[0]
    helped_stages = _every_stage(helped)
    assert ahead.progress(_key(helped)) == "cs"  # the child got through both steps

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "alone"))
    alone = open_file(kernel_path("helper.py"), target="sm_90", compile_ahead=False).compile_all()[0]
    assert ahead.progress(_key(alone)) is None
    assert _every_stage(alone) == helped_stages
    assert alone.resources == helped.resources
    assert "LDG" in helped_stages["sass"] and "//## File" in helped_stages["sass"]


def test_amd_targets_compile_ahead_too(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "amd"))
    comp = open_file(kernel_path("add.py"), target="gfx942").compile_all()[0]
    assert re.search(r"\b(global|buffer)_load_dwordx4\b", comp.stage("amdgcn"))
    assert ahead.progress(_key(comp)) == "cs"


def test_only_the_autotune_config_that_will_be_compiled_starts(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "matmul"))
    ws = open_file(kernel_path("matmul.py"), target="sm_90", config=1)
    kernel = ws.kernel("matmul_kernel")
    first = ws.compile(kernel, config=0)[0]
    second = ws.compile(kernel, config=1)[0]
    assert ahead.progress(_key(first)) is None
    assert ahead.progress(_key(second)) == "c" or ahead.progress(_key(second)) == "cs"


def test_a_child_that_dies_leaves_the_parent_to_compile(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "killed"))
    before = set(ahead.running())
    ws = open_file(kernel_path("softmax.py"), target="sm_90")
    for pid in set(ahead.running()) - before:
        os.kill(pid, signal.SIGKILL)
    comp = ws.compile_all()[0]
    assert comp.ok and "ld.global" in comp.stage("ptx") and "LDG" in comp.stage("sass")
    assert comp.resources.registers


def test_a_kernel_that_fails_to_compile_is_reported_by_the_parent(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "broken"))
    comp = open_file(fixture_path("compile_error.py"), target="sm_90").compile_all()[0]
    assert ahead.progress(_key(comp)) == ""  # started, then exited without reaching a step
    assert comp.failure is not None and comp.failure.line == 9
    assert "arange" in comp.failure.source_line


def test_nothing_starts_when_nothing_will_be_compiled(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "source-only"))
    before = len(ahead._children)
    code, out, _err = cli("dump", kernel_path("gelu.py"), "--stage", "source")
    assert code == 0 and "@triton.jit" in out
    code, _out, _err = cli("step", kernel_path("gelu.py"))
    assert code == 0
    assert len(ahead._children) == before
    monkeypatch.setenv("IRSCOPE_COMPILE_AHEAD", "0")
    comp = open_file(kernel_path("gelu.py"), target="sm_90").compile_all()[0]
    assert ahead.progress(_key(comp)) is None


def test_the_child_writes_nothing_to_the_terminal(tmp_path):
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "quiet"), PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "irscope", "dump", kernel_path("add.py"), "--stage", "sass"],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "LDG.E.128" in done.stdout


def test_a_reopen_on_a_warm_cache_starts_no_child(monkeypatch, tmp_path):
    from irscope.core.triton_compat import in_triton_cache

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "warm"))
    first = open_file(kernel_path("layernorm.py"), target="sm_90").compile_all()[0]
    assert ahead.progress(_key(first)) is not None
    assert in_triton_cache(first.kernel.jit, first.spec, first.target)  # the probe agrees with triton.compile
    again = open_file(kernel_path("layernorm.py"), target="sm_90").compile_all()[0]
    assert ahead.progress(_key(again)) is None
    assert again.stage("ptx") == first.stage("ptx")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cold"))
    assert not in_triton_cache(first.kernel.jit, first.spec, first.target)


def test_a_launch_repeated_in_a_loop_starts_one_child(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "loop"))
    source = open(kernel_path("add.py")).read().split('if __name__ == "__main__":')[0]
    loop = tmp_path / "loop_add.py"
    loop.write_text(source + 'if __name__ == "__main__":\n'
                    '    x = torch.rand(4096)\n'
                    '    for _ in range(3):\n'
                    '        add(x, x)\n'
                    '    add(x[1:], x[1:])\n')
    before = len(ahead._children)
    ws = open_file(str(loop), target="sm_90")
    assert len(ws.launches) == 4
    comps = ws.compile_all()
    assert len(comps) == 2  # two specializations: aligned, and off by one element
    assert len(ahead._children) - before <= 2
    assert "LDG.E.128" in comps[0].stage("sass")
    assert ahead.progress(_key(comps[0])) == "cs"
