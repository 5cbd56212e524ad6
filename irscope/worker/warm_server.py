"""The warm process (`python -m irscope.worker --warm FD`): it loads what every worker loads (torch, Triton,
irscope's engine) once, then forks a worker for each start the front end asks for (worker/warm.py).

It stays single-threaded, so that a fork copies a consistent process: it waits in `select` for a request or
for a child's exit (SIGCHLD, through a wake-up pipe), forks, and reports each child's exit status. Before
it loads anything it lowers its priority when the TUI asked (the screen paints first); it ends when the
front end closes its socket or dies (PR_SET_PDEATHSIG), and its workers, whose parent it is, end with it.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import tempfile
from typing import Callable

from irscope.base.lifetime import die_with_parent

_MESSAGE_BYTES = 1 << 20
_MAX_FDS = 8
NICENESS = 10  # a worker's priority below the screen's (worker/__main__.py keeps it there)


def serve(socket_fd: int, nice: bool, worker_main: Callable[[list[str]], None]) -> None:
    die_with_parent(int(os.environ.pop("IRSCOPE_FRONT_END_PID")))
    channel = socket.socket(fileno=socket_fd)
    try:
        if nice:  # the TUI's: its imports yield to the screen, and its forks stay below it
            os.nice(NICENESS)
    except OSError:  # not allowed here: the screen competes with the imports
        pass
    # deferred: the imports every worker makes (a command's body, the TUI's server), made once here: each
    # fork starts with them done
    import irscope.commands.run  # noqa: F401
    import irscope.worker.serve  # noqa: F401

    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake select through the pipe
    while True:
        ready, _, _ = select.select([channel, wake_read], [], [])
        if wake_read in ready:
            while _drained(wake_read):
                pass
        _report_exits(channel)
        if channel not in ready:
            continue
        try:
            data, fds, _flags, _address = socket.recv_fds(channel, _MESSAGE_BYTES, _MAX_FDS)
        except OSError:
            data, fds = b"", []
        if not data:
            break  # the front end closed its side
        request = json.loads(data)
        pid = os.fork()
        if pid == 0:
            _become_worker(request, fds, (channel.fileno(), wake_read, wake_write), worker_main)
        for fd in fds:
            os.close(fd)
        _send(channel, {"id": request["id"], "pid": pid})
    os._exit(0)


def _drained(fd: int) -> bool:
    try:
        return bool(os.read(fd, 512))
    except BlockingIOError:
        return False


def _report_exits(channel: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send(channel, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def _send(channel: socket.socket, message: dict) -> None:
    try:
        channel.send(json.dumps(message).encode())
    except OSError:  # the front end is gone; the loop ends at its next read
        pass


def _become_worker(
    request: dict,
    fds: list[int],
    servers: tuple[int, ...],
    worker_main: Callable[[list[str]], None],
) -> None:
    """In the fork: the worker `python -m irscope.worker ARGV` would have been, started where and as the front
    end asked. Never returns."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in servers:
            os.close(fd)
        os.setsid()
        output, passed = fds[0], fds[1:]
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        for fd in (null, output):
            if fd > 2:
                os.close(fd)
        env = dict(request["env"])
        for name, fd in zip(request["fds"], passed, strict=True):
            env[name] = str(fd)
        env["IRSCOPE_FRONT_END_PID"] = str(os.getppid())  # it ends with the warm process
        os.environ.clear()
        os.environ.update(env)
        os.chdir(request["cwd"])
        sys.path[0] = request["cwd"]  # as `python -m` puts the working folder first
        tempfile.tempdir = (
            None  # the worker's own TMPDIR, not the one the warm process's imports saw
        )
        sys.argv = [sys.argv[0], *request["argv"]]
        worker_main(request["argv"])
    finally:
        os._exit(70)
