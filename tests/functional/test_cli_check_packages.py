"""A kernel library's repository under irscope: its modules run as modules of their package (relative imports
work), `check` over its package names the kernels nothing launched without an error, and `check -m pytest`
checks the kernels its tests launch, at the kernels' own lines. Real kernels (kernels/add.py, misaligned.py's
add), a real pytest session, the real front end and its workers."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import KERNELS, ROOT

from irscope.base.paths import package_module
from irscope.commands.arguments import build_parser, parse

KERNEL_LINE = 11  # the tl.load of x in mylib/ops/add.py below


def irscope(*args, cwd, timeout=600):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-m", "irscope", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """A library as a repository holds one: a package whose kernel module imports its package's own code
    relatively and launches nothing itself, a benchmark module with `__main__` code, and a pytest file."""
    root = tmp_path_factory.mktemp("library")
    ops = root / "mylib" / "ops"
    ops.mkdir(parents=True)
    (root / "mylib" / "__init__.py").write_text("from .ops.add import add  # noqa: F401\n")
    (ops / "__init__.py").write_text("")
    (root / "mylib" / "sizes.py").write_text("BLOCK = 1024\n")
    (ops / "add.py").write_text(
        "import torch\n"
        "import triton\n"
        "import triton.language as tl\n"
        "from ..sizes import BLOCK\n"
        "\n"
        "@triton.jit\n"
        "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
        "    mask = offs < n\n"
        "    # the loads\n"
        "    x = tl.load(x_ptr + offs, mask=mask)\n"
        "    y = tl.load(y_ptr + offs, mask=mask)\n"
        "    tl.store(out_ptr + offs, x + y, mask=mask)\n"
        "\n"
        "@triton.jit\n"
        "def scale_kernel(x_ptr, n, BLOCK_SIZE: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n"
        "\n"
        "def add(x, y):\n"
        "    out = torch.empty_like(x)\n"
        "    add_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, y, out, x.numel(), BLOCK_SIZE=BLOCK)\n"
        "    return out\n"
    )
    (ops / "bench.py").write_text(
        "import torch\n"
        "from .add import add\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    x = torch.randn(4096, device='cuda')\n"
        "    add(x, x)\n"
    )
    tests = root / "tests"
    tests.mkdir()
    (tests / "test_add.py").write_text(
        "import pytest\n"
        "import torch\n"
        "from mylib import add\n"
        "\n"
        "@pytest.mark.parametrize('n', [4096, 1000, 8192])\n"
        "def test_add(n):\n"
        "    x = torch.randn(n, device='cuda')\n"
        "    torch.testing.assert_close(add(x, x), x + x)\n"
    )
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    return root


def test_a_module_of_a_package_is_found_as_python_m_would_run_it(library):
    assert package_module(str(library / "mylib" / "ops" / "add.py")) == (
        str(library),
        "mylib.ops.add",
    )
    assert package_module(str(library / "tests" / "test_add.py")) is None  # no __init__.py there
    assert package_module(os.path.join(KERNELS, "add.py")) is None


def test_a_package_module_runs_as_its_module_in_report(library):
    """`from .add import add` in a file run as a script fails ("attempted relative import with no known
    parent package"); run as `python -m mylib.ops.bench`, it launches add_kernel."""
    code, out, err = irscope("report", "--json", "mylib/ops/bench.py", cwd=library)
    assert code == 0, err
    (kernel,) = json.loads(out)["kernels"]
    assert kernel["name"] == "add_kernel" and kernel["file"] == "mylib/ops/add.py"
    assert kernel["launch_count"] == 1


def test_check_over_the_package_names_what_nothing_launched_and_errs_not(library):
    code, out, err = irscope("check", "mylib", "--jobs", "2", cwd=library)
    assert code == 0, out + err
    assert "open-failed" not in out and "error" not in out
    assert (
        "mylib/ops/add.py: note: not launched in this run, not checked: add_kernel (line 7), "
        "scale_kernel (line 16)"
    ) in out.splitlines()
    assert "irscope check: 1 file(s), 0 finding(s)" in err  # bench.py defines no kernel
    assert "2 kernel(s) in 1 file(s) not launched in this run" in err


def test_a_module_that_fails_to_import_is_still_an_error(library, tmp_path):
    pkg = tmp_path / "broken"
    shutil.copytree(library / "mylib", pkg / "mylib")
    (pkg / "mylib" / "ops" / "add.py").write_text(
        (library / "mylib" / "ops" / "add.py").read_text().replace("..sizes", "..nowhere")
    )
    code, out, err = irscope("check", "mylib/ops/add.py", "--format", "json", cwd=pkg)
    doc = json.loads(out)
    assert code == 1
    (failed,) = doc["findings"]
    assert failed["rule"] == "open-failed" and "mylib.nowhere" in failed["message"]


def test_check_through_the_tests_finds_at_the_kernels_line_merged_over_launches(library):
    code, out, err = irscope(
        "check", "--format", "json", "-m", "pytest", "-q", "tests/test_add.py", cwd=library
    )
    assert code == 1, err
    doc = json.loads(out)
    (run,) = doc["files"]
    assert run["path"] == "-m pytest -q tests/test_add.py" and run["kernels"] == 2
    # n = 1000 keeps the accesses scalar, in one of the three launches (4096 and 8192 compile the same)
    by_line = {(f["rule"], f["source_line"]): f for f in doc["findings"]}
    # the tests' sizes are under one wave of an H100: said once, at the kernel's line, for every launch
    small = by_line.pop(("small-grid", KERNEL_LINE - 4))
    assert small["launches"]["text"] == "in all 3 launches" and small["severity"] == "info"
    load = by_line[("masked-tail", KERNEL_LINE)]
    assert load["file"] == "mylib/ops/add.py" and load["kernel"] == "add_kernel"
    assert load["launches"] == {
        "found_in": 1,
        "of": 3,
        "compilations": 1,
        "text": "in 1 of 3 launches",
    }
    assert sorted(line for _, line in by_line) == [11, 12, 13]
    assert run["not_launched"] == [{"name": "scale_kernel", "line": 16, "file": "mylib/ops/add.py"}]
    assert "irscope check: 1 run, 4 finding(s): 0 error(s), 3 warning(s), 1 info" in err


def test_check_m_text_says_the_share_and_what_was_not_reached(library):
    code, out, err = irscope("check", "-m", "pytest", "-q", "tests/test_add.py", cwd=library)
    assert code == 1
    assert (
        f"mylib/ops/add.py:{KERNEL_LINE}:9: warning[masked-tail] in add_kernel: in 1 of 3 launches: "
        "load of x_ptr"
    ) in out
    assert (
        "mylib/ops/add.py: note: not launched in this run, not checked: scale_kernel (line 16)"
        in out
    )


def test_processes_the_command_starts_are_said_not_silently_lost(library):
    """pytest-xdist runs the tests in processes of its own, which irscope does not capture."""
    pytest.importorskip("xdist")
    code, out, err = irscope(
        "check", "-m", "pytest", "-q", "-n", "2", "tests/test_add.py", cwd=library
    )
    assert code == 2 and out == ""
    assert "launched no Triton kernel" in err and "Python process(es) of its own" in err
    assert "-p no:xdist" in err and "Traceback" not in err


def test_bad_module_is_one_line():
    code, out, err = irscope("check", "-m", "no_such_module_here", cwd=ROOT)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"irscope: error: -m no_such_module_here: no module named no_such_module_here on this "
        f"Python's path; install it in the environment irscope runs in ({sys.executable}), or run "
        f"irscope from the folder that holds it"
    ]


