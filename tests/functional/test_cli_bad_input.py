"""Every bad input ends in one clear stderr line, a non-zero exit, and no traceback."""

import json
import os

import pytest
from conftest import ROOT, fixture_path, kernel_path, run_irscope

import irscope


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, "expected an error message"
    assert "Traceback" not in err
    assert lines[0].startswith("irscope: error: ")
    return lines[0]


def test_missing_file(cli):
    code, out, err = cli("dump", "kernels/nope.py")
    assert code != 0 and out == ""
    assert "no such file" in one_line(err)


def test_directory(cli):
    code, _, err = cli("report", kernel_path(""))
    assert code != 0
    assert "is a directory" in one_line(err)


def test_not_python(cli):
    code, _, err = cli("report", fixture_path("notes.txt"))
    assert code != 0
    assert "not valid Python" in one_line(err)


def test_syntax_error(cli):
    code, _, err = cli("report", fixture_path("syntax_error.py"))
    assert code != 0
    line = one_line(err)
    assert "syntax_error.py:1" in line and "syntax error" in line


def test_exception_in_users_file_shows_their_traceback(cli):
    code, _, err = cli("report", fixture_path("raises.py"))
    assert code != 0
    line = one_line(err)
    assert "raised ValueError: the input file is missing" in line
    assert "--no-run" in line
    marked = [line for line in err.splitlines()[1:] if line.strip()]
    assert marked and all(line.startswith("  your code | ") for line in marked)
    assert any('raises.py", line 11, in prepare' in line for line in marked)
    package = os.path.dirname(irscope.__file__)
    assert not any(package in line for line in marked), "irscope's own frames must not show"


def test_no_kernels(cli):
    code, _, err = cli("report", fixture_path("no_kernels.py"))
    assert code != 0
    assert "defines no @triton.jit kernel" in one_line(err)


def test_kernel_not_found_lists_the_kernels(cli):
    code, _, err = cli("dump", fixture_path("specialize.py"), "--kernel", "nope")
    assert code != 0
    line = one_line(err)
    assert (
        "no kernel named 'nope'" in line and "strided_copy" in line and "unspecialized_copy" in line
    )


def test_unknown_stage(cli):
    code, _, err = cli("dump", fixture_path("tutorial_add.py"), "--stage", "hsail")
    assert code != 0
    assert "unknown stage 'hsail'" in one_line(err) and "ptx" in err


def test_unknown_target(cli):
    code, _, err = cli("dump", fixture_path("tutorial_add.py"), "--target", "sm_75")
    assert code != 0
    assert "unknown target 'sm_75'" in one_line(err) and "gfx942" in err


def test_stage_the_target_lacks(cli):
    code, _, err = cli(
        "dump", fixture_path("tutorial_add.py"), "--target", "gfx942", "--stage", "sass"
    )
    assert code != 0
    assert "stage 'sass' does not exist for target gfx942" in one_line(err)


def test_kernel_that_fails_to_compile(cli):
    code, out, err = cli("dump", fixture_path("compile_error.py"), "--stage", "ttir")
    assert code != 0 and out == ""
    line = one_line(err)
    assert "compile_error.py:9" in line and "power of 2" in line and "tl.arange(0, 1000)" in line


def test_compile_error_is_a_result_in_the_report(cli):
    import json

    code, out, err = cli("report", fixture_path("compile_error.py"), "--json")
    assert code != 0
    entry = json.loads(out)["kernels"][0]
    assert entry["error"]["source_line"] == 9
    assert entry["error"]["source_text"] == "offs = tl.arange(0, 1000)"
    assert "power of 2" in entry["error"]["message"]


def test_missing_constexpr_with_no_launch(cli):
    code, _, err = cli("report", fixture_path("no_launch.py"), "--kernel", "scale_kernel")
    assert code != 0
    line = one_line(err)
    assert "BLOCK" in line and "-D BLOCK=VALUE" in line


def test_file_that_launches_nothing(cli):
    code, _, err = cli("report", fixture_path("no_launch.py"))
    assert code != 0
    assert "launches no kernel" in one_line(err) and "scale_kernel" in err


def test_bad_define_syntax(cli):
    code, _, err = cli("report", fixture_path("no_launch.py"), "-D", "BLOCK")
    assert code != 0
    assert "NAME=VALUE" in one_line(err)


@pytest.mark.parametrize(
    "define, says",
    [
        ("FOO=1", "FOO was specified but unrecognised"),
        ("num_warps=3", "num_warps must be a power of 2"),
    ],
)
def test_define_the_jit_rejects(cli, define, says):
    """A -D that names no parameter or launch option, or a launch option Triton refuses: the JIT's own
    check, in one line (it used to end as an internal error)."""
    code, _, err = cli("dump", kernel_path("add.py"), "-D", define)
    assert code == 2
    line = one_line(err)
    assert says in line and "-D/--arg" in line


