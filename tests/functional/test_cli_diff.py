"""`irscope diff`: two real compilations of one kernel, aligned by source line."""

import json
import os
import shutil

from conftest import ROOT, kernel_path


def _diff(cli, path, left, right, *extra):
    code, out, err = cli("diff", path, "--left", left, "--right", right, "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def _access(doc, line, kind):
    return next(a for a in doc["accesses"] if a["source_line"] == line and a["kind"] == kind)


def test_scalar_to_vector_at_the_load_lines_with_the_cause(cli):
    # add.py launched with n = 4096; the left side recompiles that launch with n_elements = 1000
    doc = _diff(cli, kernel_path("add.py"), "n_elements=1000", "launch=0", "--stage", "ptx")
    assert "n_elements specialization [-] -> [D]" in doc["changes"]
    x = _access(doc, 26, "load")
    assert x["changed"] and x["left"]["widths"] == [4] and x["right"]["widths"] == [16]
    assert any("n_elements = 1000" in why for why in x["left"]["why_not_vectorized"])
    assert x["right"]["why_not_vectorized"] == []
    row = next(r for r in doc["lines"] if r["source_line"] == 26)
    assert row["changed"]
    assert all(
        "ld.global.b32" in i["text"]
        for i in row["left"]
        if i["mark"] == "-" and "ld.global" in i["text"]
    )
    assert [i["text"].count("ld.global.v4.b32") for i in row["right"] if i["mark"] == "+"].count(
        1
    ) == 2
    # line numbers point into each side's own stage text
    assert all(i["line"] >= 1 for i in row["left"] + row["right"])


def test_misaligned_launches_same_ptx_different_cause(cli):
    """n = 1000 and x[1:] both compile to 4-byte loads; what differs is the cause (pointer alignment)."""
    doc = _diff(cli, kernel_path("misaligned.py"), "launch=0", "launch=1", "--stage", "ptx")
    assert "x_ptr specialization [D] -> [-]" in doc["changes"]
    x = _access(doc, 25, "load")
    assert x["left"]["widths"] == x["right"]["widths"] == [4]
    assert not any("aligned" in why for why in x["left"]["why_not_vectorized"])
    assert any(
        "x_ptr is not known to be 16-byte aligned" in why
        for why in x["right"]["why_not_vectorized"]
    )
    assert not any(r["changed"] for r in doc["lines"])  # same instructions, register numbers aside


def test_matmul_configs(cli):
    doc = _diff(cli, kernel_path("matmul.py"), "config=0", "config=1", "--stage", "ttgir")
    left, right = doc["left"], doc["right"]
    assert left["constexprs"] != right["constexprs"]
    assert left["shared_bytes"] != right["shared_bytes"]
    assert any(r["changed"] for r in doc["lines"])
    # every changed line's marks agree with the texts: a '-' instruction has no equal on the right
    from irscope.engine.diff.sides import normalized

    for r in doc["lines"]:
        right_keys = {normalized(i["text"]) for i in r["right"]}
        for i in r["left"]:
            if normalized(i["text"]) not in right_keys:
                assert i["mark"] == "-"


def test_targets_and_text_output(cli):
    code, out, err = cli(
        "diff",
        kernel_path("add.py"),
        "--left",
        "target=sm_80",
        "--right",
        "target=sm_90",
        "--stage",
        "sass",
    )
    assert code == 0, err
    assert "target sm_80 -> sm_90" in out
    assert "left: target=sm_80" in out and "sass by source line" in out


def test_an_edit_num_warps(cli):
    doc = _diff(cli, kernel_path("add.py"), "launch=0", "num_warps=8", "--stage", "ttgir")
    assert doc["left"]["num_warps"] == 4 and doc["right"]["num_warps"] == 8
    assert "num_warps 4 -> 8" in doc["changes"]
    header = doc["lines"][-1]  # the layouts are defined once, above the code: no source line
    assert header["source_line"] is None and header["changed"]
    assert any("warpsPerCTA = [4]" in i["text"] for i in header["left"] if i["mark"] == "-")
    assert any("warpsPerCTA = [8]" in i["text"] for i in header["right"] if i["mark"] == "+")


def test_corpus_tutorial(cli, tmp_path):
    """A file from outside the repository: Triton 3.6's vector-add tutorial, its size edited."""
    src = os.path.join(ROOT, "tests", "corpus", "tutorials", "triton-3.6", "01-vector-add.py")
    path = tmp_path / "01-vector-add.py"
    shutil.copy(src, path)
    doc = _diff(cli, str(path), "launch=0", "n_elements=98431", "--stage", "ptx")
    assert doc["kernel"] == "add_kernel"
    loads = [a for a in doc["accesses"] if a["kind"] == "load"]
    assert loads and all(a["left"]["widths"] == [16] and a["right"]["widths"] == [4] for a in loads)


def test_bad_specs_one_line(cli):
    for spec, says in (
        ("launch=7", "choose launch=0 to 0"),
        ("bogus", "is not NAME=VALUE"),
        ("target=sm_1", "sm_1"),
        ("x_ptr=3", "tensor argument"),
        ("target=gfx942", "the default stage, ptx, does not exist for gfx942"),
    ):
        code, out, err = cli("diff", kernel_path("add.py"), "--left", "launch=0", "--right", spec)
        assert code != 0 and says in err and "Traceback" not in err, (spec, err)
        assert len(err.strip().splitlines()) == 1