def test_everything_after_the_module_is_its_own():
    parser = build_parser()
    args = parse(parser, ["check", "--fail-on", "error", "-m", "pytest", "-k", "x", "--", "-q"])
    assert args.fail_on == "error" and args.module_command == ["pytest", "-k", "x", "--", "-q"]
    assert args.paths == []
    args = parse(parser, ["tui", "-m", "pytest", "tests"])
    assert args.file is None and args.module_command == ["pytest", "tests"]
    with pytest.raises(SystemExit):
        parse(parser, ["step", "-m", "pytest"])
    with pytest.raises(SystemExit):
        parse(parser, ["check", "kernels", "-m", "pytest"])


def test_a_namespace_portion_and_a_wrapped_kernel_are_found(tmp_path):
    """FlagGems' layout: `runtime/backend/_vendor/` has no `__init__.py` but its parent has, so Python imports it
    as a namespace portion of the package (its modules' `..utils` works with `python -m`); and kernels wrapped
    in a library's own `KernelInterface` (FlagGems' LibEntry) are kernels all the same."""
    pkg = tmp_path / "lib"
    ops = pkg / "backend" / "vendor" / "ops"
    ops.mkdir(parents=True)
    for folder in (pkg, pkg / "backend", ops):
        (folder / "__init__.py").write_text("")
    (pkg / "backend" / "vendor" / "utils.py").write_text("BLOCK = 256\n")
    (ops / "scale.py").write_text(
        "import triton\n"
        "import triton.language as tl\n"
        "from ..utils import BLOCK\n"
        "\n"
        "class Entry(triton.KernelInterface):\n"
        "    def __init__(self, fn):\n"
        "        self.fn = fn\n"
        "\n"
        "    def run(self, *args, **kwargs):\n"
        "        return self.fn.run(*args, **kwargs)\n"
        "\n"
        "@Entry\n"
        "@triton.jit\n"
        "def scale_kernel(x_ptr, n, BLOCK_SIZE: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n"
    )
    assert package_module(str(ops / "scale.py")) == (str(tmp_path), "lib.backend.vendor.ops.scale")
    code, out, err = irscope("check", "lib", cwd=tmp_path)
    assert code == 0, out + err
    assert (
        "lib/backend/vendor/ops/scale.py: note: not launched in this run, not checked: scale_kernel (line 14)"
    ) in out.splitlines()


