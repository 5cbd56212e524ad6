"""What a kernel prints goes where the file's own output goes, never into irscope's answer.

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
import threading
from typing import Iterator

_here = threading.local()


@contextlib.contextmanager
def kernel_prints() -> Iterator[None]:
    if not isinstance(sys.stdout, _Router):
        sys.stdout = _Router(sys.stdout)  # undone by whoever replaced sys.stdout before, when they restore it
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
