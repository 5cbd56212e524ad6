"""The user's file runs in a worker process: the command line's output stays irscope's own, the terminal
never gets the file's escape sequences, and killing the front end leaves no process and no file behind.

These run the real `python -m irscope` front end (which starts the real worker)."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT, fixture_path, run_irscope

FAST = {"IRSCOPE_CAPTURE_QUIET": "1"}


def test_report_json_stays_json_when_the_file_writes_to_fd_1_and_its_escapes_never_reach_the_terminal():
    done = run_irscope("report", fixture_path("noisy.py"), "--json", env=FAST)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [k["name"] for k in doc["kernels"]] == ["inc_kernel"]
    assert "\x1b" not in done.stdout and "\x1b" not in done.stderr
    assert (
        "raw bytes" not in done.stdout
        and "a shell" not in done.stdout
        and "says hello" not in done.stdout
    )
    # the breakpoint was skipped and the endless loop stopped, each said in one line
    notes = doc["notes"]
    assert any(n.startswith("breakpoint() at line 22 skipped") for n in notes), notes
    assert any("nothing new launched in the last 1 s" in n for n in notes), notes


def test_what_a_kernel_prints_never_reaches_irscopes_own_output(cli):
    """tl.static_print (Triton's front end, at each compile) and tl.device_print (the interpreter, in the run
    and in every later recording) print with Python's print: never into the JSON nor the PTX."""
    path = fixture_path("kernel_prints.py")
    done = run_irscope("report", path, "--json", "--target", "sm_90")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [k["name"] for k in doc["kernels"]] == ["copy_kernel"] and doc["kernels"][0][
        "error"
    ] is None
    assert "STATIC-PRINTED BLOCK" not in done.stdout and "DEVICE-PRINTED x:" not in done.stdout
    done = run_irscope("dump", path, "--stage", "ptx", "--target", "sm_90")
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.startswith("//")
        and "PRINTED" not in done.stdout
        and ".entry copy_kernel" in done.stdout
    )
    # in-process: printed on stderr instead
    code, out, err = cli("report", path, "--json", "--target", "sm_90")
    assert code == 0 and json.loads(out)["kernels"] and "STATIC-PRINTED BLOCK" not in out


def test_a_file_that_leaves_with_os_exit_gets_one_line_and_its_output_shown_safely():
    done = run_irscope("report", fixture_path("exits_hard.py"))
    assert done.returncode == 3
    first = done.stderr.splitlines()[0]
    assert first.startswith("irscope: error: ") and "exit status 3" in first
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "\\x1b]52;c;Y2xpcGJvYXJk\\x07 bye" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_kernel_from_another_module_is_captured_in_a_file_that_sets_triton_interpret():
    done = run_irscope("report", fixture_path("calls_sibling.py"), "--json")
    assert done.returncode == 0, done.stderr
    (kernel,) = json.loads(done.stdout)["kernels"]
    assert (kernel["name"], kernel["module"]) == ("double_kernel", "sibling_kernels")
    assert kernel["file"].endswith("sibling_kernels.py") and kernel["def_line"] == 8
    assert kernel["stages"]["ptx"]["mapped_fraction"] > 0.5
    by_module = run_irscope(
        "dump",
        fixture_path("calls_sibling.py"),
        "--kernel",
        "sibling_kernels:double_kernel",
        "--stage",
        "ttir",
        "--annotate",
    )
    assert by_module.returncode == 0, by_module.stderr
    assert any(
        line.startswith("11 |") and "tt.load" in line for line in by_module.stdout.splitlines()
    )


