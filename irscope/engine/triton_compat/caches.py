"""Where compiles are kept: Triton's cache (`TRITON_CACHE_DIR`), irscope's own small one, and the key.

Two things can go wrong with a cache that a plain `triton.compile` leaves to its caller:

- The key. Triton keys a compile on the kernel's source, not on its file's path, yet the compile records
  the path (`#loc`, `.file`, `!DIFile`). A copy of a file opened after the original got the original's
  compile, so none of the copy's IR mapped to its lines. `compile_with_cache` checks that the TTIR records
  the path it was asked for and, where it does not, compiles again under a key that holds the path too.
  A plain open pays nothing for this: its first compile is the ordinary JIT key, shared with real launches.
- The folder. A read-only, full or missing-parent cache made every compile fail. `check_caches` tries
  both caches before a run; a cache that cannot be written is replaced for this run by a temporary folder
  (removed at exit), with one warning line. A write that fails during a compile (the disk filled up) does
  the same and tries the compile once more.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import os
import shutil
import tempfile
from typing import Any, Callable, Iterator

import triton
from triton.compiler import ASTSource

from irscope.engine.triton_compat.gluon import first_ir_stage

_state: dict[str, str | None] = {
    "temporary": None,
    "irscope_dir": None,
    "warning": None,
    "unsaid": None,
}


def triton_cache_dir() -> str:
    return triton.knobs.cache.dir


@contextlib.contextmanager
def fresh_triton_cache() -> Iterator[None]:
    """Compiles inside go to an empty Triton cache of their own (removed after): a comparison of two
    compilations that must not get one from the other's cache entry (`irscope repro --check`)."""
    knobs = triton.knobs.cache
    # set by hand, or read from TRITON_CACHE_DIR on each use: put back as it was (set, it would hide the
    # variable from then on)
    was_set, before = "dir" in vars(knobs), vars(knobs).get("dir")
    folder = tempfile.mkdtemp(prefix="irscope-fresh-cache-")
    knobs.dir = folder
    try:
        yield
    finally:
        if was_set:
            knobs.dir = before
        else:
            del knobs.dir
        shutil.rmtree(folder, ignore_errors=True)


def irscope_cache_dir() -> str:
    """irscope's own small cache: facts about the Triton install, not compiled kernels (those stay in
    Triton's cache, so that `TRITON_CACHE_DIR` decides where they go). `IRSCOPE_CACHE_DIR` overrides it."""
    if _state["irscope_dir"]:
        return _state["irscope_dir"]
    chosen = os.environ.get("IRSCOPE_CACHE_DIR")
    if chosen:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "irscope")


# --- folders that cannot be written ----------------------------------------------------------------------


def _write_error(folder: str) -> OSError | None:
    """Why nothing can be written in `folder` (created if missing), or None if a file can be."""
    try:
        os.makedirs(folder, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".irscope-probe-")
        try:
            os.write(fd, b"irscope")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        return exc
    return None


def _temporary(name: str) -> str:
    if _state["temporary"] is None:
        _state["temporary"] = tempfile.mkdtemp(prefix="irscope-uncached-")
        atexit.register(shutil.rmtree, _state["temporary"], True)
    folder = os.path.join(_state["temporary"], name)
    os.makedirs(folder, exist_ok=True)
    return folder


def _reason(exc: OSError) -> str:
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        return "a file is in the way of the folder"
    return exc.strerror or type(exc).__name__


def check_caches() -> str | None:
    """Make sure both caches can be written; a cache that cannot is replaced by a temporary folder for this
    run. Returns the one-line warning that says so (again on every call), or None."""
    if _state["warning"] is not None or _state["temporary"] is not None:
        return _state["warning"]
    failed: list[tuple[str, str, OSError]] = []
    triton_dir = triton_cache_dir()
    error = _write_error(triton_dir)
    if error is not None:
        failed.append(("TRITON_CACHE_DIR", triton_dir, error))
        triton.knobs.cache.dir = _temporary("triton")
    own = irscope_cache_dir()
    error = _write_error(own)
    if error is not None:
        failed.append(("IRSCOPE_CACHE_DIR", own, error))
        _state["irscope_dir"] = _temporary("irscope")
    if failed:
        _state["warning"] = _warning_line(failed)
    return _state["warning"]


