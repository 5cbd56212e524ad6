"""benchmarks/coverage.py, its offline side (the GPU side runs on an H100 only): irscope's report of a real
corpus file turned into keyed rows, the table's shape, and a comparison that reports a compilation the GPU
made and irscope did not show (the GPU side here is the shown one, then one of its compilations removed)."""

import copy
import importlib.util
import json
import os
import sys

import pytest
from conftest import ROOT, fixture_path

_spec = importlib.util.spec_from_file_location(
    "coverage_bench", os.path.join(ROOT, "benchmarks", "coverage.py")
)
coverage = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = coverage
_spec.loader.exec_module(coverage)

SMALL = "snippets/gpu-mode-lectures/vector_add.py"


@pytest.fixture(scope="module")
def offline_doc():
    doc, error, _seconds = coverage.shown_offline(SMALL, "sm_90", timeout=120)
    assert error is None and doc is not None, error
    return doc


def test_offline_side_gives_one_keyed_row_per_shown_specialization(offline_doc):
    result = coverage.compare(SMALL, None, offline_doc)
    assert result["shown"] == len(offline_doc["kernels"]) >= 1
    assert [r["result"] for r in result["rows"]] == ["shown (offline only)"] * result["shown"]
    table = coverage.markdown(
        [result], "python benchmarks/coverage.py --offline-only", offline_only=True
    )
    lines = table.splitlines()
    assert lines[0] == "Made by `python benchmarks/coverage.py --offline-only`."
    assert lines[4] == "| file | shown (offline only) | named (offline only) | offline s | notes |"
    assert lines[6].startswith(f"| {SMALL} | {result['shown']} | 0 |") and lines[7].startswith(
        "| **total** |"
    )


def test_a_compilation_irscope_did_not_show_is_reported_missing(offline_doc):
    gpu = [
        {"name": s["name"], "key": s["key"], "loose_key": s["key"]}
        for s in coverage.shown_keys(offline_doc)
    ]
    full = coverage.compare(SMALL, gpu, offline_doc)
    assert (
        coverage.counts(full)["shown & compiled"] == len(gpu)
        and coverage.counts(full)["compiled, not shown"] == 0
    )

    removed = copy.deepcopy(offline_doc)
    gone = removed["kernels"].pop(0)
    partial = coverage.compare(SMALL, gpu, removed)
    missing = [r for r in partial["rows"] if r["result"] == "compiled, not shown"]
    assert [(r["kernel"], r["reason"]) for r in missing] == [(gone["name"], "not said")]
    table = coverage.markdown([partial], "cmd", offline_only=False)
    assert (
        f"| {SMALL} | {len(gpu) - 1} | 0 | 1 | 0 | 0 |" in table and "| vector_add.py" not in table
    )
    assert f"| {SMALL} | {gone['name']} |  | not said |" in table

    removed["missing"] = [
        {"kernel": gone["name"], "reason": "the run stopped at line 9 before it launched"}
    ]
    said = coverage.compare(SMALL, gpu, removed)
    assert [r["reason"] for r in said["rows"] if r["result"] == "compiled, not shown"] == [
        "the run stopped at line 9 before it launched"
    ]


def test_a_specialization_after_the_runs_stop_is_said_by_the_stop_note():
    """A kernel shown in some specializations and not in one the GPU compiled later: the report's note on the
    run's stop (its line and cause, the knobs that give it longer) is what irscope said of it."""
    stop = (
        "benchmark.py: stopped after 45.2 s at line 84: nothing new launched in the last 3 s; 10 launch(es) of "
        "1 kernel(s) captured (IRSCOPE_CAPTURE_QUIET / IRSCOPE_CAPTURE_LIMIT give it longer)"
    )
    doc = {"kernels": [{"name": "fused"}], "notes": ["another note"]}
    assert coverage.missing_reason(doc, "fused") == "not said"
    assert coverage.missing_reason({**doc, "notes": [stop]}, "fused") == "said: " + stop
    assert coverage.missing_reason({**doc, "notes": [stop]}, "never_shown") == "not said"


