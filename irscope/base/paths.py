"""The first check of a path the user gave, importable without torch or Triton (the terminal UI runs it
before it paints, so a bad path is one line on stderr rather than a screen)."""

from __future__ import annotations

import os

from irscope.base.errors import IrscopeError

# irscope's own folder: frames there are irscope's, not the user's (a capture's stops, a user traceback)
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def check_kernel_path(path: str) -> None:
    """A one-line error unless `path` names an existing file (not a directory)."""
    if not os.path.exists(path):
        raise IrscopeError(
            f"{path}: no such file; give the path of a Python file with @triton.jit kernels"
        )
    if os.path.isdir(path):
        raise IrscopeError(
            f"{path} is a directory; give one Python file, e.g. {os.path.join(path, 'add.py')}"
        )
