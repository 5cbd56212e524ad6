"""The validation tables in docs/validation.md are rebuilt here, with no GPU, from the raw data committed
beside them: a published number that the raw data does not give fails."""

import os
import re
import subprocess
import sys

from conftest import ROOT

DOC = os.path.join(ROOT, "docs", "validation.md")


def _section(title: str) -> str:
    text = open(DOC).read()
    start = text.index(title)
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def _rows(text: str, prefix: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.startswith(prefix)]


def test_the_coalescing_table_is_rebuilt_from_the_committed_ncu_csv():
    published = _rows(_section("## Coalescing: irscope's prediction against Nsight Compute"), "| kernels/")
    files = list(dict.fromkeys(re.match(r"\| (\S+) \|", row).group(1) for row in published))
    done = subprocess.run([sys.executable, os.path.join(ROOT, "validation", "ncu_coalescing.py"), "--measured",
                           os.path.join(ROOT, "docs", "ncu_raw.csv"), *[os.path.join(ROOT, f) for f in files]],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    rebuilt = _rows(done.stdout, "| kernels/")
    assert rebuilt == published
    # the script's verdict is part of what is published: it fails while a launch has no measurement
    assert done.returncode == (1 if any("not measured" in row or "| NO |" in row for row in rebuilt) else 0)
