"""Kernel libraries that keep their autotuning choices on disk, keyed by the GPU's name, get a folder of the
run's own while the file runs on the virtual GPU.

The virtual device has a real GPU's name (libraries pick their configs by it), but its timings measure
nothing: a library that saved the config it "chose" from them would hand that choice to the next run on a
real GPU of that name, which would then skip its own tuning. FlagGems' LibTuner does so (with its generated
code) under `FLAGGEMS_CACHE_DIR`, else `~/.flaggems`. Triton's own autotuner is replaced during the capture
and saves nothing.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import shutil
import tempfile
from typing import Iterator

# variable -> whose cache it names
TUNING_CACHES = {"FLAGGEMS_CACHE_DIR": "flag-gems (LibTuner's chosen configs, its generated code)"}


@contextlib.contextmanager
def tuning_caches_aside() -> Iterator[str]:
    """While the block runs, each variable of TUNING_CACHES names a folder of its own under a temporary one,
    removed afterwards; the variables are then as they were. The Python files a library generated there
    (FlagGems' pointwise kernels) stay readable where `inspect` reads a kernel's source: irscope writes
    their reproducers, and shows their source, after the run."""
    folder = tempfile.mkdtemp(prefix="irscope-tuning-")
    saved = {name: os.environ.get(name) for name in TUNING_CACHES}
    for name in TUNING_CACHES:
        os.environ[name] = os.path.join(folder, name.lower())
    try:
        yield folder
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _keep_generated_sources(folder)
        shutil.rmtree(folder, ignore_errors=True)


def _keep_generated_sources(folder: str) -> None:
    """Each .py file under `folder` into linecache, as a source no longer on disk (linecache keeps an entry
    whose modification time is None when it checks its cache)."""
    for root, _dirs, files in os.walk(folder):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                try:
                    with open(path, encoding="utf-8") as f:
                        lines = f.read().splitlines(keepends=True)
                except (OSError, UnicodeDecodeError):
                    continue
                linecache.cache[path] = (sum(map(len, lines)), None, lines, path)
