"""Only irscope/engine/triton_compat reaches into Triton: a Triton release that moves something changes that
package alone. Everywhere else, irscope may import `triton` and `triton.language` (the public API kernels use)
and nothing below them; the front ends import neither (tests/tui/test_on_worker_process.py,
test_import_boundaries.py)."""

import ast
import glob
import os

from conftest import ROOT

PUBLIC = {"triton", "triton.language"}


def _triton_imports(path: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "triton"]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] == "triton"
        ):
            found.append(node.module)
    return found


def test_only_triton_compat_imports_tritons_internals():
    package = os.path.join(ROOT, "irscope")
    inside = os.path.join(package, "engine", "triton_compat", "")
    outside = {}
    for path in glob.glob(os.path.join(package, "**", "*.py"), recursive=True):
        if path.startswith(inside):
            continue
        internal = [m for m in _triton_imports(path) if m not in PUBLIC]
        if internal:
            outside[os.path.relpath(path, ROOT)] = internal
    assert not outside, outside


def test_the_check_sees_an_internal_import(tmp_path):
    # the scan must be able to fail: a module importing the driver registry is caught
    probe = tmp_path / "probe.py"
    probe.write_text("from triton.runtime.driver import driver\nimport triton.language as tl\n")
    assert [m for m in _triton_imports(str(probe)) if m not in PUBLIC] == ["triton.runtime.driver"]


def test_triton_compat_is_split_by_concern():
    sizes = {
        os.path.basename(p): sum(1 for _ in open(p))
        for p in glob.glob(os.path.join(ROOT, "irscope", "engine", "triton_compat", "*.py"))
    }
    assert {
        "driver.py",
        "jit.py",
        "compiler.py",
        "capture.py",
        "interpreter.py",
        "layouts.py",
    } <= set(sizes)