def _warning_line(failed: list[tuple[str, str, OSError]]) -> str:
    places = " and ".join(f"{folder} ({_reason(exc)})" for _variable, folder, exc in failed)
    variables = " and ".join(variable for variable, _folder, _exc in failed)
    folders = "writable folders" if len(failed) > 1 else "a writable folder"
    return (
        f"cannot write the cache {places}; compiling without a cache this run (set {variables} to {folders} "
        f"to keep compiles)"
    )


def _is_cache_write_failure(exc: OSError, folder: str) -> bool:
    """Whether `exc` came from writing Triton's cache: it names a file there, or (a failed write() names no
    file) Triton's cache manager raised it itself. Not an error that only passed through the manager's
    module: computing the cache key opens every extern_libs file, and a missing one is the launch's fault."""
    inside = os.path.abspath(folder) + os.sep
    names = [name for name in (exc.filename, exc.filename2) if isinstance(name, str)]
    if any(os.path.abspath(name).startswith(inside) for name in names):
        return True
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename.endswith(
        os.path.join("triton", "runtime", "cache.py")
    )


def _writing_cache(run: Callable[[], object]):
    """`run()`, and once more in a temporary cache if it failed to write Triton's cache."""
    try:
        return run()
    except OSError as exc:
        if _state["temporary"] is not None and triton_cache_dir().startswith(_state["temporary"]):
            raise  # the temporary cache fails too: nothing left to fall back on
        failed = triton_cache_dir()
        if not _is_cache_write_failure(exc, failed):
            raise
        triton.knobs.cache.dir = _temporary("triton")
        _state["warning"] = _state["unsaid"] = _warning_line([("TRITON_CACHE_DIR", failed, exc)])
        return run()


def new_cache_warning() -> str | None:
    """The warning of a cache that failed during a compile, once (check_caches's warnings are the caller's)."""
    said, _state["unsaid"] = _state["unsaid"], None
    return said


# --- the key --------------------------------------------------------------------------------------------


def _hash_with_path(source_class: type) -> Callable[[Any], str]:
    """`source_class.hash`, with the kernel's file path in the key."""

    def hash_with_path(self) -> str:
        return hashlib.sha256(
            f"{source_class.hash(self)}-{self.fn.fn.__code__.co_filename}".encode("utf-8")
        ).hexdigest()

    return hash_with_path


class SourceAtPath(ASTSource):
    """A kernel's source, keyed in Triton's cache by its file's path as well."""

    hash = _hash_with_path(ASTSource)


@functools.cache
def keyed_by_path(source_class: type) -> type:
    """`source_class` (ASTSource or GluonASTSource) keyed by the file's path as well, as SourceAtPath is."""
    if source_class is ASTSource:
        return SourceAtPath
    return type(
        f"{source_class.__name__}AtPath", (source_class,), {"hash": _hash_with_path(source_class)}
    )


def _mlir_string(text: str) -> str:
    """`text` as MLIR prints a string (LLVM's printEscapedString: printable ASCII, other bytes as \\XX)."""
    out = []
    for byte in text.encode("utf-8"):
        if byte == 0x5C:
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and byte != 0x22:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:02X}")
    return "".join(out)


def records_other_path(kernel, path: str) -> bool:
    """Whether a compiled kernel's first IR (TTIR; a Gluon kernel's glir or TTGIR) records its source under
    another file's path than `path`."""
    asm = dict(kernel.asm)
    stage = first_ir_stage(asm)
    first = asm.get(stage) if stage else None
    if not isinstance(first, str) or 'loc("' not in first:
        return False
    return f'loc("{_mlir_string(path)}":' not in first


def compile_with_cache(
    compile_source: Callable[[type], object], path: str, source_class: type = ASTSource
):
    """`compile_source(source_class)`, or the same keyed by the path too (SourceAtPath) where the first
    compile came from the cache of a copy of the file at another path. Either survives a cache that cannot
    be written. `source_class`: ASTSource, or GluonASTSource for a Gluon kernel (gluon.py)."""
    kernel = _writing_cache(lambda: compile_source(source_class))
    if records_other_path(kernel, path):
        kernel = _writing_cache(lambda: compile_source(keyed_by_path(source_class)))
    return kernel
