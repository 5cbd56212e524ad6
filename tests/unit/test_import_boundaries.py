"""The core must never pull in the terminal UI, and the UI's modules never pull in torch or Triton."""

import subprocess
import sys

import pytest
from conftest import ROOT


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)


def test_nothing_outside_the_tui_imports_textual():
    code = (
        "import sys, pkgutil, importlib\n"
        "for name in ('base', 'ir', 'analysis', 'findings', 'engine', 'commands', 'worker', 'cli'):\n"
        "    package = importlib.import_module('irscope.' + name)\n"
        "    for m in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
        "        if not m.name.endswith('__main__'):\n"
        "            importlib.import_module(m.name)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')]\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = _run(code)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_app_module_loads_without_torch_or_triton():
    """The TUI's process never imports torch or Triton (its worker process does): a module-level import
    of the engine anywhere in the UI would put them back (test_tui_worker checks a whole session)."""
    pytest.importorskip("textual")
    code = (
        "import sys, irscope.tui.app, irscope.tui.panels\n"
        "bad = [m for m in ('torch', 'triton') if m in sys.modules]\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = _run(code)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_app_paints_before_it_needs_numpy_or_the_analyses():
    """What the first paint waits for is the app's imports: NumPy, the coalescing analysis and the
    explainer's tables (over 100 ms together) come in when a panel first asks for them."""
    pytest.importorskip("textual")
    code = (
        "import sys, irscope.tui.app, irscope.tui.panels\n"
        "bad = [m for m in ('numpy', 'irscope.analysis.coalescing.sectors', 'irscope.ir.explain')\n"
        "       if m in sys.modules]\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = _run(code)
    assert done.returncode == 0, done.stdout + done.stderr
