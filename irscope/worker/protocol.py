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
            raise pickle.UnpicklingError(
                f"the worker sent a {module}.{name}, which a front end does not read"
            )
        return super().find_class(module, name)


_UNSAFE_BUILTINS = {
    "eval",
    "exec",
    "compile",
    "open",
    "__import__",
    "getattr",
    "setattr",
    "delattr",
    "input",
    "breakpoint",
    "globals",
    "locals",
    "vars",
}


class UnreadableAnswer(Exception):
    """An answer the front end may not read (a class outside the allow-list, say), and the request it
    answers: that request fails with this, instead of waiting for an answer that came."""

    def __init__(self, request_id: Any, reason: Exception) -> None:
        super().__init__(f"an unreadable answer: {reason}")
        self.request_id = request_id


def send_object(fd: int, message: Any, lock: threading.Lock | None = None) -> None:
    """One message, framed as its request id (pickled alone, so that an answer the other side cannot read
    still says which request it answers) and then the message."""
    request_id = message.get("id") if isinstance(message, dict) else None
    head = pickle.dumps(request_id, protocol=pickle.HIGHEST_PROTOCOL)
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    frame = _HEADER.pack(len(head)) + head + _HEADER.pack(len(data)) + data
    if lock is None:
        _write_all(fd, frame)
    else:
        with lock:
            _write_all(fd, frame)


def receive_object(fd: int, trusted: bool = False) -> Any:
    """The next message, or None at the end of the pipe. Untrusted (the front end's side): restricted, and
    a message it may not read raises UnreadableAnswer with the request id it carries."""
    head = _read_frame(fd)
    body = _read_frame(fd) if head is not None else None
    if body is None:
        return None
    if trusted:
        return pickle.loads(body)
    request_id = loads(head)
    try:
        return loads(body)
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
        raise UnreadableAnswer(request_id, exc) from None


def _read_frame(fd: int) -> bytes | None:
    header = _read_exactly(fd, _HEADER.size)
    return None if header is None else _read_exactly(fd, _HEADER.unpack(header)[0])


def loads(data: bytes) -> Any:
    """An answer, read as a front end may: irscope's data classes, NumPy and builtins only."""
    return _FrontEndUnpickler(io.BytesIO(data)).load()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