def test_a_launch_the_jit_rejects_points_at_whoever_chose_the_values(cli):
    """No -D/--arg given: the file's own launch is at fault, not values the user never passed."""
    code, _, err = cli("dump", fixture_path("bad_launch.py"), "--stage", "ttir")
    assert code == 2
    line = one_line(err)
    assert "num_warps must be a power of 2" in line and "bad_launch.py's own launch" in line
    assert "no -D/--arg was given" in line and "values you passed" not in line
    code, _, err = cli("dump", kernel_path("add.py"), "-D", "num_warps=3")
    line = one_line(err)
    assert "values you passed (-D num_warps=3)" in line and "own launch" not in line


def test_arg_that_names_no_parameter(cli):
    code, _, err = cli(
        "report", fixture_path("no_launch.py"), "-D", "BLOCK=64", "--arg", "x_pr=*fp16"
    )
    assert code == 2
    line = one_line(err)
    assert "--arg x_pr" in line and "x_ptr" in line


def test_real_binary_prints_no_traceback():
    done = run_irscope("dump", "does/not/exist.py", cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "irscope: error: does/not/exist.py: no such file; give the path of a Python file with @triton.jit kernels"
    ]


def test_a_script_that_needs_arguments_gets_them_after_a_double_dash(cli, front):
    """argparse's own error is the one line, with the fix; `-- ARGS` reaches the file as sys.argv[1:], through
    the real front end and its worker, in every command that opens a file, `check` included."""
    path = fixture_path("needs_mode.py")
    done = run_irscope("report", path, "--target", "sm_90")
    assert done.returncode == 3, done.stderr
    line = one_line(done.stderr)
    assert (
        "needs_mode.py: error: the following arguments are required: --mode" in line
        and "-- ARGS" in line
    )
    assert (
        "usage: needs_mode.py [-h] --mode {x,y}" in done.stderr and "SystemExit" not in done.stderr
    )
    done = run_irscope(
        "report", path, "--json", "--target", "sm_90", "--", "--mode", "y", "--size", "600"
    )
    assert done.returncode == 0, done.stderr
    (kernel,) = json.loads(done.stdout)["kernels"]
    assert kernel["constexprs"] == {"BLOCK": 256} and kernel["grid"] == [3, 1, 1]
    code, out, err = cli("dump", path, "--stage", "source", "--", "--mode", "x")
    assert code == 0 and "def scale_kernel" in out, err
    code, out, err = front(
        "check", path, "--format", "json", "--target", "sm_90", "--", "--mode", "x"
    )
    assert code == 0 and "open-failed" not in out, out + err
    code, out, err = front("check", path, "--format", "json", "--target", "sm_90")
    assert "open-failed" in out and "required: --mode" in out


def test_a_define_gives_what_the_files_launch_left_out(cli):
    """The JIT's rejection of a launch without SCALE says to give it with -D; doing so compiles (it ended in
    an internal error: the launch's arguments were bound in full before the -D was applied)."""
    code, _, err = cli("report", fixture_path("launch_missing_arg.py"))
    line = one_line(err)
    assert (
        code == 2
        and "missing 1 required positional argument: 'SCALE'" in line
        and "-D NAME=VALUE" in line
    )
    code, out, err = cli("report", fixture_path("launch_missing_arg.py"), "-D", "SCALE=3")
    assert code == 0 and "BLOCK=64, SCALE=3" in out, err


BREAKS_IRSCOPE = """
import torch
import triton
import triton.language as tl

import irscope.commands.run


def build_report(*args, **kwargs):
    raise RuntimeError("a fault this test put into irscope")


irscope.commands.run.build_report = build_report  # irscope's own code fails in the worker, as a bug would


@triton.jit
def double(x_ptr):
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)


if __name__ == "__main__":
    double[(1,)](torch.ones(16, device="cuda"))
"""


def test_irscope_debug_prints_an_internal_errors_traceback_through_the_worker(tmp_path):
    """An error in irscope itself is one line and exit 70, which says to set IRSCOPE_DEBUG=1 for a traceback;
    set, the traceback comes back from the worker process that ran the command (it was lost there)."""
    path = tmp_path / "breaks_irscope.py"
    path.write_text(BREAKS_IRSCOPE)
    plain = run_irscope("report", path)
    assert plain.returncode == 70 and "Traceback" not in plain.stderr
    assert (
        "irscope: internal error: RuntimeError: a fault this test put into irscope (set IRSCOPE_DEBUG=1"
        in plain.stderr
    )
    debug = run_irscope("report", path, env={"IRSCOPE_DEBUG": "1"})
    assert debug.returncode == 70 and debug.stderr.startswith(
        "Traceback (most recent call last):"
    ), debug.stderr
    assert ", in _report\n" in debug.stderr and debug.stderr.rstrip().endswith(
        "RuntimeError: a fault this test put into irscope"
    )


def test_nan_and_infinity_in_a_kernel_bring_no_numpy_warning():
    """The interpreter computes with NumPy, which warns of an invalid value or a division by zero on stderr;
    a GPU does not, and the warning's source line would be mixed into irscope's own output."""
    done = run_irscope("report", fixture_path("nan_results.py"), env={"IRSCOPE_WARM": "0"})
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr and "encountered" not in done.stderr, done.stderr
    assert "ratio_kernel" in done.stdout