def test_a_shown_specialization_the_gpu_never_compiled_is_reported(offline_doc):
    result = coverage.compare(SMALL, [], offline_doc)
    assert coverage.counts(result)["shown, never compiled"] == len(offline_doc["kernels"])


def test_a_config_the_json_names_but_did_not_compile_is_keyed_with_its_own_meta_parameters():
    # One compilation of config 0, and config 1 named for the same launch: a GPU compile of config 1 (its
    # descriptor's block shape set by the config's pre-hook) is "named & compiled"; one of a config nobody named
    # is "compiled, not shown".
    doc = {
        "kernels": [
            {
                "name": "k",
                "module": "m",
                "signature": {"d": "tensordesc<fp16[64, 32]>", "n": "i32"},
                "specialization": {"d": "", "n": "D"},
                "constexprs": {"BLOCK": 64, "EVEN": True},
                "num_warps": 4,
                "num_stages": 3,
                "autotune": {
                    "tried": [
                        {
                            "index": 0,
                            "kwargs": {"BLOCK": 64},
                            "num_warps": 4,
                            "num_stages": 3,
                            "shown": True,
                        },
                        {
                            "index": 1,
                            "kwargs": {"BLOCK": 128},
                            "num_warps": 8,
                            "num_stages": 2,
                            "shown": False,
                        },
                    ]
                },
            }
        ]
    }

    def compiled(signature, block, warps, stages):
        args = (
            "m",
            "k",
            signature,
            {"d": "", "n": "D"},
            {"BLOCK": block, "EVEN": True},
            warps,
            stages,
        )
        return {
            "name": "k",
            "key": coverage.make_key(*args),
            "loose_key": coverage.make_key(*args, loose=True),
        }

    gpu = [
        compiled({"d": "tensordesc<fp16[64, 32]>", "n": "i32"}, 64, 4, 3),
        compiled({"d": "tensordesc<fp16[128, 32]>", "n": "i32"}, 128, 8, 2),
        compiled({"d": "tensordesc<fp16[256, 32]>", "n": "i32"}, 256, 8, 2),
    ]
    result = coverage.compare("f.py", gpu, doc)
    assert [r["result"] for r in result["rows"]] == [
        "shown & compiled",
        "named & compiled",
        "compiled, not shown",
    ]
    assert coverage.counts(coverage.compare("f.py", gpu[:1], doc))["named, never compiled"] == 1


