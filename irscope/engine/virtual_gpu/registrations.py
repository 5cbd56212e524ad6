"""Which torch operators the file's libraries implement for CUDA while it runs (torch.library registrations
under the CUDA dispatch key: flag-gems' `enable()`, `only_enable()`, `use_gems()`), kept apart so that the
route to them (dispatch.py) and the tensors' own stand-ins (tensors.py) read one record."""

from __future__ import annotations

import weakref
from typing import Iterable

# operator name ("aten::add.Tensor") -> the Libraries that registered a CUDA kernel for it during the run
_registered: dict[str, list[weakref.ref]] = {}


def note_registration(name: str, library) -> None:
    """`library` registered a CUDA kernel for operator `name` ("ns::op" or "ns::op.overload")."""
    _registered.setdefault(name, []).append(weakref.ref(library))


def library_kernel(name: str) -> bool:
    """Does a live `Library` that the file made hold this operator's CUDA kernel?"""
    return any(
        lib is not None and getattr(lib, "m", None) is not None
        for lib in (ref() for ref in _registered.get(name, ()))
    )


def library_implements_any(ops: Iterable[str]) -> bool:
    """Does a live `Library` that the file made hold a CUDA kernel for any overload of one of `ops` (ATen
    operators by their bare names: "mm", "bmm")?"""
    wanted = {f"aten::{op}" for op in ops}
    return any(name.split(".")[0] in wanted and library_kernel(name) for name in list(_registered))


def forget_registrations() -> None:
    _registered.clear()
