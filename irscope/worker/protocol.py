"""What passes between a front end and its worker, length-prefixed: one JSON object each way for a
command (`dump`, `report`, `step`); pickled plain data for the TUI's session, read back through an
unpickler that accepts only irscope's data classes, NumPy and builtins. Either way the front end needs
neither torch nor Triton to read an answer."""

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import threading
from typing import Any

_HEADER = struct.Struct(">Q")


def send(fd: int, message: dict) -> None:
    data = json.dumps(message).encode()
    _write_all(fd, _HEADER.pack(len(data)) + data)


def receive(fd: int) -> dict | None:
    """The next message, or None when the other side closed the pipe before a whole one came."""
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    body = _read_exactly(fd, _HEADER.unpack(header)[0])
    return None if body is None else json.loads(body)


def _read_exactly(fd: int, count: int) -> bytes | None:
    chunks, left = [], count
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# ---- the interactive session (TUI): analyses' dataclasses and NumPy arrays, pickled

# The classes of the plain layers, which never import torch or Triton (the contracts in pyproject.toml), and the
# views: what the front end may rebuild from an answer.
PLAIN_LAYERS = ("irscope.base.", "irscope.ir.", "irscope.analysis.", "irscope.findings.")
_ALLOWED = (*PLAIN_LAYERS, "irscope.worker.views", "numpy", "collections", "builtins", "copyreg")


class _FrontEndUnpickler(pickle.Unpickler):
    """Reads only irscope's plain-data classes, NumPy and builtins: an answer can never make the front end
    import torch or Triton, nor run anything else."""

    def find_class(self, module: str, name: str):
        if not module.startswith(_ALLOWED) or (module == "builtins" and name in _UNSAFE_BUILTINS):
            raise pickle.UnpicklingError(f"the worker sent a {module}.{name}, which a front end does not read")
        return super().find_class(module, name)


_UNSAFE_BUILTINS = {"eval", "exec", "compile", "open", "__import__", "getattr", "setattr", "delattr", "input",
                    "breakpoint", "globals", "locals", "vars"}


def send_object(fd: int, message: Any, lock: threading.Lock | None = None) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    if lock is None:
        _write_all(fd, _HEADER.pack(len(data)) + data)
    else:
        with lock:
            _write_all(fd, _HEADER.pack(len(data)) + data)


def receive_object(fd: int, trusted: bool = False) -> Any:
    """The next message, or None at the end of the pipe. Untrusted (the front end's side): restricted."""
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    body = _read_exactly(fd, _HEADER.unpack(header)[0])
    if body is None:
        return None
    return pickle.loads(body) if trusted else loads(body)


def loads(data: bytes) -> Any:
    """An answer, read as a front end may: irscope's data classes, NumPy and builtins only."""
    return _FrontEndUnpickler(io.BytesIO(data)).load()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
