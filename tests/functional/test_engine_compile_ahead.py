"""Compile ahead (irscope/engine/compile/ahead.py): without a GPU, each captured launch starts compiling in a forked
child while the user's file is still running. What irscope shows must not depend on whether it did."""

import os
import re
import signal
import subprocess
import sys

import pytest
from conftest import ROOT, fixture_path, kernel_path

from irscope.engine.compile import ahead
from irscope.engine.session import open_file


@pytest.fixture(autouse=True)
def _no_child_still_running():
    """Children get the cores the file's run leaves free (one here); one left over from an earlier test
    would hold that slot and keep this test's launch from getting a child; nor may a launch an earlier
    test's file queued start a child in this one (a wait starts queued launches)."""
    ahead.forget_waiting()
    for key in list(ahead._children):
        ahead.wait(key, ahead.DISASSEMBLED)


def _key(comp):
    return ahead.compilation_key(comp.kernel.jit, comp.target, comp.spec)


def _every_stage(comp) -> dict[str, str]:
    return {name: comp.stage(name) for name in comp.stage_names}


def test_the_child_compiles_and_disassembles_and_the_parent_shows_the_same_text(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "with-child"))
    helped = open_file(kernel_path("helper.py"), target="sm_90").compile_all()[0]
    helped_stages = _every_stage(helped)
    assert ahead.progress(_key(helped)) == "cs"  # the child got through both steps

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "alone"))
    alone = open_file(kernel_path("helper.py"), target="sm_90", compile_ahead=False).compile_all()[
        0
    ]
    assert ahead.progress(_key(alone)) is None
    assert _every_stage(alone) == helped_stages
    assert alone.resources == helped.resources
    assert "LDG" in helped_stages["sass"] and "//## File" in helped_stages["sass"]


def test_amd_targets_compile_ahead_too(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "amd"))
    comp = open_file(kernel_path("add.py"), target="gfx942").compile_all()[0]
    assert re.search(r"\b(global|buffer)_load_dwordx4\b", comp.stage("amdgcn"))
    # The child compiled it. On AMD the compile is its last step (there is no SASS to disassemble): the parent
    # collects the child as soon as it has read "compiled", and whether the child's closing "s" was in the
    # same read is a matter of timing (both were seen in CI), so only the compile is asserted.
    assert ahead.progress(_key(comp)) in ("c", "cs")


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
    done = subprocess.run(
        [sys.executable, "-m", "irscope", "dump", kernel_path("add.py"), "--stage", "sass"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "LDG.E.128" in done.stdout


GLOBAL_AFTER_LAUNCH = """
import torch
import triton
import triton.language as tl

SCALE = tl.constexpr(2.0)


@triton.jit
def busy_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)


if __name__ == "__main__":
    x = torch.rand(4096)
    busy_kernel[(4,)](x, 4096, BLOCK=1024)
    scale_kernel[(4,)](x, 4096, BLOCK=1024)
"""


def test_a_global_changed_after_the_launch_shows_the_same_with_or_without_a_child(
    monkeypatch, tmp_path
):
    """The parent never hashes a kernel before its own compile: hashing freezes the kernel's globals, and a
    later compile would then put the new value's code under the old value's key in Triton's cache."""
    changed = tmp_path / "changed.py"
    changed.write_text(GLOBAL_AFTER_LAUNCH + "    SCALE = tl.constexpr(3.0)\n")
    unchanged = tmp_path / "unchanged.py"
    unchanged.write_text(GLOBAL_AFTER_LAUNCH)
    texts = []
    for setting in ("1", "0"):
        monkeypatch.setenv("IRSCOPE_COMPILE_AHEAD", setting)
        monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / f"cache-{setting}"))
        ws = open_file(str(changed), target="sm_90")
        texts.append(ws.compile(ws.kernel("scale_kernel"))[0].stage("ttir"))
    assert texts[0] == texts[1] and "3.000000e+00" in texts[0]
    # and the cache the children shared holds nothing under a wrong key: the unchanged file gets 2.0
    monkeypatch.setenv("IRSCOPE_COMPILE_AHEAD", "1")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache-1"))
    ws = open_file(str(unchanged), target="sm_90")
    assert "2.000000e+00" in ws.compile(ws.kernel("scale_kernel"))[0].stage("ttir")


def test_dump_of_an_ir_stage_does_not_disassemble_ahead(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "ir-only"))
    ws = open_file(kernel_path("strided.py"), target="sm_90", ahead_sass=False)
    comp = ws.compile_all()[0]
    assert ahead.progress(_key(comp)) == "c" or ahead.progress(_key(comp)) == "cs"
    written = [name for _dir, _dirs, files in os.walk(tmp_path / "ir-only") for name in files]
    assert not [name for name in written if name.endswith(".sass")]  # no SASS was written
    assert not ahead.running()  # and the child, done, was collected at once: no zombie


def test_a_child_that_makes_no_progress_is_stopped_and_the_parent_compiles(monkeypatch, tmp_path):
    monkeypatch.setattr(ahead, "STALL_LIMIT_S", 1.0)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "stalled"))
    before = set(ahead.running())
    ws = open_file(kernel_path("transpose.py"), target="sm_90")
    stuck = set(ahead.running()) - before
    assert stuck
    for pid in stuck:
        os.kill(pid, signal.SIGSTOP)  # stands in for a child waiting on a lock it inherited
    comp = ws.compile_all()[0]
    assert comp.ok and "ld.global" in comp.stage("ptx")
    assert not set(ahead.running()) & stuck