def test_an_unknown_file_is_one_line_and_exit_2(capsys):
    assert coverage.main(["--offline-only", "--files", "nowhere/none.py"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere/none.py" in err


_GPU_SIDE = """
import json, os, runpy, sys
sys.argv = ["coverage"]
os.environ["TRITON_INTERPRET"] = "0"  # kernels/add.py asks for the interpreter where there is no GPU
sys.path.insert(0, {root!r})
import importlib.util
spec = importlib.util.spec_from_file_location("cov", os.path.join({root!r}, "benchmarks", "coverage.py"))
cov = importlib.util.module_from_spec(spec); sys.modules["cov"] = cov; spec.loader.exec_module(cov)
records = []
cov.hook_compile(records)
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
kernel = runpy.run_path({path!r}, run_name="add")["add_kernel"]
kernel.fn.__module__ = "__main__"  # as when the file runs as a script
signature = {{"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32", "BLOCK_SIZE": "constexpr"}}
attrs = {{(i,): [["tt.divisibility", 16]] for i in range(4)}}
triton.compile(ASTSource(kernel, signature, {{(4,): 1024}}, attrs), target=GPUTarget("cuda", 90, 32),
               options={{"num_warps": 4, "num_stages": 3}})
print(json.dumps(records))
"""


def test_the_gpu_sides_hook_keys_a_real_compile_as_the_report_shows_it():
    """Side (a)'s hook on Triton's compile entry, fed a real compile (Triton's own compile for sm_90, no GPU
    needed) of the specialization the report shows for kernels/add.py: the two keys are one."""
    import json
    import subprocess

    path = os.path.join(ROOT, "kernels", "add.py")
    done = subprocess.run(
        [sys.executable, "-c", _GPU_SIDE.format(root=ROOT, path=path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    records = json.loads(done.stdout.splitlines()[-1])
    assert [(r["name"], r["module"], r["hash"] is not None) for r in records] == [
        ("add_kernel", "__main__", True)
    ]
    gpu = [
        dict(
            r,
            key=coverage.make_key(
                r["module"],
                r["name"],
                r["signature"],
                r["specialization"],
                r["constexprs"],
                r["num_warps"],
                r["num_stages"],
            ),
            loose_key=None,
        )
        for r in records
    ]
    doc, error, _ = coverage.shown_offline(path, "sm_90", timeout=120)
    assert error is None, error
    assert coverage.counts(coverage.compare("kernels/add.py", gpu, doc))["shown & compiled"] == 1


RUN4 = os.path.join(
    ROOT, "validation", "data", "h100_coverage", "run4_part1_rest", "coverage.json.gz"
)
CROSS_ENTROPY = "community/efficient-cross-entropy/benchmark.py"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def test_a_report_that_ended_in_an_error_gives_its_error_line_as_each_missing_compilations_reason(
    monkeypatch,
):
    """The H100's recorded compilations of a real corpus file (run4) against irscope's real report of it, which
    ends in an error before the file's first launch (its torch work outlasts the capture limit): each
    compilation is missing with irscope's error line as the reason (it was "not said" before), and irscope's
    side on the GPU, a report that gave no JSON, counts every compilation as not captured (it was left out of
    the totals before)."""
    recorded = next(r for r in coverage.read_saved(RUN4)["files"] if r["file"] == CROSS_ENTROPY)
    gpu = coverage.rekeyed(recorded["gpu_compiles"])
    assert len({g["key"] for g in gpu}) == 6
    monkeypatch.setenv("IRSCOPE_CAPTURE_LIMIT", "5")
    doc, error, _ = coverage.shown_offline(CROSS_ENTROPY, "sm_90", timeout=200)
    # The file plots with matplotlib and pandas (tests/corpus/requirements.txt); where they are not installed
    # (CI's test environment) the report ends in another error line, the missing module's, before any launch.
    plots = all(_importable(m) for m in ("matplotlib", "pandas"))
    expected = "launched no kernel" if plots else "No module named"
    assert doc is None and expected in error, error
    result = coverage.compare(CROSS_ENTROPY, gpu, doc, error)
    assert coverage.counts(result)["compiled, not shown"] == 6
    assert {r["reason"] for r in result["rows"]} == {"said: " + error}
    assert "| fused_cross_entropy_fwd_bwd_kernel |  | said: " in coverage.markdown(
        [result], "cmd", offline_only=False
    )

    live = coverage.on_gpu_counts(gpu, None, error)
    assert (live["captured"], live["compiled"]) == (0, 6)
    assert {m["reason"] for m in live["not captured"]} == {"said: " + error}
    stopped_here = coverage.compare(CROSS_ENTROPY, gpu, None, "timed out after 300 s")
    assert {r["reason"] for r in stopped_here["rows"]} == {"not said: timed out after 300 s"}


def test_the_kept_side_b_prime_keys_the_same_as_the_whole_report():
    """coverage.json keeps irscope's report from the GPU in short (`compact`), for later replays to key again. It
    dropped the specializations only a sweep's exploration reached (the JSON's `named`): a replay of run 6
    counted six sweep files 40 compilations short of what the GPU run itself counted."""
    doc, error, _ = coverage.shown_offline(
        os.path.relpath(fixture_path("benchmark_sizes.py"), coverage.corpus.CORPUS),
        "sm_90",
        timeout=200,
    )
    assert error is None, error
    assert doc["named"], "the fixture's sweep names specializations: the test would check nothing"
    whole = sorted(json.dumps(k, sort_keys=True) for k in coverage.shown_keys(doc))
    kept = sorted(json.dumps(k, sort_keys=True) for k in coverage.shown_keys(coverage.compact(doc)))
    assert kept == whole
