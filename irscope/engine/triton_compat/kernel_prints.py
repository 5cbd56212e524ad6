"""What a kernel prints goes where the file's own output goes, never into irscope's answer; what Triton's
C++ passes print on fd 2 while compiling is collected (`stderr_captured`), not shown.

Triton prints with Python's `print`, into whatever `sys.stdout` is at the time: `tl.static_print` while its
front end compiles a kernel, `tl.device_print` (and `static_print`) while its interpreter runs one. irscope
writes its own answer (`report --json`, `dump`'s PTX) to `sys.stdout` as well, so a kernel compiled or
interpreted after the file's run (the report's compile, a recording for the stepper or an analysis, a
what-if's recompile) printed into that answer. `kernel_prints()` marks such a stretch on this thread: while
it lasts, what the thread writes to `sys.stdout` goes to the file's output instead (in a worker its fd 1,
which the front end keeps in a file, as capture.py does with the file's run; in-process, stderr). Other
threads' writes and irscope's own are untouched. Compile children write to /dev/null (ahead.py).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
from typing import Any, Iterator

_here = threading.local()


@contextlib.contextmanager
def kernel_prints() -> Iterator[None]:
    if not isinstance(sys.stdout, _Router):
        # undone by whoever replaced sys.stdout before, when they restore it
        sys.stdout = _Router(sys.stdout)
    depth = getattr(_here, "depth", 0)
    _here.depth = depth + 1
    try:
        yield
    finally:
        _here.depth = depth


class _Router:
    """`sys.stdout` that sends a thread's writes inside `kernel_prints()` to the file's output."""

    def __init__(self, own) -> None:
        self.own = own

    def write(self, text: str) -> int:
        if not getattr(_here, "depth", 0):
            return self.own.write(text)
        stream = sys.__stdout__ if os.environ.get("IRSCOPE_WORKER_TMP") else sys.__stderr__
        return stream.write(text) if stream is not None else len(text)

    def flush(self) -> None:
        self.own.flush()

    def __getattr__(self, name: str):
        return getattr(self.own, name)


@contextlib.contextmanager
def stderr_captured() -> Iterator[Any]:
    """Collect what Triton's C++ passes print on file descriptor 2 while compiling."""
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        done: list[str] = []

        def read() -> str:
            if not done:
                os.dup2(saved, 2)
                sink.seek(0)
                done.append(sink.read().decode("utf-8", "replace"))
            return done[0]

        try:
            yield read
        finally:
            read()
            os.close(saved)