def test_a_launch_repeated_in_a_loop_starts_one_child(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "loop"))
    source = open(kernel_path("add.py")).read().split('if __name__ == "__main__":')[0]
    loop = tmp_path / "loop_add.py"
    loop.write_text(
        source + 'if __name__ == "__main__":\n'
        "    x = torch.rand(4096)\n"
        "    for _ in range(3):\n"
        "        add(x, x)\n"
        "    add(x[1:], x[1:])\n"
    )
    before = len(ahead._children)
    ws = open_file(str(loop), target="sm_90")
    assert len(ws.launches) == 4
    comps = ws.compile_all()
    assert len(comps) == 2  # two specializations: aligned, and off by one element
    assert len(ahead._children) - before <= 2
    assert "LDG.E.128" in comps[0].stage("sass")
    assert ahead.progress(_key(comps[0])) == "cs"


def test_launches_that_found_no_free_core_get_children_once_the_file_has_run(monkeypatch, tmp_path):
    """While the file runs it holds a core; a launch that finds none free waits for the end of the run
    (then the file's core is free) rather than for the parent to compile it one after the other."""
    source = open(kernel_path("add.py")).read().split('if __name__ == "__main__":')[0]
    two = tmp_path / "two_add.py"
    two.write_text(
        source + 'if __name__ == "__main__":\n'
        "    x = torch.rand(4096)\n"
        "    add(x, x)\n"
        "    add(x[1:], x[1:])\n"
    )
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "none-free"))
    monkeypatch.setattr(ahead, "_slots", lambda file_running=True: 0 if file_running else 2)
    comps = open_file(str(two), target="sm_90").compile_all()
    assert len(comps) == 2
    assert [ahead.progress(_key(c)) in ("c", "cs") for c in comps] == [True, True]
    helped = [_every_stage(c) for c in comps]
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "alone"))
    alone = open_file(str(two), target="sm_90", compile_ahead=False).compile_all()
    assert [_every_stage(c) for c in alone] == helped
    assert "LDG.E.128" in helped[0]["sass"] and "LDG.E.128" not in helped[1]["sass"]


def test_a_child_forked_from_a_worker_thread_works(monkeypatch, tmp_path):
    """The terminal UI opens files in a worker thread: the child must still set its signals and finish."""
    import threading

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "thread"))
    found = {}

    def work():
        comp = open_file(kernel_path("add.py"), target="sm_90").compile_all()[0]
        comp.stage("sass")
        found["progress"] = ahead.progress(_key(comp))

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert found["progress"] == "cs"


def test_a_child_outlives_the_thread_of_the_file_that_made_the_launch(monkeypatch, tmp_path):
    """Linux sends a child its parent-death signal when the thread that forked it ends, not the process: a
    launch made on a thread of the file's own forked a child that was stopped when that thread ended, and the
    worker compiled the kernel again itself. The child finishes now."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    source = open(fixture_path("threads.py")).read()
    # threads.py without the thread it leaves sleeping: the launch's thread has ended by the time the file does
    launched_on_a_thread = tmp_path / "launched_on_a_thread.py"
    sleeper = "threading.Thread(target=lambda: time.sleep(3600)).start()"
    assert sleeper in source
    launched_on_a_thread.write_text(source.replace(sleeper, "pass"))
    comp = open_file(str(launched_on_a_thread), target="sm_90").compile_all()[0]
    comp.stage("sass")
    assert ahead.progress(_key(comp)) == "cs"


def test_a_reopen_of_the_same_file_starts_no_child(monkeypatch, tmp_path):
    """A fork costs the parent page faults for the rest of its life; on a warm cache it would buy nothing."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "warm"))
    first = open_file(kernel_path("layernorm.py"), target="sm_90").compile_all()[0]
    first_sass = first.stage("sass")
    assert ahead.progress(_key(first)) == "cs"
    again = open_file(kernel_path("layernorm.py"), target="sm_90").compile_all()[0]
    assert ahead.progress(_key(again)) is None
    assert again.stage("ptx") == first.stage("ptx") and again.stage("sass") == first_sass
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cold"))  # another cache: a child again
    cold = open_file(kernel_path("layernorm.py"), target="sm_90").compile_all()[0]
    assert ahead.progress(_key(cold)) is not None


def test_queued_launches_take_the_cores_the_parent_leaves_free(monkeypatch):
    """Launches queued while the file ran are not forgotten once the first children have the free cores:
    when the parent compiles one itself, the next one takes the core it leaves (tutorial 06's parent compiled
    the rest one after the other on one core, the other idle)."""
    forked, busy = [], []

    def fork(key, jit, spec, target, disassemble_too, last_step, slots):
        if len(busy) >= slots:
            return False
        busy.append(key)
        forked.append(key)
        return True

    monkeypatch.setattr(ahead, "_fork", fork)
    monkeypatch.setattr(ahead, "_slots", lambda file_running=True: 1 if file_running else 2)
    monkeypatch.setattr(ahead, "_waiting", {})
    for key in ("a", "b", "c", "d"):
        ahead._waiting[key] = (None, None, None, True, ahead.DISASSEMBLED)
    ahead.start_waiting()  # the file's core is free: two cores, two children
    assert forked == ["a", "b"] and list(ahead._waiting) == ["c", "d"]
    busy.clear()  # both done
    ahead.wait(
        "c", ahead.COMPILED
    )  # none started for c: the parent compiles it, d takes the other core
    assert forked == ["a", "b", "d"] and ahead._waiting == {}
