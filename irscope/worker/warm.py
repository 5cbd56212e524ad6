"""The front end's side of the warm worker: a process that has loaded torch, Triton and irscope's engine once
and forks the worker for each file opened from that state (worker/warm_server.py is its side).

Opening a file again (`r`, an edit) then pays for the file's own run and its compiles, not for a new
process's `import torch, triton` (1.7-2.0 s of a 2.0-2.4 s reopen on a 2-core machine). Each worker is a
fork of the warm process as it stood after its imports, before any file ran: nothing of an earlier file's
run reaches a later one. What differs from one start to the next is handed over with it: the arguments,
the environment, the working folder, and the worker's pipes and output (file descriptors, over a Unix
socket). The warm process reports each worker's exit status, so that the front end waits for a worker as
for its own child.

Linux only (descriptor passing, PR_SET_PDEATHSIG). Where the warm process cannot start or has ended, the
caller starts a fresh process instead (client.start), so a worker always comes.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

_MESSAGE_BYTES = 1 << 20


class WarmUnavailable(Exception):
    """The warm process cannot start a worker (it could not start, or it has ended)."""


class WarmProcess:
    """A worker forked by the warm process, waited for like a `subprocess.Popen`: `pid`, `poll`, `wait`,
    `returncode` (negative: the signal that ended it)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._ended = threading.Event()

    def _exited(self, code: int) -> None:
        self.returncode = code
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
        return self.returncode  # type: ignore[return-value]


class WarmStarter:
    """One warm process and the workers it forked. `start` blocks until the warm process has finished its
    imports (the first time) and forked the worker."""

    def __init__(self, yield_to_screen: bool, shared: str | None = None) -> None:
        """A warm process of this process's own, or, with `shared`, the one listening at that path
        (`python -m irscope.worker --warm-listen PATH`, named by IRSCOPE_WARM_SOCKET)."""
        self.process: subprocess.Popen | None = None
        if shared is not None:
            ours = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                ours.connect(shared)
            except OSError:
                ours.close()
                raise
        else:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            argv = ["--warm", str(theirs.fileno())] + (["--nice"] if yield_to_screen else [])
            try:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "irscope.worker", *argv],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    pass_fds=(theirs.fileno(),),
                    start_new_session=True,
                    env=dict(
                        os.environ, PYTHONUNBUFFERED="1", IRSCOPE_FRONT_END_PID=str(os.getpid())
                    ),
                )
            finally:
                theirs.close()
        self._socket = ours
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._forks: dict[
            int, tuple[threading.Event, dict]
        ] = {}  # request id -> (answered, answer)
        self._workers: dict[int, WarmProcess] = {}  # pid -> the worker, until its exit is reported
        self._early_exits: dict[
            int, int
        ] = {}  # pid -> exit code reported before the fork's answer was read
        self.ended = False
        threading.Thread(target=self._read, daemon=True, name="irscope-warm-reader").start()

    def start(
        self, argv: list[str], env: dict[str, str], cwd: str, output: int, fds: dict[str, int]
    ) -> WarmProcess:
        """Fork a worker running `python -m irscope.worker ARGV` in `cwd` with `env`, its output (stdout and
        stderr) written to descriptor `output`; each of `fds` (an environment variable's name -> one of this
        process's descriptors) is passed on, and the variable names the worker's copy."""
        names = list(fds)
        message = {"argv": argv, "env": env, "cwd": cwd, "fds": names}
        with self._lock:
            if self.ended:
                raise WarmUnavailable("the warm process has ended")
            rid = next(self._ids)
            answered: tuple[threading.Event, dict] = (threading.Event(), {})
            self._forks[rid] = answered
        message["id"] = rid
        try:
            with self._send_lock:
                socket.send_fds(
                    self._socket, [json.dumps(message).encode()], [output, *fds.values()]
                )
        except OSError as exc:
            with self._lock:
                self._forks.pop(rid, None)
            raise WarmUnavailable(f"the warm process is gone ({exc})") from exc
        event, answer = answered
        event.wait()
        if "pid" not in answer:
            raise WarmUnavailable(answer.get("error", "the warm process ended"))
        return self._workers_entry(answer["pid"])

    def _workers_entry(self, pid: int) -> WarmProcess:
        with self._lock:
            worker = self._workers.setdefault(pid, WarmProcess(pid))
            early = self._early_exits.pop(pid, None)
        if early is not None:
            worker._exited(early)
            with self._lock:
                self._workers.pop(pid, None)
        return worker

    def _read(self) -> None:
        while True:
            try:
                data = self._socket.recv(_MESSAGE_BYTES)
            except OSError:
                data = b""
            if not data:
                break
            message = json.loads(data)
            if "exited" in message:
                with self._lock:
                    worker = self._workers.pop(message["exited"], None)
                    if worker is None:
                        self._early_exits[message["exited"]] = message["code"]
                if worker is not None:
                    worker._exited(message["code"])
                continue
            with self._lock:
                event, answer = self._forks.pop(message["id"], (None, None))
            if event is not None:
                answer.update(message)
                event.set()
        self._ended()

    def _ended(self) -> None:
        """The warm process is gone: the forks still waited for fail, and each worker it left is waited for by
        watching its pid (it was sent SIGTERM when its parent, the warm process, died: PR_SET_PDEATHSIG)."""
        with self._lock:
            self.ended = True
            forks, self._forks = list(self._forks.values()), {}
            workers, self._workers = list(self._workers.values()), {}
        for event, answer in forks:
            answer["error"] = "the warm process ended"
            event.set()
        for worker in workers:
            threading.Thread(target=_watch, args=(worker,), daemon=True).start()


def _watch(worker: WarmProcess) -> None:
    while True:
        try:
            os.kill(worker.pid, 0)
        except (ProcessLookupError, PermissionError):  # gone (or its pid someone else's by now)
            worker._exited(-signal.SIGTERM)
            return
        time.sleep(0.05)
