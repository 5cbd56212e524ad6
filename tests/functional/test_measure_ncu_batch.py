"""Nsight Compute on several compilations in one run of the file (measure_all, ncu_run.run_ncu_many): the
child launches each wanted compilation after one run, and ncu's multi-launch pages are cut per launch. The
launches under ncu are run by validation/h100_measure4.sh on the H100; here the child on the virtual GPU, and
the cutting on pages the H100 wrote."""

import os
import subprocess
import tarfile

from conftest import ROOT, fixture_path, kernel_path

from irscope.analysis.measured.ncu_parse import (
    parse_raw_page,
    parse_source_page,
    split_raw_text,
    split_source_text,
)
from irscope.engine.measure import child_key
from irscope.engine.measure.ncu_child import spec_id
from irscope.engine.measure.ncu_run import child_command, child_env
from irscope.engine.session import open_file

PAGES = os.path.join(
    ROOT, "validation", "data", "h100_measure4", "callC", "measure_C", "ncu_pages.tar.gz"
)


def _texts(stem: str) -> tuple[str, str]:
    with tarfile.open(PAGES) as tar:
        return (
            tar.extractfile(f"ncu_pages/{stem}.source.csv").read().decode(),
            tar.extractfile(f"ncu_pages/{stem}.raw.csv").read().decode(),
        )


def test_pages_of_several_launches_are_cut_into_one_per_launch():
    """Two launches' pages joined as ncu prints them for one report (a table per launch on the source page,
    a row per launch on the raw page) come apart into exactly the pages of each."""
    one_src, one_raw = _texts("triton_square.__main__.square_kernel.0")
    two_src, two_raw = _texts("triton_square.__main__.square_kernel.5")
    raw_lines = two_raw.splitlines(keepends=True)
    head = [line for line in raw_lines[:2]]
    row = raw_lines[2].replace('"0"', '"1"', 1)
    joined_raw = one_raw.rstrip("\n") + "\n" + row
    sources = split_source_text(one_src + two_src)
    raws = split_raw_text(joined_raw)
    assert len(sources) == 2 and len(raws) == 2 and head
    for text, want in zip(sources, (one_src, two_src)):
        got, expected = parse_source_page(text), parse_source_page(want)
        assert len(got) == 1 and [r.text for r in got[0].rows] == [r.text for r in expected[0].rows]
    first, second = parse_raw_page(raws[0])[0], parse_raw_page(raws[1])[0]
    assert first == parse_raw_page(one_raw)[0]
    assert second["gpu__time_duration.sum"] == parse_raw_page(two_raw)[0]["gpu__time_duration.sum"]
    assert first["gpu__time_duration.sum"] != second["gpu__time_duration.sum"]


def test_one_child_run_finds_every_wanted_compilation(tmp_path):
    """misaligned.py launches one kernel in two specializations: one child, asked for both, finds both and
    says so for each (on a GPU it launches each in the profiled range); a compilation it cannot find is said
    by its place, and the others still run."""
    path = kernel_path("misaligned.py")
    ws = open_file(path, target="sm_90", compile_ahead=False)
    comps = ws.compile_all()
    keys = [(*child_key(ws, c), spec_id(c.spec, c.kernel.jit)) for c in comps]
    assert len(keys) == 2
    (kernel, config, index, spec), more = keys[0], keys[1:] + [(keys[0][0], -1, 7, "0" * 20)]
    done = subprocess.run(
        child_command(path, kernel, config, index, spec=spec, also=more),
        env=child_env(str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-1500:]
    name = kernel.rsplit(":", 1)[-1]
    assert done.stderr.count(f"found {name} and its arguments; no GPU to launch it on") == 2
    assert "irscope_measure: not launched #2:" in done.stderr


def test_measuring_says_each_step_as_it_ends():
    """A measurement can take minutes (runs of the file under ncu, whole-launch predictions): each step is said
    as it ends, with its seconds (on the H100, validation/gpu_measure.py keeps these lines beside each file's
    JSON). A compilation the file did not launch (--no-run) is said too, and measured as not launched."""
    from irscope.engine.measure import NOT_LAUNCHED, measure_all
    from irscope.engine.overrides import Overrides

    ws = open_file(
        kernel_path("add.py"),
        target="sm_90",
        run_main=False,
        overrides=Overrides.parse(["BLOCK_SIZE=1024"], []),
    )
    comps = ws.compile_all(kernel_name="add_kernel")
    said: list[str] = []
    done = measure_all(ws, comps, progress=said.append)
    assert [m.errors for m in done] == [[NOT_LAUNCHED]] * len(comps)
    assert len(said) == len(comps) and said[0].startswith(
        f"add_kernel, compilation 1 of {len(comps)}: "
    )
    assert said[0].endswith(" s")


def test_ncus_child_tells_apart_inductors_kernels_of_one_name():
    """torch.compile called at two sizes puts a `triton_poi_fused_mul_0` in each of two Inductor modules, whose
    names the child's run does not share with the parent's. The child finds each compilation's own kernel by
    its spec_id, which holds the kernel's source as well as the specialization: on the H100, triton_square.py's
    two same-named kernels had one specialization, and the child could not tell which the parent measured."""
    from irscope.engine.measure.ncu_child import find_kernel

    ws = open_file(fixture_path("compiled_twice.py"), target="sm_90", compile_ahead=False)
    kernels = [k for k in ws.kernels if k.name == "triton_poi_fused_mul_0"]
    assert len(kernels) == 2 and kernels[0].qualified_name != kernels[1].qualified_name
    for kernel, other in (kernels, kernels[::-1]):
        comp = ws.compile(kernel)[0]
        # the same specialization apart
        assert spec_id(comp.spec, kernel.jit) != spec_id(comp.spec, other.jit)
        renamed = "torch._inductor.runtime.compile_tasks.cnotthisrun:triton_poi_fused_mul_0"
        assert find_kernel(ws, renamed, spec_id(comp.spec, kernel.jit)) is kernel
