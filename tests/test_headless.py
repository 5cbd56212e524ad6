"""The core must never pull in the terminal UI."""

import subprocess
import sys

from conftest import ROOT


def test_core_imports_no_textual():
    code = ("import sys, irscope.core.session, irscope.core.report, irscope.cli; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
