"""The TUI's connection to its worker: one worker per opened file, requests answered by id.

`request` blocks the calling thread (a Textual thread worker) until its answer comes; progress messages
reach the callback it gave. Any number of threads may wait at once. When the worker dies, every waiting
request fails with one line saying how, and the end of the file's output.

"""

from __future__ import annotations

import itertools
import os
import queue
import shutil
import tempfile
import threading
from typing import Any, Callable

from irscope.base import errors
from irscope.base.textsafe import safe_text
from irscope.worker import protocol
from irscope.worker.client import keep_warm, start, stop, worker_output_tail
from irscope.worker.views import CompilationView

Progress = Callable[[str, float], None]


def _spawn(make: Callable[[], Any]) -> Any:
    """Run `make` (it starts the worker) on one long-lived thread: the worker dies with the thread that
    started it (PR_SET_PDEATHSIG follows the parent *thread*), and a TUI's thread workers end at once."""
    global _spawner
    with _spawn_lock:
        if _spawner is None:
            _spawner = queue.Queue()
            threading.Thread(
                target=_spawn_loop, args=(_spawner,), daemon=True, name="irscope-spawner"
            ).start()
        box: queue.Queue = queue.Queue()
        _spawner.put((make, box))
    ok, value = box.get()
    if not ok:
        raise value
    return value


def _spawn_loop(jobs: queue.Queue) -> None:
    while True:
        make, box = jobs.get()
        try:
            box.put((True, make()))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box.put((False, exc))


_spawner: queue.Queue | None = None
_spawn_lock = threading.Lock()


class WorkerGone(errors.IrscopeError):
    """The worker ended before it answered."""


def rebuild_error(reply: dict) -> BaseException:
    cls = getattr(errors, reply.get("error") or "", None)
    if not (isinstance(cls, type) and issubclass(cls, errors.IrscopeError)):
        exc: BaseException = errors.IrscopeError(
            f"internal error in the worker: {reply['message']}"
        )
        exc.detail = reply.get("detail", "")  # type: ignore[attr-defined]
        return exc
    exc = cls.__new__(cls)
    Exception.__init__(exc, reply["message"])
    exc.__dict__.update(reply.get("fields", {}))
    return exc


class _Pending:
    def __init__(self, progress: Progress | None) -> None:
        self.done = threading.Event()
        self.reply: dict | None = None
        self.progress = progress


class Session:
    """A worker process serving one opened file."""

    def __init__(self, shown_file: str) -> None:
        self.shown_file = shown_file
        self.tmp = tempfile.mkdtemp(prefix="irscope-")
        self._ids = itertools.count()
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._closed = False
        request_read, self._request_fd = os.pipe()
        self._result_fd, result_write = os.pipe()
        try:
            with open(os.path.join(self.tmp, "file-output"), "wb") as output:
                self.proc = _spawn(
                    lambda: start(
                        ["--serve", shown_file],
                        self.tmp,
                        result_write,
                        output,
                        request_fd=request_read,
                    )
                )
        finally:
            os.close(request_read)
            os.close(result_write)
        self._reader = threading.Thread(
            target=self._read, daemon=True, name="irscope-worker-reader"
        )
        self._reader.start()

    def request(self, op: str, progress: Progress | None = None, **args: Any) -> Any:
        rid = next(self._ids)
        pending = _Pending(progress)
        with self._lock:
            if self._closed:
                raise WorkerGone(self._death())
            self._pending[rid] = pending
        try:
            protocol.send_object(
                self._request_fd, {"id": rid, "op": op, "args": args}, self._send_lock
            )
        except OSError:
            pass  # the worker is gone: the reader says how
        pending.done.wait()
        reply = pending.reply or {"error": "WorkerGone", "message": self._death()}
        if "error" in reply:
            raise (
                rebuild_error(reply)
                if reply["error"] != "WorkerGone"
                else WorkerGone(reply["message"])
            )
        return _attach(reply["value"], self.call)

    def call(self, name: str, key: int, *args: Any) -> Any:
        return self.request("call", name=name, key=key, args=args)

    def _read(self) -> None:
        while True:
            try:
                message = protocol.receive_object(self._result_fd)
            # that request fails with one line; the others go on
            except protocol.UnreadableAnswer as exc:
                message = {"id": exc.request_id, "error": "", "message": str(exc)}
            except OSError:  # the pipe broke: the worker is gone
                message = None
            if message is None:
                break
            with self._lock:
                pending = self._pending.get(message.get("id"))
            if pending is None:
                continue
            if "progress" in message:
                if pending.progress is not None:
                    pending.progress(*message["progress"])
                continue
            with self._lock:
                self._pending.pop(message["id"], None)
            pending.reply = message
            pending.done.set()
        self.proc.wait()
        self._release_waiting()
        try:
            os.close(self._result_fd)  # closed here, by the one thread that reads it
        except OSError:
            pass

    def _release_waiting(self) -> None:
        """Every request still waiting fails (its reply stays None: WorkerGone, saying how)."""
        with self._lock:
            self._closed = True
            waiting, self._pending = list(self._pending.values()), {}
        for pending in waiting:
            pending.done.set()

    def _death(self) -> str:
        code = self.proc.poll()
        if code is None:
            return f"the worker for {self.shown_file} stopped answering"
        how = (
            f"was killed by signal {-code}"
            if code < 0
            else f"ended the process with exit status {code} (os._exit?)"
        )
        tail = safe_text(" | ".join(worker_output_tail(self.tmp)[-3:]))
        return f"{self.shown_file} {how} before irscope could finish" + (
            f"; its last output: {tail}" if tail else ""
        )

    def output_tail(self) -> list[str]:
        return worker_output_tail(self.tmp)

    def close(self) -> None:
        """Stop the worker and everything it started; remove its files. Requests still waiting fail at
        once: a thread left waiting kept the app from exiting (asyncio joins its executor's threads).
        The answer pipe is left to the reader thread, which is blocked reading it: closing it under that
        thread would let a later pipe reuse its number."""
        with self._lock:
            if self._request_fd < 0:
                return  # closed already: its descriptor's number may belong to something else by now
            self._closed = True
            request_fd, self._request_fd = self._request_fd, -1
        stop(self.proc, grace=0.5)
        self._release_waiting()
        try:
            os.close(request_fd)
        except OSError:
            pass
        shutil.rmtree(self.tmp, ignore_errors=True)


def _attach(value: Any, call: Callable[..., Any]) -> Any:
    """Connect every view in an answer to its worker, so that `view.call` reaches it; returns the answer."""
    if isinstance(value, CompilationView):
        value._call = call
    elif isinstance(value, (list, tuple)):
        for item in value:
            _attach(item, call)
    elif isinstance(getattr(value, "comp", None), CompilationView):  # a what-if's recompiled kernel
        value.comp._call = call
    return value


def open_session(shown_file: str) -> Session:
    """A worker for `shown_file`, forked from this process's warm process (started by the first session, on
    the long-lived thread, as the workers are: it must not die with a short thread). `IRSCOPE_WARM=0`: a
    fresh process for each."""
    _spawn(keep_warm)
    return Session(shown_file)
