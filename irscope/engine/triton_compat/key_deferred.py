"""Compile before Triton's install hash is known: what a compile child (engine/compile/ahead.py) does on a first run.

`triton.compile` asks for `triton_key()` before anything else, since the key of its cache holds it. On a
first run that hash (~0.3 s of SHA-256 over libtriton) is still being worked out beside the user's file
(install_key.py), and a compile child that waited for it started its compile that much later: for the
first kernel a user opens, the hash and the compile came one after the other, as in a plain
`triton.compile`, on top of the file's run.

Under `key_deferred`, `triton.compile` runs at once with a stand-in for the hash and writes its files into a
private folder. Once the real hash is in, each compile's files are put into Triton's cache through Triton's
own cache manager, under the key Triton would have used, with the one field that names that key (the
metadata's "hash") set to the real one; every other byte is the compiler's. The parent then finds them as
an ordinary cache hit (and tests/unit/test_triton_compat_install_key.py checks that the folder matches a plain compile's
byte for byte). A compile that fails publishes nothing: the parent compiles, and reports, by itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import uuid
from typing import Iterator

from triton import knobs
from triton.runtime.cache import FileCacheManager

from irscope.engine.triton_compat.install_key import triton_install_key, triton_key_known

_GROUP = "__grp__"


class _Private(FileCacheManager):
    """Triton's file cache manager, in a folder of its own: a compile made under the stand-in key."""

    def __init__(self, folder: str, key: str):  # noqa: D401 - not FileCacheManager's: no Triton cache folder
        self.key = key
        self.cache_dir = os.path.join(folder, key)
        self.lock_path = os.path.join(self.cache_dir, "lock")
        os.makedirs(self.cache_dir, exist_ok=True)


@contextlib.contextmanager
def key_deferred() -> Iterator[None]:
    """Within: `triton.compile` needs no install hash (see above). On leaving without an error: each
    compile made within is in Triton's cache, once the hash is known (this waits for it)."""
    import triton.compiler.compiler as compiler_module
    import triton.runtime.cache as cache_module

    # 3.9: it extends the key
    hooked = getattr(knobs.runtime, "add_stages_inspection_hook", None) is not None
    if triton_key_known() or hooked:
        yield
        return
    standin = f"irscope-install-hash-pending-{uuid.uuid4().hex}"
    folder = tempfile.mkdtemp(prefix="irscope-compile-")
    keys: list[str] = []
    made: list[
        tuple[str, str, _Private]
    ] = []  # (key under the stand-in, its hash, where its files are)
    saved = (
        cache_module.triton_key,
        compiler_module.get_cache_key,
        compiler_module.get_cache_manager,
    )
    real_cache_key, real_manager = saved[1], saved[2]

    def get_cache_key(*args, **kwargs) -> str:
        keys.append(real_cache_key(*args, **kwargs))
        return keys[-1]

    def get_cache_manager(key_hash: str) -> _Private:
        manager = _Private(folder, key_hash)
        made.append((keys[-1], key_hash, manager))
        return manager

    try:
        cache_module.triton_key = lambda: standin
        compiler_module.get_cache_key, compiler_module.get_cache_manager = (
            get_cache_key,
            get_cache_manager,
        )
        try:
            yield
        finally:
            (
                cache_module.triton_key,
                compiler_module.get_cache_key,
                compiler_module.get_cache_manager,
            ) = saved
        install = triton_install_key()
        for key, key_hash, manager in made:
            if not key.startswith(standin):  # pragma: no cover - only if Triton's key changes shape
                raise RuntimeError("Triton's cache key no longer starts with its install hash")
            real_hash = hashlib.sha256((install + key[len(standin) :]).encode("utf-8")).hexdigest()
            _publish(manager, key_hash, real_manager(real_hash), real_hash)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _publish(private: _Private, key_hash: str, cache, real_hash: str) -> None:
    """Put each group of files the compile wrote into `cache` (Triton's manager for the real key), in the
    order the compile wrote them, as bytes (so that a text file keeps the bytes it was written with)."""
    for name in sorted(os.listdir(private.cache_dir)):
        if not name.startswith(_GROUP):
            continue
        group_name = name[len(_GROUP) :]
        with open(os.path.join(private.cache_dir, name), encoding="utf-8") as f:
            children = json.load(f)["child_paths"]
        placed = {}
        for child, path in children.items():
            with open(path, "rb") as f:
                data = f.read()
            if child == group_name:  # the metadata: the only file that names the key
                field, real = f'"hash": "{key_hash}"'.encode(), f'"hash": "{real_hash}"'.encode()
                # pragma: no cover - only if Triton's metadata changes shape
                if data.count(field) != 1:
                    raise RuntimeError("the compile's metadata does not name its key as expected")
                data = data.replace(field, real)
            placed[child] = cache.put(data, child, binary=True)
        cache.put_group(group_name, placed)