def test_the_front_end_imports_neither_torch_nor_triton():
    code = (
        "import sys, irscope.cli.main, irscope.worker.client; irscope.cli.main.build_parser(); "
        "print(sorted(m for m in ('torch', 'triton', 'numpy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip() == "[]", done.stderr


def _processes_in(folder: str) -> list[int]:
    """The processes working in `folder`: the front end started there, its worker (a new process, or a fork of
    the shared warm process, which moves to the front end's folder) and the worker's compile children."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd") == folder:
                found.append(int(pid))
        except OSError:  # gone, or not ours to read
            pass
    return found


@pytest.mark.parametrize("warm", ["new process", "shared warm process"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT, signal.SIGHUP])
def test_stopping_the_front_end_leaves_no_process_and_no_temporary_file(tmp_path, signum, warm):
    """However the front end is stopped (SIGKILL too), its worker and the worker's compile children end and the
    worker's temporary folder is removed: a new worker dies with its parent; a fork of the warm process that
    IRSCOPE_WARM_SOCKET names (conftest.py) sees the pipe to its front end close."""
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    where = tmp_path / "here"  # a folder of its own, to find its processes by
    where.mkdir()
    kernel_file = where / "runs_forever.py"
    kernel_file.write_text(open(fixture_path("runs_forever.py")).read())
    env = {
        **os.environ,
        "TMPDIR": str(private_tmp),
        "IRSCOPE_CAPTURE_QUIET": "600",
        "TRITON_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": ROOT,
    }  # a cold cache: a compile child is at work
    if warm == "new process":
        env["IRSCOPE_WARM"] = "0"
    else:
        assert env.get("IRSCOPE_WARM_SOCKET"), "no shared warm process in this test run"
    front = subprocess.Popen(
        [sys.executable, "-m", "irscope", "report", str(kernel_file)],
        cwd=where,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while len(_processes_in(str(where))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # the file is in its endless loop; its launch is compiling in a child
    assert len(_processes_in(str(where))) >= 2, "the worker never started"
    front.send_signal(signum)
    front.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (_processes_in(str(where)) or os.listdir(private_tmp)):
        time.sleep(0.1)
    assert _processes_in(str(where)) == []
    assert os.listdir(private_tmp) == []


def _timeless(doc):
    """A report's JSON without the seconds its analyses took."""
    if isinstance(doc, dict):
        return {k: _timeless(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [_timeless(v) for v in doc]
    return doc


def test_a_command_gets_the_same_answer_from_a_new_process_and_from_the_shared_warm_process(
    tmp_path,
):
    """The shared warm process (IRSCOPE_WARM_SOCKET) forks a worker that runs the file where the front end was
    started, with its environment and arguments: the report is the same as a new process's, byte for byte,
    and a second front end gets its own worker's exit."""
    (tmp_path / "needs_mode.py").write_text(open(fixture_path("needs_mode.py")).read())
    answers = {}
    for warm in ("0", "1"):
        env = {**os.environ, "IRSCOPE_WARM": warm, "PYTHONPATH": ROOT}
        assert warm == "0" or env.get("IRSCOPE_WARM_SOCKET")
        answers[warm] = [
            subprocess.run(
                [sys.executable, "-m", "irscope", "report", "needs_mode.py", *argv],
                capture_output=True,
                text=True,
                cwd=tmp_path,
                env=env,
                timeout=300,
            )
            for argv in (["--json", "--", "--mode", "y", "--size", "600"], [])
        ]
    (new_json, new_error), (forked_json, forked_error) = answers["0"], answers["1"]
    # the same document but for how long the analyses took
    assert _timeless(json.loads(new_json.stdout)) == _timeless(json.loads(forked_json.stdout))
    assert (new_error.returncode, new_error.stdout, new_error.stderr) == (
        forked_error.returncode,
        forked_error.stdout,
        forked_error.stderr,
    )
    with_args, without = answers["1"]
    assert with_args.returncode == 0 and json.loads(with_args.stdout)["kernels"]
    assert without.returncode != 0 and "--mode" in without.stderr


def test_a_launch_from_a_thread_is_captured_and_a_thread_left_running_does_not_hold_irscope():
    started = time.monotonic()
    done = run_irscope("report", fixture_path("threads.py"), "--json")
    assert done.returncode == 0, done.stderr
    assert [k["name"] for k in json.loads(done.stdout)["kernels"]] == ["neg_kernel"]
    assert time.monotonic() - started < 120  # the file's last thread sleeps for an hour


def test_a_multiprocessing_pool_the_file_terminates_leaves_the_worker_alone():
    """The pool's processes are forks of the worker: the SIGTERM that ends each of them ran the worker's
    shutdown there, which removed the worker's temporary folder and killed its whole process group."""
    done = run_irscope("report", fixture_path("multiprocessing_pool.py"), "--json")
    assert done.returncode == 0, done.stderr
    assert [k["name"] for k in json.loads(done.stdout)["kernels"]] == ["neg_kernel"]
    assert "started 2 Python process(es) of its own" in done.stderr


def test_a_breakpoint_in_a_kernel_is_skipped_in_the_interpreter_and_left_out_of_the_compile():
    done = run_irscope("report", fixture_path("kernel_breakpoint.py"), "--json")
    # compiled as the kernel without the call (test_engine_kernel_breakpoint.py)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["notes"] == [
        "line 12: breakpoint() left out of the compile (Triton compiles no debugger call); "
        "the stepper (ctrl+t, irscope step) stops there"
    ]
    (kernel,) = doc["kernels"]
    assert not kernel.get("error")
