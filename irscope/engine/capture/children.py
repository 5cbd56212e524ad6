"""The Python processes a run starts (pytest-xdist's workers, a multiprocessing pool): irscope captures the
launches of the process it runs the file or command in, not theirs, so a run that starts any is told so.

Counted where they are started: `subprocess.Popen` of a Python interpreter (execnet, which pytest-xdist uses,
starts its workers that way) and `multiprocessing`'s `Process.start` (every start method). Tools the run
starts that are not Python (ptxas, a compiler) launch no kernel and are not counted, nor is the pool of
compile workers Inductor starts on a machine with cores to spare (they compile Triton kernels and send them
back; the launches happen here, where irscope records them: engine/inductor/kernels.py).
"""

from __future__ import annotations

import contextlib
import multiprocessing.process
import os
import subprocess
from typing import Iterator


def _is_python(args) -> bool:
    first = args if isinstance(args, (str, bytes)) else (list(args)[:1] or [""])[0]
    name = os.path.basename(os.fsdecode(first).split()[0] if first else "")
    return name.startswith("python") or name == "pypy3"


_INDUCTOR_COMPILE_WORKER = os.path.join("_inductor", "compile_worker", "__main__.py")


def _is_inductor_compile_worker(args) -> bool:
    """torch's SubprocPool: `python .../torch/_inductor/compile_worker/__main__.py --pickler=... ...`."""
    if isinstance(args, (str, bytes)):
        args = [args]
    return any(os.fsdecode(part).endswith(_INDUCTOR_COMPILE_WORKER) for part in list(args)[:2])


@contextlib.contextmanager
def children_counted(started: list[str]) -> Iterator[None]:
    """Append to `started` one entry per Python process the run starts ("python", "multiprocessing")."""
    popen_init = subprocess.Popen.__init__
    process_start = multiprocessing.process.BaseProcess.start

    def counting_init(self, args, *rest, **kwargs):
        if _is_python(args) and not _is_inductor_compile_worker(args):
            started.append("python")
        return popen_init(self, args, *rest, **kwargs)

    def counting_start(self):
        started.append("multiprocessing")
        return process_start(self)

    subprocess.Popen.__init__ = counting_init
    multiprocessing.process.BaseProcess.start = counting_start
    try:
        yield
    finally:
        subprocess.Popen.__init__ = popen_init
        multiprocessing.process.BaseProcess.start = process_start


def children_note(started: list[str], shown: str) -> str | None:
    """One line when the run started Python processes: their launches were not captured, and how to keep
    them in one process."""
    if not started:
        return None
    return (
        f"{shown} started {len(started)} Python process(es) of its own (a multiprocessing pool, "
        f"pytest-xdist's workers); launches in those are not captured: make them in the file's own process "
        f"(pytest: -p no:xdist, or -n 0)"
    )
