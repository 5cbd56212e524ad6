"""The front end's side of a worker: start it, wait for its answer, print it, leave nothing behind.

Importable without torch or Triton: the command line process stays small and never runs user code."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from irscope.base.textsafe import safe_text
from irscope.worker import protocol
from irscope.worker.warm import WarmStarter, WarmUnavailable

_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_TAIL_LINES = 8
_live: set = set()  # workers of run_captured still running (several at once under `check --jobs`)
_live_lock = threading.Lock()


class _Stopped(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def start(
    argv: list[str], tmp: str, result_fd: int, output, request_fd: int | None = None
) -> subprocess.Popen:
    """The worker process for one command (or, with `request_fd`, a session): its own session, no stdin,
    its output into `output`."""
    env = dict(
        os.environ,
        TMPDIR=tmp,
        IRSCOPE_WORKER_TMP=tmp,
        IRSCOPE_WORKER_RESULT_FD=str(result_fd),
        IRSCOPE_FRONT_END_PID=str(os.getpid()),
        PYTHONUNBUFFERED="1",
    )
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", inductor_cache_dir())
    fds = (result_fd,)
    if request_fd is not None:
        env["IRSCOPE_WORKER_REQUEST_FD"] = str(request_fd)
        fds += (request_fd,)
    warm = _warm if _warm is not None and not _warm.ended else shared_warm()
    if warm is not None and not warm.ended and os.environ.get("IRSCOPE_WARM") != "0":
        passed = {name: int(env.pop(name)) for name in _PASSED_FDS if name in env}
        try:
            return warm.start(argv, env, os.getcwd(), output.fileno(), passed)
        except WarmUnavailable:  # a fresh process instead
            env.update((name, str(fd)) for name, fd in passed.items())
    return subprocess.Popen(
        [sys.executable, "-m", "irscope.worker", *argv],
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=output,
        pass_fds=fds,
        start_new_session=True,
        close_fds=True,
        env=env,
    )


_warm: WarmStarter | None = None
# the worker's pipes, named by these variables: a fork of the warm process gets them as descriptors
_PASSED_FDS = ("IRSCOPE_WORKER_RESULT_FD", "IRSCOPE_WORKER_REQUEST_FD")


_shared: WarmStarter | None = None


def shared_warm() -> WarmStarter | None:
    """The warm process IRSCOPE_WARM_SOCKET names (`python -m irscope.worker --warm-listen PATH`), shared by
    every front end started with it: a test suite's or a CI job's many commands fork their workers from one
    process that loaded torch and Triton once. None where it is not set or cannot be reached (a new process
    then)."""
    global _shared
    path = os.environ.get("IRSCOPE_WARM_SOCKET")
    if not path or os.environ.get("IRSCOPE_WARM") == "0":
        return None
    if _shared is None or _shared.ended:
        try:
            _shared = WarmStarter(False, shared=path)
        except OSError:
            _shared = None
    return _shared


def keep_warm(yield_to_screen: bool = True) -> None:
    """From now on, this process's workers fork from a warm process (worker/warm.py) that has loaded torch and
    Triton once: a file opened again, or another file, starts without those imports. Started at once, so
    that its imports run while the screen paints (`yield_to_screen`: at a lower priority, as the TUI's worker
    runs); it lives as long as this process, or until the thread that called this ends."""
    global _warm
    if os.environ.get("IRSCOPE_WARM") == "0":
        return
    if _warm is None or _warm.ended:
        try:
            _warm = WarmStarter(yield_to_screen)
        except OSError:  # no warm process here: every worker starts afresh
            _warm = None


def inductor_cache_dir() -> str:
    """Where Inductor keeps the kernel modules a file's run writes, as it would outside irscope: torch's
    default (`torchinductor_<user>` in the system's temporary folder). Under the worker's own TMPDIR, which
    is removed when the worker ends, every path to an Inductor kernel that a report shows led nowhere."""
    import getpass
    import re

    try:
        user = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        user = f"uid_{os.getuid()}"
    return os.path.join(
        tempfile.gettempdir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user)
    )


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
    previous = {signum: signal.getsignal(signum) for signum in _FORWARDED}

    def stopped(signum, _frame):
        raise _Stopped(signum)

    try:
        for signum in _FORWARDED:
            signal.signal(signum, stopped)
        code, out, err = run_captured(argv, shown_file)
        sys.stdout.write(out)
        sys.stdout.flush()
        sys.stderr.write(err)
        return code
    except _Stopped as stop_signal:
        return 128 + stop_signal.signum
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run_captured(argv: list[str], shown_file: str) -> tuple[int, str, str]:
    """Run one command in a worker and return (exit code, stdout, stderr) as the command would print them,
    control characters written out. A worker that dies without answering gives its one-line cause on
    stderr. Safe from any thread (`irscope check --jobs`); whatever stops the caller stops the worker."""
    tmp = tempfile.mkdtemp(prefix="irscope-")
    read_fd, write_fd = os.pipe()
    proc = None
    try:
        with open(os.path.join(tmp, "file-output"), "wb") as output:
            proc = start(argv, tmp, write_fd, output)
        with _live_lock:
            _live.add(proc)
        os.close(write_fd)
        write_fd = -1
        answer = protocol.receive(read_fd)
        # a step of a long command, said as it ends
        while answer is not None and "progress" in answer:
            sys.stderr.write(safe_text(answer["progress"]) + "\n")
            sys.stderr.flush()
            answer = protocol.receive(read_fd)
        proc.wait()
        if answer is None:
            code, lines = _death(proc.returncode, shown_file, worker_output_tail(tmp))
            return code, "", "".join(line + "\n" for line in lines)
        return int(answer["code"]), safe_text(answer["out"]), safe_text(answer["err"])
    finally:
        if proc is not None:
            stop(proc)
            with _live_lock:
                _live.discard(proc)
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)
        shutil.rmtree(tmp, ignore_errors=True)


def stop_all() -> None:
    """End every worker run_captured started that is still running (Ctrl+C in `check --jobs N`): each
    thread waiting on one then gets its answer (none) and cleans up after it."""
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        stop(proc, grace=0.2)


def worker_output_tail(tmp: str) -> list[str]:
    try:
        with open(os.path.join(tmp, "file-output"), "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 8192))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    return text.splitlines()[-_TAIL_LINES:]


def _death(code: int, shown_file: str, tail: list[str]) -> tuple[int, list[str]]:
    """The worker ended without answering: how, in one line, with the end of the file's output."""
    if code < 0:
        name = (
            signal.Signals(-code).name
            if -code in signal.Signals._value2member_map_
            else f"signal {-code}"
        )
        what = f"was killed by {name}" + (" (out of memory?)" if name == "SIGKILL" else "")
        status = 128 - code
    else:
        what = f"ended the process with exit status {code} (os._exit?)"
        status = code or 1
    lines = [
        f"irscope: error: {safe_text(shown_file)} {what} before irscope could finish; "
        f"run it with python to see why"
    ]
    lines += [f"  file output | {safe_text(line)}" for line in tail]
    return status, lines
