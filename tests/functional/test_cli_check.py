"""`irscope check`: the real front end and its workers on real kernels; formats, exit codes, baselines."""

import contextlib
import io
import json
import os
import shutil

import pytest
from conftest import FIXTURES, KERNELS, ROOT

from irscope.base.errors import IrscopeError
from irscope.cli.check import apply_baseline, collect_files, open_failed
from irscope.cli.check_output import github_line, sarif_document
from irscope.cli.main import main
from irscope.findings.rules.launch import LAUNCH_SIZE_RULES
from irscope.worker import client

SCHEMA = os.path.join(FIXTURES, "sarif", "sarif-schema-2.1.0.json")


def check(*args, cwd):
    """`irscope check ...` as a user would run it from `cwd` (outside the checkout): the real front end, in the
    test's process (test_real_binary_prints_no_traceback runs the installed command itself), its workers
    processes of their own, each forked from one warm process (worker/warm.py) as `check` over several files
    forks them; its exit code, stdout and stderr as the command line gives them."""
    client.keep_warm(yield_to_screen=False)
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["check", *map(str, args)])
    finally:
        os.chdir(here)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """The examples copied into a scratch repository: strided, misaligned, add and a compile error."""
    root = tmp_path_factory.mktemp("repo")
    kernels = root / "kernels"
    kernels.mkdir()
    for name in ("add.py", "strided.py", "misaligned.py"):
        shutil.copy(os.path.join(KERNELS, name), kernels / name)
    (kernels / "notes.py").write_text("print('no kernel here')\n")  # skipped: defines no kernel
    return root


@pytest.fixture(scope="module")
def kernels_json(repo):
    code, out, err = check("kernels", "--format", "json", "--jobs", "2", cwd=repo)
    return code, json.loads(out), err


def test_kernels_directory_flags_strided_and_misaligned_and_not_add(kernels_json):
    code, doc, err = kernels_json
    assert code == 1
    assert [f["path"] for f in doc["files"]] == [
        "kernels/add.py",
        "kernels/misaligned.py",
        "kernels/strided.py",
    ]
    by_file = {}
    for f in doc["findings"]:
        if f["rule"] not in LAUNCH_SIZE_RULES:  # every example launches a test size under one wave
            by_file.setdefault(f["file"], []).append((f["rule"], f["source_line"]))
    small = sorted(f["file"] for f in doc["findings"] if f["rule"] == "small-grid")
    assert small == ["kernels/add.py", "kernels/misaligned.py", "kernels/strided.py"]
    assert "kernels/add.py" not in by_file
    assert by_file["kernels/strided.py"] == [("uncoalesced", 26)]
    # one finding per line and rule, merged over misaligned.py's two launches (n = 1000, and x[1:]): the
    # store at line 27 is a masked tail in both, the loads in the first only (the second's are misaligned)
    shares = {
        (f["rule"], f["source_line"]): f["launches"]["text"]
        for f in doc["findings"]
        if f["file"] == "kernels/misaligned.py" and f["rule"] not in LAUNCH_SIZE_RULES
    }
    assert sorted(by_file["kernels/misaligned.py"]) == sorted(shares)
    assert shares == {
        ("masked-tail", 25): "in 1 of 2 launches",
        ("masked-tail", 26): "in 1 of 2 launches",
        ("masked-tail", 27): "in all 2 launches",
        ("not-vectorized", 25): "in 1 of 2 launches",
        ("not-vectorized", 26): "in 1 of 2 launches",
    }
    causes = [f["message"] for f in doc["findings"] if f["rule"] == "not-vectorized"]
    assert all("is not known to be 16-byte aligned" in m for m in causes)
    assert "irscope check: 3 file(s), 9 finding(s): 0 error(s), 6 warning(s), 3 info" in err


def test_text_is_compiler_style_and_add_alone_is_clean(repo):
    code, out, err = check("kernels/strided.py", cwd=repo)
    assert code == 1
    first = out.splitlines()[0]
    where, rest = first.split(": ", 1)
    path, line, column = where.split(":")
    # inside the tl.load call
    assert (path, line) == ("kernels/strided.py", "26") and 9 <= int(column) <= 44
    assert rest.startswith("warning[uncoalesced] in strided_gather_kernel: load of x_ptr: ")
    assert first.endswith(
        "(32.0 sectors per request where 4.0 would do: 8.0× the bytes the lanes use "
        "(114688 excess bytes in the programs sampled))"
    )
    assert out.splitlines()[1].startswith("    fix: Read contiguous elements")
    code, out, err = check("kernels/add.py", cwd=repo)
    (said,) = [line for line in out.splitlines() if not line.startswith("    fix: ")]
    assert code == 0 and said.startswith(
        "kernels/add.py:21:1: info[small-grid] in add_kernel: grid 4 x 1 x 1"
    )
    assert "1 finding(s): 0 error(s), 0 warning(s), 1 info" in err


