"""A Gluon kernel (`@gluon.jit`) through the commands, compiled for real: kernels/gluon_copy.py launches one
2-D copy with two layouts. The layout along the rows loads 16 bytes per thread, the one down the columns 4."""

import ast
import json
import os
import re

import pytest
from conftest import ROOT, kernel_path
from tui_helpers import source_line_of

GLUON_COPY = kernel_path("gluon_copy.py")
LOAD_LINE = source_line_of(GLUON_COPY, "tile = gl.load(")


def _global_loads(ptx: str) -> list[str]:
    return re.findall(r"\bld\.global\.[\w.]+", ptx)


def test_report_shows_16_byte_loads_for_rows_and_scalar_loads_for_columns(cli):
    code, out, err = cli("report", GLUON_COPY, "--json")
    assert code == 0, err
    doc = json.loads(out)
    rows, cols = doc["kernels"]
    assert [k["language"] for k in (rows, cols)] == ["gluon", "gluon"]
    assert "size_per_thread=[1, 4]" in rows["constexprs"]["layout"]
    assert "size_per_thread=[1, 1]" in cols["constexprs"]["layout"]
    for k in (rows, cols):
        assert k["error"] is None
        assert list(k["stages"]) == ["source", "ttgir", "llir", "ptx", "sass"]  # no ttir in Gluon
        assert k["stages"]["ptx"]["mapped_fraction"] > 0.9
        assert k["coalescing_totals"]["error"] is None
    widths = {
        name: {o["width_bytes"] for o in k["memory_ops"] if o["space"] == "global"}
        for name, k in (("rows", rows), ("cols", cols))
    }
    assert widths == {"rows": {16}, "cols": {4}}
    # the interpreter does not run Gluon: said once for the file, and on each launch
    assert err.count("Gluon launch(es) recorded and compiled, not run") == 1
    assert all("does not run Gluon" in k["interpreter_error"] for k in (rows, cols))


@pytest.mark.parametrize("launch, wide", [(0, True), (1, False)])
def test_dump_ptx_of_each_layout(cli, launch, wide):
    code, out, err = cli("dump", GLUON_COPY, "--stage", "ptx", "--launch", launch, "--annotate")
    assert code == 0, err
    loads = [line for line in out.splitlines() if "ld.global" in line]
    assert loads and all(line.startswith(f"{LOAD_LINE} |") for line in loads)
    kinds = set(_global_loads(out))
    assert kinds == ({"ld.global.v4.b32"} if wide else {"ld.global.b32"})


def test_ttir_and_step_say_why_not_in_one_line(cli):
    code, out, err = cli("dump", GLUON_COPY, "--stage", "ttir")
    assert code != 0 and out == ""
    said = [line for line in err.splitlines() if line.startswith("irscope: error:")]
    assert len(said) == 1 and "Gluon kernel, so it has no ttir" in said[0]
    assert "choose one of: source, ttgir" in said[0] and "Traceback" not in err
    code, out, err = cli(
        "step", GLUON_COPY, "--program", "0", "--break", LOAD_LINE, "--print", "tile"
    )
    said = [line for line in err.splitlines() if line.startswith("irscope: error:")]
    assert code != 0 and len(said) == 1 and "not available for Gluon launches" in said[0]
    assert "Traceback" not in err


def test_sm100_compiles_too(cli):
    code, out, err = cli("dump", GLUON_COPY, "--stage", "ttgir", "--target", "sm_100")
    assert code == 0, err
    assert 'ttg.target = "cuda:100"' in out
    assert "sizePerThread = [1, 4], threadsPerWarp = [1, 32]" in out


def test_diff_of_the_two_layouts_names_the_layout_and_the_widths(cli):
    code, out, err = cli("diff", GLUON_COPY, "--left", "launch=0", "--right", "launch=1", "--json")
    assert code == 0, err
    doc = json.loads(out)
    text = json.dumps(doc)
    assert "size_per_thread=[1, 4]" in text and "size_per_thread=[1, 1]" in text
    load = next(
        row for row in doc["accesses"] if row["source_line"] == LOAD_LINE and row["kind"] == "load"
    )
    assert (load["left"]["instructions"], load["left"]["widths"]) == (8, [16])
    assert (load["right"]["instructions"], load["right"]["widths"]) == (32, [4])
    assert "sizePerThread = [1, 1]" in load["right"]["why_not_vectorized"][0]


NCU_LOG = os.path.join(ROOT, "validation", "data", "h100_gluon", "ncu_sectors_gluon_copy.log")


def test_coalescing_from_the_ptx_equals_what_nsight_compute_measured_on_the_h100():
    """Triton's interpreter does not run Gluon, so the addresses come from the PTX's own arithmetic, per
    thread. Over the whole grid, irscope's requests and sectors of each launch's loads and stores equal what
    ncu measured on the H100 (validation/data/h100_gluon: 16 sectors per request along the rows, 32 down the
    columns), and the column layout's accesses are the ones found uncoalesced, with a Gluon fix."""
    from irscope.analysis.coalescing.sectors import analyze_coalescing
    from irscope.engine.session import open_file

    with open(NCU_LOG) as f:
        measured = [
            row
            for row in map(ast.literal_eval, f.read().splitlines())
            if row["kernel"] == "copy_2d_kernel"
        ]
    assert len(measured) == 2
    ws = open_file(GLUON_COPY, target="sm_90", compile_ahead=False)
    comps = [comp for comp in ws.compile_all() if comp.ok]
    assert len(comps) == 2
    for comp, ncu in zip(comps, measured):
        result = analyze_coalescing(
            comp, max_programs=10**6
        )  # every program: ncu counts the whole grid
        assert result.error is None and len(result.programs) == 32
        predicted = (
            result.loads.requests,
            result.loads.sectors,
            result.stores.requests,
            result.stores.sectors,
        )
        assert predicted == tuple(
            int(ncu[k]) for k in ("ld_requests", "ld_sectors", "st_requests", "st_sectors")
        ), (comp.launch.constexprs, predicted, ncu)
    rows, cols = (analyze_coalescing(comp) for comp in comps)
    assert not any(a.inefficient for a in rows.accesses)
    assert {a.kind for a in cols.accesses if a.inefficient} == {"load", "store"}
    assert all("gl.BlockedLayout" in a.fix for a in cols.accesses)
