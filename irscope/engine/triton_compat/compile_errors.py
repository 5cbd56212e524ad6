"""Why a compile failed, where Triton's own message leaves out what a user needs to act on it.

- A library the launch's `extern_libs` names that is not there: Triton hashes each one into its cache key,
  so the compile stops at `open()` with a bare FileNotFoundError. Triton's tutorial 07 builds its libdevice
  path from its own place in Triton's source tree (`python/tutorials/../../third_party/nvidia/backend/lib`),
  which exists only in a checkout of Triton: outside one it fails the same way on a GPU.
- A `triton.language` builtin that raises NotImplementedError: how Triton marks what a release removed
  (block pointers in 3.9: `tl.make_block_ptr` raises "Block pointers have been removed ..."). The message
  names neither the builtin nor the release; code written for an earlier Triton meets it.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

import triton
from triton.compiler.errors import CompilationError

from irscope.engine.triton_compat.driver import gpu_target_of

_LANGUAGE_DIR = os.path.dirname(os.path.abspath(triton.language.__file__))
_PUBLIC_MODULES = ("core.py", "standard.py", "math.py", "random.py")  # what `tl.NAME` reaches


def missing_extern_lib(exc: BaseException, options: Any, target) -> str | None:
    """A line naming the missing library when `exc` is the launch's `extern_libs` path not existing, with
    where the installed Triton keeps its own library of that name; None otherwise."""
    missing = getattr(exc, "filename", None)
    if not isinstance(exc, FileNotFoundError) or not missing:
        return None
    given = dict(getattr(options, "extern_libs", None) or ())
    name = next((n for n, path in given.items() if path == missing), None)
    if name is None:
        return None
    line = f"the launch's extern_libs gives {name} as {missing}, which does not exist"
    parts = os.path.normpath(missing).split(os.sep)
    if "third_party" in parts and "backend" in parts:
        line += (
            " (a path in Triton's source tree: the file expects to run inside a checkout of Triton)"
        )
    bundled = _bundled_lib(name, target)
    if bundled and bundled != missing and os.path.exists(bundled):
        line += f"; the installed Triton's {name} is {bundled}"
    return line


def _bundled_lib(name: str, target) -> str | None:
    """The path of the installed Triton's own library `name` for `target` (what a launch without
    extern_libs links), or None."""
    try:
        from triton.compiler import compiler as compiler_module

        options = compiler_module.make_backend(gpu_target_of(target)).parse_options({})
        return dict(options.extern_libs or ()).get(name)
    except Exception:  # noqa: BLE001 - only a hint; the failure is reported all the same
        return None


def not_implemented_builtin(exc: BaseException) -> str:
    """ " (tl.NAME raises this in the installed Triton X.Y.Z)" when the innermost frontend error is a
    NotImplementedError that a public `triton.language` builtin raised; "" otherwise."""
    inner = exc
    while isinstance(inner.__cause__, CompilationError) or isinstance(
        inner.__context__, CompilationError
    ):
        inner = (
            inner.__cause__ if isinstance(inner.__cause__, CompilationError) else inner.__context__
        )
    cause = inner.__cause__
    if not isinstance(cause, NotImplementedError):
        return ""
    frames = [
        f
        for f in traceback.extract_tb(cause.__traceback__)
        if os.path.dirname(os.path.abspath(f.filename)) == _LANGUAGE_DIR
    ]
    if not frames or os.path.basename(frames[-1].filename) not in _PUBLIC_MODULES:
        return ""
    return f" (tl.{frames[-1].name} raises this in the installed Triton {triton.__version__})"
