"""`irscope passes`: the IR between compiler passes, from a real compile with Triton's dumps on."""

import json
import os
import re
import shutil

import pytest
from conftest import ROOT, kernel_path


@pytest.fixture(scope="module")
def add_steps():
    from irscope.engine.compile.passes import capture_passes
    from irscope.engine.session import open_file

    ws = open_file(kernel_path("add.py"), target="sm_90", compile_ahead=False)
    comp = ws.compile(ws.kernel(None))[0]
    return capture_passes(comp)


def _load_layouts(text):
    """The layout of each tt.load in an MLIR dump, aliases resolved by hand (independent of irscope)."""
    aliases = dict(re.findall(r"^(#blocked\d*) = (.*)$", text, re.M))
    return [aliases.get(m, m) for m in re.findall(r"tt\.load .*?, (#blocked\d*)>", text)]


def test_coalesce_gives_the_loads_a_wider_layout(add_steps):
    coalesce = next(s for s in add_steps if s.name == "tritongpu-coalesce")
    assert coalesce.stage == "ttgir" and 26 in coalesce.source_lines
    before, after = _load_layouts(coalesce.before), _load_layouts(coalesce.after)
    assert len(after) == 2 and before != after
    assert all("sizePerThread = [4]" in layout for layout in after)


def test_passes_not_touching_line_26_leave_its_ops_alone(add_steps):
    # a TTIR/TTGIR pass not listed for line 26 keeps the same count of ops located at line 26 (read from the
    # raw dumps; the LLVM dialect wraps locations in debug scopes, which this plain reading does not follow)
    loc_ids = lambda text: set(re.findall(r'^(#loc\d+) = loc\("[^"]*add\.py":26:', text, re.M))  # noqa: E731
    counted = []
    for step in add_steps:
        if step.before is None or step.stage not in ("ttir", "ttgir") or 26 in step.source_lines:
            continue
        counts = []
        for text in (step.before, step.after):
            ids = loc_ids(text)
            named = set(re.findall(r'^(#loc\d+) = loc\("\w+"\((#loc\d+)\)\)', text, re.M))
            ids |= {a for a, b in named if b in ids}
            counts.append(
                sum(
                    1
                    for line in text.splitlines()
                    if any(line.rstrip().endswith(f"loc({i})") for i in ids)
                )
            )
        assert counts[0] == counts[1], step.title
        counted.append(counts[0])
    # passes were compared, and the reading found line 26's ops
    assert len(counted) > 5 and max(counted) > 0


def test_cli_line_26_names_coalesce(cli):
    code, out, err = cli("passes", kernel_path("add.py"), "--line", "26")
    assert code == 0, err
    assert "changed the IR of line 26" in out and "tritongpu-coalesce" in out
    # ttir canonicalize: not 26
    assert "canonicalize " not in out.split("tritongpu-coalesce")[0].split("\n", 2)[-1]
    code, out, _ = cli("passes", kernel_path("add.py"), "--pass", "tritongpu-coalesce", "--diff")
    assert (
        code == 0
        and out.startswith("// pass ")
        and "+ #blocked1 = #ttg.blocked<{sizePerThread = [4]" in out
    )
    code, out, _ = cli("passes", kernel_path("add.py"), "--pass", "tritongpu-coalesce")
    assert code == 0 and "module attributes" in out and "// -----//" not in out


def test_json_and_stage_filter(cli):
    code, out, _ = cli("passes", kernel_path("add.py"), "--stage", "llir", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["passes"] and all(p["stage"] == "llir" for p in doc["passes"])
    assert doc["passes_run"] > len(doc["passes"])


def test_bad_pass_is_one_line(cli):
    code, out, err = cli("passes", kernel_path("add.py"), "--pass", "no-such-pass")
    assert code != 0 and "--pass no-such-pass" in err and len(err.strip().splitlines()) == 1


def test_matmul_which_pass_added_a_convert_layout():
    """'Which pass added this convert_layout': the TTGIR passes whose output has more ttg.convert_layout ops
    than their input (counted in the raw dumps) are exactly those whose diff adds one."""
    from irscope.engine.compile.passes import capture_passes
    from irscope.engine.session import open_file

    ws = open_file(kernel_path("matmul.py"), target="sm_90", compile_ahead=False)
    steps = capture_passes(ws.compile(ws.kernel(None))[0])
    count = lambda text: len(re.findall(r"= ttg\.convert_layout ", text))  # noqa: E731
    grew = [
        s.index for s in steps if s.stage in ("ttir", "ttgir") and count(s.after) > count(s.before)
    ]
    adds = [
        s.index
        for s in steps
        if s.stage in ("ttir", "ttgir")
        and any(m == "+" and "ttg.convert_layout" in t for m, t in s.diff)
    ]
    assert grew and set(grew) <= set(adds)
    assert all(steps[i - 1].source_lines for i in grew)


def test_corpus_tutorial_passes(cli, tmp_path):
    src = os.path.join(ROOT, "tests", "corpus", "tutorials", "triton-3.6", "02-fused-softmax.py")
    path = tmp_path / "02-fused-softmax.py"
    shutil.copy(src, path)
    code, out, err = cli("passes", str(path), "--json")
    assert code == 0, err
    doc = json.loads(out)
    stages = {p["stage"] for p in doc["passes"]}
    assert {"ttir", "ttgir", "llvm-dialect", "llir"} <= stages
    assert any(p["source_lines"] for p in doc["passes"])
