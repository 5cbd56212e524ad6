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


def check_output_path(path: str, what: str, example: str) -> None:
    """`-o PATH` of a command that writes `what` (the page, the script): one line where it cannot be written."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise IrscopeError(
            f"-o {path}: the folder {folder} does not exist; create it or write {what} elsewhere"
        )
    if os.path.isdir(path):
        raise IrscopeError(f"-o {path} is a folder; give a file name, like -o {example}")


def _namespace_portion(folder: str) -> bool:
    return os.path.isdir(folder) and os.path.isfile(
        os.path.join(os.path.dirname(folder), "__init__.py")
    )


def package_module(path: str) -> tuple[str, str] | None:
    """(root, dotted name) when `path` is a module inside a package (an `__init__.py` beside it), as
    `python -m dotted.name` run from `root` would import it; None for a file outside any package.

    The package is the longest chain of folders with an `__init__.py` above the file, each named as a
    Python identifier (a folder that could not be imported by that name ends the chain); a folder without one
    inside a folder with one is a namespace portion of that package and keeps the chain going, as Python's
    import does (FlagGems' `runtime/backend/_enflame/gcu300/`)."""
    path = os.path.abspath(path)
    folder, name = os.path.split(path)
    stem = name[:-3] if name.endswith(".py") else ""
    if not stem.isidentifier() or not os.path.isfile(os.path.join(folder, "__init__.py")):
        return None
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")) or _namespace_portion(folder):
        folder, part = os.path.split(folder)
        if not part.isidentifier():
            return None
        parts.insert(0, part)
    return folder, ".".join(parts)
