"""Named specializations: what only irscope's exploration of a benchmark sweep reached is listed when the file
opens, not compiled, and compiled when asked for, exactly as any other (issue 29). Real compiles throughout."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import fixture_path

from irscope.engine.compile import ahead
from irscope.engine.session import open_file
from irscope.engine.triton_compat import Target, compile_specialized, specialize

SIZES = fixture_path("benchmark_sizes.py")


@pytest.fixture(scope="module")
def opened():
    return open_file(SIZES, target="sm_90")


def test_opening_compiles_only_the_first_points_and_names_the_explored_ones(opened):
    ws = opened
    comps = ws.compile_all()
    # the file's own launch (n = 100) and the sweep's first point (n = 100 again): one specialization
    assert [c.constexprs["BLOCK"] for c in comps] == [128]
    kernel = comps[0].kernel
    named = ws.named(kernel)
    # the sweep's later points (n = 200, 400, 800), in the order it reached them: last first, then the middle
    assert sorted(n.constexprs["BLOCK"] for n in named) == [256, 512, 1024]
    assert [n.number for n in named] == [1, 2, 3]
    assert all(n.launch.explored for n in named) and not any(c.launch.explored for c in comps)
    # none of them was handed to a compile-ahead child while the file ran; the first point was
    target = Target("sm_90")
    assert ahead.compilation_key(kernel.jit, target, comps[0].spec) in ahead._considered
    for n in named:
        assert ahead.compilation_key(kernel.jit, target, n.spec) not in ahead._considered, (
            n.constexprs
        )


def test_a_named_specialization_compiles_on_request_as_compiling_it_directly(opened):
    ws = opened
    kernel = ws.compile_all()[0].kernel
    named = next(n for n in ws.named(kernel) if n.constexprs["BLOCK"] == 512)
    comp = ws.compilation_at(kernel, None, named.number)
    assert comp.ok and comp.constexprs == {"BLOCK": 512} and comp.launch.explored
    # the same kernel specialized and compiled from scratch for n = 400, as a GPU's JIT would at that size
    x, out = torch.rand(400), torch.empty(400)
    target = Target("sm_90")
    direct = compile_specialized(
        kernel.jit, specialize(kernel.jit, (x, out, 400), {"BLOCK": 512}, target), target
    )
    assert comp.stage("ptx") == direct.asm["ptx"]
    # not the first point's kernel again
    assert comp.stage("ptx") != ws.compile(kernel)[0].stage("ptx")
    # the others stay named
    assert len(ws.named(kernel)) == 3 and len(ws.compile(kernel)) == 1


def test_report_lists_the_named_ones_and_launch_n_compiles_one(cli):
    code, out, err = cli("report", SIZES, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [k["constexprs"] for k in doc["kernels"]] == [{"BLOCK": 128}]
    assert doc["kernels"][0]["compiled"] is True
    named = doc["named"]
    assert sorted(n["constexprs"]["BLOCK"] for n in named) == [256, 512, 1024]
    assert all(n["compiled"] is False and n["name"] == "row_double" for n in named)
    assert all(
        n["specialization"]["x_ptr"] == "D" and n["signature"]["BLOCK"] == "constexpr"
        for n in named
    )
    wanted = next(n for n in named if n["constexprs"]["BLOCK"] == 1024)
    assert wanted["how"].endswith(f"--kernel row_double --launch {wanted['launch_number']}")

    code, out, err = cli("report", SIZES, "--json", "--launch", wanted["launch_number"])
    assert code == 0, err
    doc = json.loads(out)
    (entry,) = doc["kernels"]
    assert (
        entry["constexprs"] == {"BLOCK": 1024}
        and entry["compiled"] is True
        and entry["explored"] is True
    )
    # compiled, shown as any other
    assert entry["stages"]["ptx"]["lines"] > 0 and entry["registers"] > 0
    assert sorted(n["constexprs"]["BLOCK"] for n in doc["named"]) == [256, 512]

    code, out, err = cli("report", SIZES)
    assert code == 0, err
    line = next(line for line in out.splitlines() if "more specialization" in line)
    assert line.startswith(
        "row_double: its benchmarks reach 3 more specialization(s), not compiled"
    )
    assert "BLOCK=256" in line and "--launch N (N = 1 to 3)" in line

    code, out, err = cli("report", SIZES, "--launch", 9)
    assert code != 0 and "--launch 9: row_double has 4 distinct specialization(s)" in err
    assert "Traceback" not in err


def test_the_picker_marks_the_named_ones_and_enter_compiles_one():
    from textual.widgets import DataTable
    from tui_helpers import run_async, wait_until_shown

    from irscope.tui.app import IrscopeApp
    from irscope.tui.screens import NOT_COMPILED, PickerScreen

    @run_async
    async def run():
        app = IrscopeApp(SIZES, target="sm_90")
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_until_shown(app, pilot)
            assert [c.constexprs["BLOCK"] for c in app.main.comps] == [
                128
            ]  # one compiled: shown at once
            await pilot.press("p")
            await pilot.pause()
            assert isinstance(app.screen, PickerScreen)
            rows = app.screen.rows
            assert [row["constexprs"] for row in rows[:1]] == [
                "BLOCK=128"
            ]  # the constexpr that tells them apart
            named = rows[1:]
            assert sorted(row["constexprs"] for row in named) == [
                "BLOCK=1024",
                "BLOCK=256",
                "BLOCK=512",
            ]
            table = app.screen.query_one(DataTable)
            marks = [str(table.get_row_at(n)[0]) for n in range(len(rows))]
            assert marks == ["", NOT_COMPILED, NOT_COMPILED, NOT_COMPILED], marks
            # the mark has a column of its own: the kernel's is as wide as its names, so that the
            # constexprs after it stay on an 80-column screen
            kernel = table.ordered_columns[1]
            assert str(kernel.label) == "kernel" and kernel.content_width == len("row_double")
            title = str(app.screen.query_one("#picker-title").content)
            assert f"{NOT_COMPILED} 3 named, not compiled — Enter compiles one" in title
            at = next(n for n, row in enumerate(rows) if row["constexprs"] == "BLOCK=512")
            await pilot.press(*["down"] * at, "enter")
            await pilot.pause(0.2)
            await wait_until_shown(app, pilot)
            shown = app.main.shown.comp
            assert shown.constexprs == {"BLOCK": 512} and len(app.main.comps) == 2
            # its PTX, shown
            assert ".visible .entry row_double" in "\n".join(app.main.shown.texts["ptx"].lines)
            # the picker now lists it as a compilation, and the two others still not compiled
            await pilot.press("p")
            await pilot.pause()
            rows = app.screen.rows
            assert [row["constexprs"] for row in rows if not row.get("named")] == [
                "BLOCK=128",
                "BLOCK=512",
            ]
            assert sorted(row["constexprs"] for row in rows if row.get("named")) == [
                "BLOCK=1024",
                "BLOCK=256",
            ]
            await pilot.press("escape")

    run()


def test_coverage_counts_a_named_specialization_the_gpu_compiled_as_named(opened):
    # benchmarks/coverage.py's comparison: a GPU runs every point of the sweep and compiles all four; the
    # report compiled one and named three, which are "named & compiled", not "compiled, not shown".
    import importlib.util
    import os
    import sys

    from conftest import ROOT

    from irscope.engine.report import build_report

    spec = importlib.util.spec_from_file_location(
        "coverage_named", os.path.join(ROOT, "benchmarks", "coverage.py")
    )
    coverage = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = coverage
    spec.loader.exec_module(coverage)

    ws = opened
    kernel = ws.compile_all()[0].kernel
    doc = build_report(ws, ws.compile_all(), ws.named_all())
    everything = ws.compile(kernel) + [
        ws.compilation_at(kernel, None, n.number) for n in ws.named(kernel)
    ]
    gpu = []
    for entry in build_report(ws, everything)[
        "kernels"
    ]:  # each compiled, keyed as the GPU side keys it
        args = (
            entry["module"],
            entry["name"],
            entry["signature"],
            entry["specialization"],
            entry["constexprs"],
            entry["num_warps"],
            entry["num_stages"],
        )
        gpu.append(
            {
                "name": entry["name"],
                "key": coverage.make_key(*args),
                "loose_key": coverage.make_key(*args, loose=True),
            }
        )
    result = coverage.compare("benchmark_sizes.py", gpu, doc)
    assert [r["result"] for r in result["rows"]] == ["shown & compiled"] + ["named & compiled"] * 3
    assert result["shown"] == 1 and result["named"] == 3
