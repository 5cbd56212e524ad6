"""The worker process: `python -m irscope.worker COMMAND ARGS...`, started by a front end (client.py)."""

from __future__ import annotations

import io
import os
import select
import shutil
import signal
import sys
import threading
import traceback

from irscope.base import progress
from irscope.base.lifetime import die_with_parent
from irscope.worker import protocol
from irscope.worker.warm_server import NICENESS, serve

_SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_before: dict[int, object] = {}  # each of those signals' handler before main() set _shutdown
_worker_pid = 0


def _shutdown(signum, frame) -> None:
    """Asked to stop, or the front end died: tell the compile children to stop (they clean up and end by
    themselves; waiting for them kept the front end waiting), remove the temporary folder, and end the
    whole process group (ptxas, nvdisasm, this process).

    A process forked from the worker inherits this handler: the file's own (a `multiprocessing.Pool`, whose
    `with` block ends with SIGTERM to each of its processes), or one of irscope's before it sets its own. It
    must not remove the worker's folder nor end the worker's group (a pool's end killed the whole worker):
    the signal does there what it would do without irscope."""
    if os.getpid() != _worker_pid:
        handler = _before.get(signum, signal.SIG_DFL)
        signal.signal(signum, handler)
        if callable(handler):
            handler(signum, frame)
        elif handler == signal.SIG_DFL:
            os.kill(os.getpid(), signum)
        return
    ahead = sys.modules.get("irscope.engine.compile.ahead")
    if ahead is not None:
        try:
            ahead.ask_all_to_stop()
        except Exception:  # noqa: BLE001 - on the way out; the group kill below still happens
            pass
    tmp = os.environ.get("IRSCOPE_WORKER_TMP")
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> None:
    result_fd = int(os.environ.pop("IRSCOPE_WORKER_RESULT_FD"))
    front_end = int(os.environ.pop("IRSCOPE_FRONT_END_PID"))
    global _worker_pid
    _worker_pid = os.getpid()
    for signum in _SHUTDOWN_SIGNALS:
        _before[signum] = signal.signal(signum, _shutdown)
    die_with_parent(front_end)
    _end_with_the_front_end(result_fd)
    if argv[:1] == ["--serve"]:  # `--serve FILE`: the TUI's worker (the file named for `ps`)
        _yield_to_the_screen()
        serve_forever(int(os.environ.pop("IRSCOPE_WORKER_REQUEST_FD")), result_fd)
    me = os.getpid()
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err  # irscope's own words; the user's file writes to fds 1 and 2
    code = 70
    progress.sink = lambda text: protocol.send(result_fd, {"progress": text})
    try:
        # deferred: the command loads torch and Triton; irscope's own output is captured first
        from irscope.commands.run import execute

        code = execute(argv)
    except Exception:  # noqa: BLE001 - IRSCOPE_DEBUG=1 lets irscope's own error out: its traceback is the answer
        traceback.print_exc()  # into `err`, which the front end prints (this process ends with os._exit)
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        if os.getpid() == me:  # not a fork the user's file made
            protocol.send(result_fd, {"out": out.getvalue(), "err": err.getvalue(), "code": code})
            ahead = sys.modules.get("irscope.engine.compile.ahead")
            if ahead is not None:
                ahead.stop_all()
        sys.__stdout__.flush()
        # Threads the file started, atexit hooks it registered: none of them may keep the worker alive.
        os._exit(code if os.getpid() == me else 0)


def _end_with_the_front_end(result_fd: int) -> None:
    """End when the front end is gone, however it went: the pipe it reads answers from closes, and the pipe's
    writing end here reports an error. A fresh worker has PR_SET_PDEATHSIG for that too; a fork of a shared
    warm process (IRSCOPE_WARM_SOCKET) is that process's child, not the front end's, and has only this."""

    def watch() -> None:
        poller = select.poll()
        poller.register(result_fd, 0)  # an error or a hang-up is reported whatever is asked for
        while True:
            events = 0
            for _, reported in poller.poll():
                events |= reported
            if events & select.POLLNVAL:  # the file closed the descriptor: nothing left to watch
                return
            if events & (select.POLLERR | select.POLLHUP):
                _shutdown(signal.SIGTERM, None)

    threading.Thread(target=watch, daemon=True, name="irscope-front-end-watch").start()


def _yield_to_the_screen() -> None:
    """The TUI's worker runs at a lower priority than the TUI: on a machine with few cores a compile or
    the user's file took the CPU from the screen, and cursor moves made during a compile waited. The
    worker still gets every cycle the screen does not want."""
    try:
        os.nice(max(0, NICENESS - os.nice(0)))  # (a fork of the warm process is there already)
    except OSError:  # not allowed here: only slower moves while it works
        pass


def serve_forever(request_fd: int, result_fd: int) -> None:
    """The TUI's worker: answer requests until the front end closes its pipe (or dies), then end."""
    import queue

    # deferred: the engine (torch, Triton) loads once the worker has yielded to the screen's first paint
    from irscope.worker.serve import Server, error_reply

    server, lock, me = Server(), threading.Lock(), os.getpid()

    def answer(message: dict) -> None:
        rid = message["id"]

        def progress(text: str, fraction: float) -> None:
            if os.getpid() == me:
                protocol.send_object(result_fd, {"id": rid, "progress": (text, fraction)}, lock)

        try:
            reply = {"id": rid, "value": server.handle(message["op"], message["args"], progress)}
        except BaseException as exc:  # noqa: BLE001 - every failure is an answer the front end shows
            reply = {"id": rid, **error_reply(exc)}
        # a fork the user's file made, returning through irscope: it must not answer
        if os.getpid() != me:
            os._exit(0)
        try:
            protocol.send_object(result_fd, reply, lock)
        except Exception as exc:  # noqa: BLE001 - an answer that cannot be sent is an error to send instead
            protocol.send_object(result_fd, {"id": rid, **error_reply(exc)}, lock)

    def read() -> None:
        while True:
            message = protocol.receive_object(request_fd, trusted=True)
            if message is None or message["op"] == "open":
                on_main.put(message)
                if message is None:
                    return
            else:
                threading.Thread(
                    target=answer, args=(message,), daemon=True, name=f"irscope-{message['op']}"
                ).start()

    # The file runs on the main thread: the compile children it starts die with the thread that started
    # them (PR_SET_PDEATHSIG), and signal.signal() in the file works as under python.
    on_main: queue.Queue = queue.Queue()
    threading.Thread(target=read, daemon=True, name="irscope-requests").start()
    while (message := on_main.get()) is not None:
        answer(message)
    _shutdown(signal.SIGTERM, None)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--warm"]:  # the warm process: it forks workers that each run `main`
        serve(int(sys.argv[2]), "--nice" in sys.argv[3:], main)
    # one shared by every front end given IRSCOPE_WARM_SOCKET
    if sys.argv[1:2] == ["--warm-listen"]:
        serve(None, False, main, listen_path=sys.argv[2])
    main(sys.argv[1:])
