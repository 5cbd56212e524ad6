"""The worker process: `python -m irscope.worker COMMAND ARGS...`, started by a front end (client.py)."""

from __future__ import annotations

import io
import os
import shutil
import signal
import sys

from ..core.lifetime import die_with_parent
from . import protocol


def _shutdown(signum, _frame) -> None:
    """Asked to stop, or the front end died: stop the compile children, remove the temporary folder, and
    end the whole process group (ptxas, nvdisasm, this process)."""
    ahead = sys.modules.get("irscope.core.ahead")
    if ahead is not None:
        try:
            ahead.stop_all()
        except Exception:  # noqa: BLE001 - on the way out; the group kill below still happens
            pass
    tmp = os.environ.get("IRSCOPE_WORKER_TMP")
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> None:
    result_fd = int(os.environ.pop("IRSCOPE_WORKER_RESULT_FD"))
    front_end = int(os.environ.pop("IRSCOPE_FRONT_END_PID"))
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _shutdown)
    die_with_parent(front_end)
    me = os.getpid()
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err  # irscope's own words; the user's file writes to fds 1 and 2
    code = 70
    try:
        from ..cli import execute
        code = execute(argv)
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        if os.getpid() == me:  # not a fork the user's file made
            protocol.send(result_fd, {"out": out.getvalue(), "err": err.getvalue(), "code": code})
            ahead = sys.modules.get("irscope.core.ahead")
            if ahead is not None:
                ahead.stop_all()
        sys.__stdout__.flush()
        # Threads the file started, atexit hooks it registered: none of them may keep the worker alive.
        os._exit(code if os.getpid() == me else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
