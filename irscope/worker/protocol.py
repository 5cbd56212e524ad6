"""What passes between a front end and its worker: one JSON object each way, length-prefixed.

Plain data only (str, int, float, bool, None, lists, dicts), so the front end needs neither torch nor
Triton to read an answer."""

from __future__ import annotations

import json
import os
import struct

_HEADER = struct.Struct(">Q")


def send(fd: int, message: dict) -> None:
    data = json.dumps(message).encode()
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


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
