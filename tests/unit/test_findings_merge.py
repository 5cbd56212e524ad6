"""One finding per source line (findings/merge.py): merged over a kernel's compilations and launches, ranked
by the worst, and still accepted by a baseline. The findings here are shaped as a worker's report answers
them (Finding.to_json, with what check's front end adds); the end-to-end check on real compilations is in
tests/functional/test_cli_check.py."""

from irscope.cli.check import apply_baseline, read_baseline, write_baseline
from irscope.cli.check_output import headline
from irscope.findings.merge import merged


def finding(rule="not-vectorized", line=25, severity="warning", weight=0.75, column=9, **extra):
    f = {
        "rule": rule,
        "severity": severity,
        "kernel": "add_kernel",
        "file": "k/add.py",
        "source_line": line,
        "column": column,
        "source_text": f"line {line} text",
        "cost": {"value": 4, "unit": "vector_bytes_lost", "text": "4 of 16 B per access"},
        "weight": weight,
        "message": f"load of x_ptr, weight {weight}",
        "fix": "align it",
        "what_if": None,
        "kernel_file": "k/add.py",
        "launches": 1,
        "compilation": ("k/add.py", 0),
    }
    f.update(extra)
    return f


def test_one_finding_per_line_and_rule_is_the_worst_with_its_share_of_launches():
    found = merged(
        [
            finding(weight=0.5, launches=2, compilation=("k/add.py", 0)),
            finding(weight=0.75, launches=1, compilation=("k/add.py", 1)),
        ],
        {("k/add.py", "add_kernel"): 5},
    )
    assert len(found) == 1
    (f,) = found
    assert f["weight"] == 0.75 and f["message"] == "load of x_ptr, weight 0.75"
    assert f["launches"] == {
        "found_in": 3,
        "of": 5,
        "compilations": 2,
        "text": "in 3 of 5 launches",
    }
    assert "compilation" not in f and "kernel_file" not in f
    assert headline(f).startswith(
        "warning[not-vectorized] in add_kernel: in 3 of 5 launches: load of x_ptr"
    )


def test_two_columns_of_one_compilation_count_its_launches_once():
    (f,) = merged(
        [finding(column=9, launches=4), finding(column=30, launches=4)],
        {("k/add.py", "add_kernel"): 4},
    )
    assert f["launches"]["found_in"] == 4 and f["launches"]["text"] == "in all 4 launches"


def test_a_kernel_launched_once_says_no_share():
    (f,) = merged([finding()], {("k/add.py", "add_kernel"): 1})
    assert f["launches"]["text"] == "" and headline(f).startswith(
        "warning[not-vectorized] in add_kernel: load of x_ptr"
    )


def test_other_rules_lines_and_kernels_stay_apart():
    found = merged(
        [
            finding(),
            finding(rule="masked-tail"),
            finding(line=26),
            finding(kernel="other_kernel", kernel_file="k/other.py"),
        ],
        {("k/add.py", "add_kernel"): 1, ("k/other.py", "other_kernel"): 1},
    )
    keys = sorted((f["rule"], f["source_line"], f["kernel"]) for f in found)
    assert keys == [
        ("masked-tail", 25, "add_kernel"),
        ("not-vectorized", 25, "add_kernel"),
        ("not-vectorized", 25, "other_kernel"),
        ("not-vectorized", 26, "add_kernel"),
    ]


def test_ranked_by_the_worst_of_each_group():
    found = merged(
        [
            finding(line=40, severity="info", weight=0.9),
            finding(line=30, severity="info", weight=0.1, compilation=("k/add.py", 0)),
            finding(line=30, severity="warning", weight=0.2, compilation=("k/add.py", 1)),
        ],
        {("k/add.py", "add_kernel"): 2},
    )
    assert [(f["source_line"], f["severity"]) for f in found] == [(30, "warning"), (40, "info")]


def test_findings_with_no_line_are_not_merged_with_each_other():
    failed = dict(finding(rule="open-failed", severity="error", weight=1.0), source_line=None)
    found = merged([dict(failed, message="a.py raised"), dict(failed, message="b.py raised")], {})
    assert len(found) == 2


def test_a_baseline_of_merged_findings_accepts_the_next_run_whatever_its_launch_counts(tmp_path):
    first = merged(
        [finding(compilation=("k/add.py", 0)), finding(compilation=("k/add.py", 1))],
        {("k/add.py", "add_kernel"): 2},
    )
    path = tmp_path / "baseline.json"
    write_baseline(str(path), first)
    again = merged(
        [finding(weight=0.5, launches=7), finding(line=26)], {("k/add.py", "add_kernel"): 9}
    )
    kept, matched = apply_baseline(again, read_baseline(str(path)))
    assert matched == 1 and [f["source_line"] for f in kept] == [26]
