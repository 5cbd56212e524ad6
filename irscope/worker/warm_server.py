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


def serve(
    socket_fd: int | None,
    nice: bool,
    worker_main: Callable[[list[str]], None],
    listen_path: str | None = None,
) -> None:
    """Fork a worker for each request on the front end's socket (`socket_fd`), or, with `listen_path`, on
    every connection made to a Unix socket there: one warm process shared by every front end started with
    IRSCOPE_WARM_SOCKET naming it (a test suite's, a CI job's many commands). Each worker's exit is reported
    on the connection that asked for it."""
    die_with_parent(int(os.environ.pop("IRSCOPE_FRONT_END_PID")))
    listener: socket.socket | None = None
    channels: list[socket.socket] = []
    if listen_path is not None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(listen_path)
        listener.listen(64)
    else:
        channels.append(socket.socket(fileno=socket_fd))
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
    owners: dict[int, socket.socket] = {}  # a worker's pid -> the connection that asked for it
    while True:
        waited = [*channels, wake_read, *([listener] if listener is not None else [])]
        ready, _, _ = select.select(waited, [], [])
        if wake_read in ready:
            while _drained(wake_read):
                pass
        _report_exits(owners)
        if listener is not None and listener in ready:
            channels.append(listener.accept()[0])
        for channel in [c for c in channels if c in ready]:
            try:
                data, fds, _flags, _address = socket.recv_fds(channel, _MESSAGE_BYTES, _MAX_FDS)
            except OSError:
                data, fds = b"", []
            if not data:  # that front end closed its side
                channels.remove(channel)
                channel.close()
                if listener is None:
                    os._exit(0)
                continue
            request = json.loads(data)
            pid = os.fork()
            if pid == 0:
                servers = [wake_read, wake_write, *(c.fileno() for c in channels)]
                if listener is not None:
                    servers.append(listener.fileno())
                _become_worker(request, fds, tuple(servers), worker_main)
            owners[pid] = channel
            for fd in fds:
                os.close(fd)
            _send(channel, {"id": request["id"], "pid": pid})


def _drained(fd: int) -> bool:
    try:
        return bool(os.read(fd, 512))
    except BlockingIOError:
        return False


def _report_exits(owners: dict[int, socket.socket]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        channel = owners.pop(pid, None)
        if channel is not None and channel.fileno() >= 0:  # not closed since
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
        # then PYTHONPATH's folders, which a front end started elsewhere (a shared warm process) may set
        extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in sys.path]
        sys.path[1:1] = extra
        tempfile.tempdir = (
            None  # the worker's own TMPDIR, not the one the warm process's imports saw
        )
        sys.argv = [sys.argv[0], *request["argv"]]
        worker_main(request["argv"])
    finally:
        os._exit(70)
