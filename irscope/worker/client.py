"""The front end's side of a worker: start it, wait for its answer, print it, leave nothing behind.

Importable without torch or Triton: the command line process stays small and never runs user code."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from . import protocol
from .textsafe import safe_text

_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_TAIL_LINES = 8


class _Stopped(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def start(argv: list[str], tmp: str, result_fd: int, output, request_fd: int | None = None) -> subprocess.Popen:
    """The worker process for one command (or, with `request_fd`, a session): its own session, no stdin,
    its output into `output`."""
    env = dict(os.environ, TMPDIR=tmp, IRSCOPE_WORKER_TMP=tmp, IRSCOPE_WORKER_RESULT_FD=str(result_fd),
               IRSCOPE_FRONT_END_PID=str(os.getpid()), PYTHONUNBUFFERED="1")
    fds = (result_fd,)
    if request_fd is not None:
        env["IRSCOPE_WORKER_REQUEST_FD"] = str(request_fd)
        fds += (request_fd,)
    return subprocess.Popen([sys.executable, "-m", "irscope.worker", *argv], stdin=subprocess.DEVNULL,
                            stdout=output, stderr=output, pass_fds=fds, start_new_session=True,
                            close_fds=True, env=env)


def stop(proc: subprocess.Popen, grace: float = 1.0) -> None:
    """End the worker and everything in its process group (ptxas, nvdisasm); its own handler stops its
    compile children and removes their files first."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_command(argv: list[str], shown_file: str) -> int:
    """Run one `dump` / `report` / `step` in a worker and print its answer; the exit code is the command's."""
    tmp = tempfile.mkdtemp(prefix="irscope-")
    read_fd, write_fd = os.pipe()
    previous = {signum: signal.getsignal(signum) for signum in _FORWARDED}

    def stopped(signum, _frame):
        raise _Stopped(signum)

    proc = None
    try:
        for signum in _FORWARDED:
            signal.signal(signum, stopped)
        with open(os.path.join(tmp, "file-output"), "wb") as output:
            proc = start(argv, tmp, write_fd, output)
        os.close(write_fd)
        write_fd = -1
        answer = protocol.receive(read_fd)
        proc.wait()
        if answer is None:
            return _report_death(proc.returncode, shown_file, _output_tail(tmp))
        sys.stdout.write(safe_text(answer["out"]))
        sys.stdout.flush()
        sys.stderr.write(safe_text(answer["err"]))
        return int(answer["code"])
    except _Stopped as stop_signal:
        return 128 + stop_signal.signum
    finally:
        if proc is not None:
            stop(proc)
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        shutil.rmtree(tmp, ignore_errors=True)


def _output_tail(tmp: str) -> list[str]:
    try:
        with open(os.path.join(tmp, "file-output"), "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 8192))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    return text.splitlines()[-_TAIL_LINES:]


def _report_death(code: int, shown_file: str, tail: list[str]) -> int:
    """The worker ended without answering: say how, in one line, with the end of the file's output."""
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else f"signal {-code}"
        what = f"was killed by {name}" + (" (out of memory?)" if name == "SIGKILL" else "")
        status = 128 - code
    else:
        what = f"ended the process with exit status {code} (os._exit?)"
        status = code or 1
    print(f"irscope: error: {safe_text(shown_file)} {what} before irscope could finish; "
          f"run it with python to see why", file=sys.stderr)
    for line in tail:
        print(f"  file output | {safe_text(line)}", file=sys.stderr)
    return status