def test_control_bytes_in_the_source_reach_no_terminal(tmp_path):
    text = open(os.path.join(KERNELS, "strided.py")).read()
    (tmp_path / "s.py").write_text(
        text.replace("# stride 8 (= STRIDE): uncoalesced", "# \x1b]0;owned\x07\x1b[2J")
    )
    for fmt in ("text", "github", "json", "sarif"):
        code, out, _ = check("s.py", "--format", fmt, cwd=tmp_path)
        assert code == 1 and "\x1b" not in out and "\x07" not in out, fmt
    (f,) = [
        f
        for f in json.loads(check("s.py", "--format", "json", cwd=tmp_path)[1])["findings"]
        if f["rule"] == "uncoalesced"
    ]
    assert f["source_text"].endswith("# \\x1b]0;owned\\x07\\x1b[2J")  # shown, not obeyed


def test_fail_on_threshold(repo):
    assert check("kernels/strided.py", "--fail-on", "error", cwd=repo)[0] == 0
    assert check("kernels/strided.py", "--fail-on", "never", cwd=repo)[0] == 0
    assert check("kernels/strided.py", "--fail-on", "info", cwd=repo)[0] == 1


def test_baseline_accepts_known_findings_after_an_edit_above_them(repo, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(repo / "kernels", work / "kernels")
    assert check("kernels/strided.py", "--write-baseline", "base.json", cwd=work)[0] == 0
    base = json.loads((work / "base.json").read_text())
    assert base["accepted"] == [
        {
            "file": "kernels/strided.py",
            "kernel": "strided_gather_kernel",
            "rule": "uncoalesced",
            "source_text": "x = tl.load(x_ptr + offs * 8, mask=mask)  # stride 8 (= STRIDE): uncoalesced",
        },
        {
            "file": "kernels/strided.py",
            "kernel": "strided_gather_kernel",
            "rule": "small-grid",
            "source_text": "def strided_gather_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):",
        },
    ]
    path = work / "kernels" / "strided.py"
    path.write_text(
        path.read_text().replace("STRIDE = 8\n", "STRIDE = 8\n# a comment\n# and another\n")
    )
    code, out, err = check("kernels/strided.py", "--baseline", "base.json", cwd=work)
    assert (code, out) == (0, "") and "2 accepted by the baseline" in err
    # a new finding is not accepted: the baseline is emptied of that entry
    (work / "empty.json").write_text(json.dumps({"irscope_baseline": 1, "accepted": []}))
    code, out, _ = check("kernels/strided.py", "--baseline", "empty.json", cwd=work)
    assert code == 1 and out.startswith("kernels/strided.py:28:")  # the line moved by 2
    assert "warning[uncoalesced]" in out.splitlines()[0]


def test_baseline_counts_each_entry_once():
    f = {"file": "k.py", "kernel": "k", "rule": "spill", "source_text": "x = 1", "message": "m"}
    kept, matched = apply_baseline([f, dict(f)], {("k.py", "k", "spill", "x = 1"): 1})
    assert matched == 1 and len(kept) == 1


def test_bad_input_is_one_line_and_exit_2(repo, tmp_path):
    for args, said in (
        (["nowhere.py"], "nowhere.py: no such file or directory"),
        (["kernels/add.py", "--jobs", "0"], "--jobs 0: give 1 or more"),
        (["kernels/add.py", "--baseline", "missing.json"], "--baseline missing.json"),
        (["kernels/notes.txt"], None),
    ):
        if args[0] == "kernels/notes.txt":
            (repo / "kernels" / "notes.txt").write_text("x")
            said = "kernels/notes.txt is not a Python file"
        code, out, err = check(*args, cwd=repo)
        assert (
            code == 2
            and out == ""
            and err.count("\n") == 1
            and said in err
            and "Traceback" not in err
        )
    (tmp_path / "empty").mkdir()
    code, out, err = check("empty", cwd=tmp_path)
    assert (
        code == 2
        and "empty: no .py file under it defines a Triton kernel" in err
        and err.count("\n") == 1
    )
    (tmp_path / "bad.json").write_text("{")
    code, _, err = check(
        str(repo / "kernels" / "add.py"), "--baseline", str(tmp_path / "bad.json"), cwd=tmp_path
    )
    assert code == 2 and "not a baseline irscope wrote" in err


def test_a_file_that_cannot_open_is_a_finding_and_the_others_still_run(repo, tmp_path):
    shutil.copy(os.path.join(FIXTURES, "raises.py"), tmp_path / "raises.py")
    shutil.copy(repo / "kernels" / "strided.py", tmp_path / "strided.py")
    code, out, err = check("raises.py", "strided.py", "--format", "json", cwd=tmp_path)
    doc = json.loads(out)
    assert code == 1
    failed = [f for f in doc["findings"] if f["rule"] == "open-failed"]
    assert (
        len(failed) == 1 and failed[0]["file"] == "raises.py" and failed[0]["severity"] == "error"
    )
    assert failed[0]["message"] and "Traceback" not in failed[0]["message"]
    assert any(f["rule"] == "uncoalesced" and f["file"] == "strided.py" for f in doc["findings"])
    assert doc["findings"][0]["rule"] == "open-failed"  # errors rank first


def test_open_failed_takes_the_line_of_the_users_frame():
    err = (
        "irscope: error: model.py raised ValueError: bad shape\n"
        '  your code | File "/x/model.py", line 12, in <module>\n'
        '  your code | File "/x/model.py", line 30, in build\n'
    )
    f = open_failed("model.py", err, 1)
    assert f["message"] == "model.py raised ValueError: bad shape" and f["source_line"] == 30


def test_directories_take_only_files_that_define_kernels(tmp_path):
    (tmp_path / "a.py").write_text("import triton\n@triton.jit\ndef k(x):\n    pass\n")
    (tmp_path / "b.py").write_text("import triton\nprint(1)\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.py").write_text("@triton.jit\ndef k(x):\n    pass\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.py").write_text("from triton import jit\n@jit\ndef k(x):\n    pass\n")
    assert collect_files([str(tmp_path)]) == [
        str(tmp_path / "a.py"),
        str(tmp_path / "sub" / "d.py"),
    ]


def test_exclude_leaves_out_folders_and_files_by_name_or_path(tmp_path):
    """liger-kernel's package has kernels for Huawei's Triton under ops/backends/_ascend: `--exclude _ascend`
    leaves that folder out wherever it is; a pattern with a slash matches the path under the folder given."""
    kernel = "import triton\n@triton.jit\ndef k(x):\n    pass\n"
    for rel in ("ops/a.py", "ops/backends/_ascend/b.py", "ops/backends/c.py", "tests/t.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(kernel)
    assert collect_files([str(tmp_path)], ["_ascend", "tests/*"]) == [
        str(tmp_path / "ops" / "a.py"),
        str(tmp_path / "ops" / "backends" / "c.py"),
    ]
    for above in ("ops/backends/*", "ops/backends"):
        assert collect_files([str(tmp_path)], [above]) == [
            str(tmp_path / "ops" / "a.py"),
            str(tmp_path / "tests" / "t.py"),
        ]
    with pytest.raises(IrscopeError, match="that --exclude ops tests leaves in defines"):
        collect_files([str(tmp_path)], ["ops", "tests"])
    # through the command line: one clear line, exit 2
    code, out, err = check(str(tmp_path), "--exclude", "ops", "--exclude", "tests", cwd=tmp_path)
    assert code == 2 and "no .py file under it that --exclude ops tests leaves in" in err


FINDING = {
    "rule": "uncoalesced",
    "severity": "warning",
    "kernel": "k",
    "file": "kernels/k.py",
    "source_line": 26,
    "column": 9,
    "source_text": "x = tl.load(p)",
    "weight": 0.8,
    "cost": {
        "value": 28.0,
        "unit": "excess_sectors_per_request",
        "text": "32.0 sectors, ideal 4.0",
    },
    "message": "load of x_ptr: a strided gather, 100%, a:b\nnext",
    "fix": "read contiguous elements",
    "what_if": None,
}


def test_github_annotations_escape_what_the_runner_would_parse():
    line = github_line(FINDING)
    assert line.startswith("::warning file=kernels/k.py,line=26,col=9,title=irscope uncoalesced::")
    assert "100%25" in line and "%0Anext" in line and "\n" not in line
    odd = dict(FINDING, file="a,b:c.py", severity="info")
    assert github_line(odd).startswith("::notice file=a%2Cb%3Ac.py,")


def sarif_structure_ok(doc):
    """What the 2.1.0 schema requires of the parts irscope writes, checked without the validator."""
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "irscope"
    ids = [r["id"] for r in driver["rules"]]
    for result in run["results"]:
        assert result["level"] in ("none", "note", "warning", "error")
        assert ids[result["ruleIndex"]] == result["ruleId"] and result["message"]["text"]
        for loc in result["locations"]:
            region = loc["physicalLocation"].get("region", {})
            assert region.get("startLine", 1) >= 1 and region.get("startColumn", 1) >= 1


def test_sarif_of_the_kernels_validates_against_the_2_1_0_schema(kernels_json):
    _, doc, _ = kernels_json
    note = "kernels/lib.py: note: not launched in this run, not checked: k (line 3)"
    sarif = sarif_document(
        doc["findings"] + [open_failed("broken.py", "irscope: error: it broke", 1)], [note]
    )
    sarif_structure_ok(sarif)
    # 6 findings about the kernels and 3 small grids, merged over launches, and the open-failed
    assert len(sarif["runs"][0]["results"]) == 10
    (invocation,) = sarif["runs"][0]["invocations"]
    assert invocation["toolExecutionNotifications"] == [
        {"level": "note", "message": {"text": note}}
    ]
    jsonschema = pytest.importorskip("jsonschema")
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(sarif)
    broken = json.loads(json.dumps(sarif))
    broken["runs"][0]["results"][0]["level"] = "severe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(broken)


def test_sarif_format_through_the_command_line(repo):
    code, out, _ = check("kernels/strided.py", "--format", "sarif", cwd=repo)
    doc = json.loads(out)
    sarif_structure_ok(doc)
    result, small = doc["runs"][0]["results"]
    assert (small["ruleId"], small["level"]) == ("small-grid", "note")
    assert result["ruleId"] == "uncoalesced" and result["level"] == "warning"
    loc = result["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "kernels/strided.py", "uriBaseId": "%SRCROOT%"}
    # in the tl.load call
    assert loc["region"]["startLine"] == 26 and 9 <= loc["region"]["startColumn"] <= 44


def test_real_files_from_outside_the_repository(tmp_path):
    """A ROCm snippet whose copy loop Triton cannot prove contiguous (irscope cannot name why either, and
    says so), and Triton's grouped-GEMM tutorial, whose epilogue shuffle sits in its tile loop, outside the K
    loop: information, not a warning."""
    corpus = os.path.join(ROOT, "tests", "corpus")
    copy = os.path.join(corpus, "snippets", "rocm-triton", "hbm-bw-test.py")
    gemm = os.path.join(corpus, "tutorials", "triton-main-2026-08-20", "08-grouped-gemm.py")
    # each file checked on its own, once: the exit code is each file's (several files with --jobs: above)
    code, out, _ = check(copy, "--format", "json", cwd=tmp_path)
    doc = json.loads(out)
    assert code == 1 and len(doc["files"]) == 1 and doc["files"][0]["opened"]
    (narrow,) = [f for f in doc["findings"] if f["file"] == copy and f["rule"] == "not-vectorized"]
    assert (
        narrow["source_line"] == 40
        and narrow["source_text"] == "in_vals = tl.load(input_ptr + offsets)"
    )
    assert "4 B per thread where the layout allows 16 B" in narrow["message"]
    assert "irscope sees no missing alignment or divisibility fact" in narrow["message"]
    assert "tl.multiple_of(offsets, 16)" in narrow["fix"] and narrow["what_if"] is None
    code, out, _ = check(gemm, "--format", "json", cwd=tmp_path)
    doc = json.loads(out)
    assert code == 0  # --fail-on warning: information does not fail
    grouped = [f for f in doc["findings"] if f["file"] == gemm]
    assert grouped and all(f["severity"] == "info" for f in grouped)
    (shuffle,) = [f for f in grouped if f["rule"] == "layout-shuffle"]
    assert (
        "inside a loop, but outside its innermost loop or under a condition" in shuffle["message"]
    )
    assert shuffle["fix"].startswith("usually none")
