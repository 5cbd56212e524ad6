"""Out-of-bounds accesses of a launch the capture runs in the interpreter (engine/triton_compat/bounds.py):
kept off the process's memory, said as an `out-of-bounds` error at the kernel's line, and never claimed for an
address that lies in a tensor the launch reached through a table of pointers."""

import json

from conftest import fixture_path, run_irscope


def _report(name: str) -> dict:
    proc = run_irscope("report", fixture_path(name), "--json", env={"CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0, proc.stderr
    (kernel,) = json.loads(proc.stdout)["kernels"]
    return kernel


def test_a_load_one_past_the_end_is_an_error_at_its_line():
    kernel = _report("out_of_bounds.py")
    stray = kernel["out_of_bounds"]
    assert (stray["kind"], stray["line"], stray["program"]) == ("load", 12, [1, 0, 0])
    assert (stray["lanes"], stray["of_lanes"], stray["accesses"]) == (1, 128, 1)
    assert stray["where"] == "at byte 1024 of `x_ptr`, which holds 1024 bytes"
    first = kernel["findings"][0]
    assert (first["rule"], first["severity"], first["source_line"]) == (
        "out-of-bounds",
        "error",
        12,
    )
    assert first["cost"]["text"] == "1 of 128 lanes"


def test_stores_far_past_the_end_leave_the_run_whole():
    # 948 lanes load past `x` and store past `out`: unguarded, the store writes into the heap of the worker
    kernel = _report("stores_past_end.py")
    assert kernel["interpreter_error"] is None  # the file's own check of the copied lanes passed
    stray = kernel["out_of_bounds"]
    assert (stray["kind"], stray["home"], stray["outside_home"], stray["accesses"]) == (
        "load",
        "x_ptr",
        948,
        2,
    )
    # the lanes flagged: those of the 948 that no tensor holds (past `x` the heap may hold `out`)
    assert 1 <= stray["lanes"] <= 948
    assert [f["rule"] for f in kernel["findings"]].count("out-of-bounds") == 1


def test_addresses_loaded_from_a_table_are_not_out_of_bounds():
    kernel = _report("pointer_table.py")
    assert kernel["out_of_bounds"] is None
    assert kernel["interpreter_error"] is None  # the rows were read: the file's assert passed
    assert "out-of-bounds" not in [f["rule"] for f in kernel["findings"]]


def test_check_fails_on_it():
    proc = run_irscope(
        "check", fixture_path("stores_past_end.py"), env={"CUDA_VISIBLE_DEVICES": ""}
    )
    assert proc.returncode == 1
    assert (
        "stores_past_end.py:12:5: error[out-of-bounds] in copy_kernel: program (1, 0, 0)"
        in proc.stdout
    )
