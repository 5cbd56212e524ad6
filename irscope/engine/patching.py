"""Attributes set for a while and put back: the virtual GPU's stand-ins for torch and Triton."""

from __future__ import annotations

from typing import Any

_MISSING = object()


class Patches:
    """`patch(owner, name, value)` sets an attribute and remembers what was there (or that nothing
    was); `restore()` puts everything back, the last set first."""

    def __init__(self) -> None:
        self._saved: list[tuple[Any, str, Any]] = []

    def patch(self, owner: Any, name: str, value: Any) -> None:
        self._saved.append((owner, name, owner.__dict__.get(name, _MISSING)))
        setattr(owner, name, value)

    def restore(self) -> None:
        for owner, name, value in reversed(self._saved):
            if value is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, value)
        self._saved.clear()


def write_atomically(path: str, text: str) -> bool:
    """Write a cache file whole or not at all (a reader never sees half of it); False when the folder is
    read-only or full, which leaves the caller's result right, only not kept."""
    import os

    partial = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(partial, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(partial, path)
        return True
    except OSError:
        try:
            os.unlink(partial)
        except OSError:
            pass
        return False