def test_kernels_made_inside_functions_are_named_not_an_error(tmp_path):
    """FlagGems' `triton_ops_helper.py` makes its kernel inside a function that returns it: nothing calls it in
    a check over the package, which is no error (it was "defines no @triton.jit kernel")."""
    pkg = tmp_path / "lib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    factory = (
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "def make_exp():\n"
        "    @triton.jit\n"
        "    def exp_kernel(x):\n"
        "        return tl.exp(x)\n"
        "\n"
        "    return exp_kernel\n"
    )
    (pkg / "helper.py").write_text(factory)
    (tmp_path / "plain_helper.py").write_text(factory)
    # a code generator (FlagGems' pointwise_dynamic) writes kernels as text: no kernel of its own, not opened
    (pkg / "codegen.py").write_text(
        'def generate(name):\n    return "@triton.jit\\ndef " + name + "(x):\\n    pass\\n"\n'
    )
    code, out, err = irscope("check", "lib", "plain_helper.py", cwd=tmp_path)
    assert code == 0, out + err
    assert "irscope check: 2 file(s), 0 finding(s)" in err
    lines = out.splitlines()
    assert (
        "lib/helper.py: note: not launched in this run, not checked: exp_kernel (line 6)" in lines
    )
    assert (
        "plain_helper.py: note: not launched in this run, not checked: exp_kernel (line 6)" in lines
    )
    # opened alone, the one line says why there is nothing to show
    code, out, err = irscope("report", "plain_helper.py", cwd=tmp_path)
    assert code == 2 and err.strip() == (
        "irscope: error: plain_helper.py keeps its @triton.jit functions where irscope cannot take them as "
        "kernels (inside functions, or wrapped by a library's decorator: exp_kernel (line 6)), and its run "
        "launched none; open a file that calls them"
    )


def test_a_test_session_that_cannot_start_is_said_as_such(tmp_path):
    """liger-kernel's own tests in a fresh environment: its conftest imports `transformers`, which is not there,
    and pytest ends with status 4 before any test; that is no failing test."""
    (tmp_path / "conftest.py").write_text("import a_package_this_environment_lacks  # noqa: F401\n")
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    code, out, err = irscope("check", "-m", "pytest", "test_nothing.py", cwd=tmp_path)
    assert code == 2
    assert (
        "ended with pytest's exit status 4: pytest could not start: an option it does not know, or a "
        "conftest.py that failed to import"
    ) in err
    assert (
        "`python -m pytest test_nothing.py` shows its output" in err and "tests failed" not in err
    )
