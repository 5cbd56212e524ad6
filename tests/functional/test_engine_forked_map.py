"""forked_map (irscope/engine/forked_map.py): each item in a forked copy, the same list as computing them in
order, whatever a copy does; and `report`'s document the same either way."""

import os
import time

import pytest
from conftest import fixture_path, kernel_path

from irscope.engine import forked_map as fm
from irscope.engine import report as report_module
from irscope.engine.session import open_file


@pytest.fixture(autouse=True)
def _every_core(monkeypatch):
    """conftest.py keeps the suite's reports in one process (IRSCOPE_JOBS=1); here copies are the point."""
    monkeypatch.delenv("IRSCOPE_JOBS", raising=False)
    if fm.available_jobs() < 2 or not hasattr(os, "fork"):
        pytest.skip("needs two cores and fork()")


def _square_with_pid(n):
    return (n * n, os.getpid(), fm.throwaway())


def test_each_item_is_computed_in_a_copy_and_comes_back_as_the_same_value():
    out = fm.forked_map(_square_with_pid, list(range(7)))
    assert [value for value, _, _ in out] == [n * n for n in range(7)]
    assert all(type(x) is tuple for x in out)  # pickled back, not made JSON
    assert {pid for _, pid, _ in out}.isdisjoint({os.getpid()})
    assert len({pid for _, pid, _ in out}) == 7  # a copy of its own for each item
    assert all(in_copy for _, _, in_copy in out)
    assert not fm.throwaway()


def test_with_one_job_nothing_is_forked(monkeypatch):
    monkeypatch.setenv("IRSCOPE_JOBS", "1")
    out = fm.forked_map(_square_with_pid, [1, 2, 3])
    assert out == [(1, os.getpid(), False), (4, os.getpid(), False), (9, os.getpid(), False)]


def _dies_in_a_copy(n):
    if fm.throwaway() and n % 2:
        os._exit(3)
    return n, os.getpid()


def test_a_copy_that_dies_leaves_its_item_to_the_parent():
    out = fm.forked_map(_dies_in_a_copy, [0, 1, 2, 3])
    assert [n for n, _ in out] == [0, 1, 2, 3]
    assert out[1][1] == out[3][1] == os.getpid()  # computed here
    assert out[0][1] != os.getpid() and out[2][1] != os.getpid()


def _stuck_in_a_copy(item):
    n, pid_file = item
    if fm.throwaway() and n == 1:
        pid_file.write_text(str(os.getpid()))
        time.sleep(120)  # no CPU used: a lock nobody will release, as far as the parent can tell
    return n


def test_a_stuck_copy_is_ended_and_its_item_computed_here(monkeypatch, tmp_path):
    monkeypatch.setattr(fm, "STALL_LIMIT_S", 0.3)
    pid_file = tmp_path / "stuck.pid"
    start = time.monotonic()
    assert fm.forked_map(_stuck_in_a_copy, [(n, pid_file) for n in range(3)]) == [0, 1, 2]
    assert time.monotonic() - start < 20
    with pytest.raises(ProcessLookupError):  # killed and collected: no such process any more
        os.kill(int(pid_file.read_text()), 0)


def _fails(n):
    if n == 2:
        raise ValueError(f"item {n}")
    return n


def test_an_exception_reaches_the_caller_as_from_a_loop():
    with pytest.raises(ValueError, match="item 2"):
        fm.forked_map(_fails, [0, 1, 2, 3])


def _without_seconds(value):
    if isinstance(value, dict):
        return {k: _without_seconds(v) for k, v in value.items() if k not in ("seconds", "pid")}
    if isinstance(value, list):
        return [_without_seconds(v) for v in value]
    return value


def test_the_report_is_the_same_whether_copies_compute_its_entries_or_not(monkeypatch):
    """bank_conflict.py's two compilations: each entry computed in a copy (they carry the copy's process id
    here), then both in this process; the documents are equal."""
    _same_either_way(monkeypatch, kernel_path("bank_conflict.py"))


def test_each_recorded_program_in_a_copy_sees_the_memory_the_run_left(monkeypatch):
    """A program that reads a count every program increments, and picks its stride by the count's parity:
    each program recorded in a copy must see the count as the run left it, as in this process (a copy that
    recorded on the tensors themselves saw the count its own first recording wrote, and another stride)."""
    _same_either_way(monkeypatch, fixture_path("reads_what_others_write.py"))


def _same_either_way(monkeypatch, path: str) -> None:
    """The file's two compilations reported with each entry in a copy, then in this process: the same
    document (less its seconds), each entry computed where it should have been (its process id, added here)."""
    entry = report_module.compilation_entry
    monkeypatch.setattr(
        report_module,
        "compilation_entry",
        lambda ws, comp: {**entry(ws, comp), "pid": os.getpid()},
    )
    ws = open_file(path, target="sm_90")
    comps = ws.compile_all()
    assert len(comps) == 2
    forked = report_module.build_report(ws, comps)
    assert all(k["pid"] != os.getpid() for k in forked["kernels"])

    monkeypatch.setenv("IRSCOPE_JOBS", "1")
    alone = report_module.build_report(ws, comps)
    assert all(k["pid"] == os.getpid() for k in alone["kernels"])
    assert _without_seconds(forked) == _without_seconds(alone)
    assert all(k["coalescing"] for k in forked["kernels"])  # something to compare


def test_one_copy_at_a_time_still_forks_each_item():
    """at_once=1: nothing side by side, but the parent keeps none of the items' memory."""
    out = fm.forked_map(_square_with_pid, [1, 2, 3], at_once=1)
    assert [value for value, _, _ in out] == [1, 4, 9]
    assert len({pid for _, pid, _ in out} | {os.getpid()}) == 4
