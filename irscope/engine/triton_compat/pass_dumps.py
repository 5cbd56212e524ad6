"""Capture the IR between compiler passes, for one compilation, on request.

Triton 3.6 through 3.9 read these variables in C++ when a pass manager is set up: `MLIR_ENABLE_DUMP=1`
makes MLIR print the whole module before every pass (after a pass only when it fails), into the file
`MLIR_DUMP_PATH` names; `LLVM_IR_ENABLE_DUMP=1` makes LLVM print the module after every LLVM pass
(`print-after-all`) on file descriptor 2. Neither is part of Triton's cache key, so the compile is forced
(`TRITON_ALWAYS_COMPILE`); it writes the same result into the cache as before.

The compile runs in a forked child: Triton opens the `MLIR_DUMP_PATH` file once per process and keeps
writing to it, so a second capture in the same process would find nothing in its own file."""

from __future__ import annotations

import os
import tempfile
import warnings

from irscope.base.errors import IrscopeError
from irscope.engine.triton_compat import Specialized, Target, restore_unpatched_triton
from irscope.engine.triton_compat.compiler import triton_compile


def compile_with_pass_dumps(jit, spec: Specialized, target: Target) -> tuple[str, str]:
    """Compile once more with the dumps on: (the MLIR dumps, what LLVM printed after each of its passes)."""
    with tempfile.TemporaryDirectory(prefix="irscope-passes-") as tmp:
        mlir_path, llvm_path, error_path = (
            os.path.join(tmp, n) for n in ("mlir.txt", "llvm.txt", "error.txt")
        )
        with warnings.catch_warnings():
            # fork() with torch's threads: see engine/compile/ahead.py
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        # the child: compile with the dumps on, then exit without running any parent clean-up
        if pid == 0:
            code = 1
            try:
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                os.dup2(os.open(llvm_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
                os.environ.update(
                    MLIR_ENABLE_DUMP="1",
                    MLIR_DUMP_PATH=mlir_path,
                    LLVM_IR_ENABLE_DUMP="1",
                    TRITON_ALWAYS_COMPILE="1",
                )
                restore_unpatched_triton()
                triton_compile(jit, spec, target)
                code = 0
            except BaseException as exc:  # noqa: BLE001 - said to the parent through the file
                try:
                    with open(error_path, "w") as f:
                        f.write(f"{type(exc).__name__}: {exc}")
                except OSError:
                    pass
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        texts = []
        for path in (mlir_path, llvm_path, error_path):
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    texts.append(f.read())
            except FileNotFoundError:
                texts.append("")
    if status != 0:
        raise IrscopeError(
            f"the compile with pass dumps on failed: {texts[2].splitlines()[0] if texts[2] else status}"
        )
    return texts[0], texts[1]
