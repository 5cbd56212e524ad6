"""The TUI on its worker process: the UI process never loads torch or Triton, and stopping it leaves no
process and no temporary file behind (the real `irscope` binary, in a pseudo-terminal)."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import ROOT, fixture_path, kernel_path

_EVERY_VIEW = textwrap.dedent("""
    import asyncio, sys
    sys.path.insert(0, {tests!r})
    from tui_helpers import wait_until_shown
    from irscope.tui.app import IrscopeApp

    async def main():
        app = IrscopeApp({path!r}, target="sm_90")
        async with app.run_test(size=(160, 50)) as pilot:
            await wait_until_shown(app, pilot)
            await pilot.pause(1.0)          # the warm imports' thread has had its time
            print("shown with", sorted(m for m in ("torch", "triton", "numpy") if m in sys.modules))
            from irscope.tui.stepper import StepperScreen
            from stepper_harness import wait_recorded
            for _ in range(4):              # every info panel in turn: memory, coalescing, explain, ...
                await pilot.press("i")
                await pilot.pause(0.3)
                await app.workers.wait_for_complete()
            await pilot.press("f", "enter") # the findings, from the worker, and the jump to one
            await pilot.pause(0.3)
            await pilot.press("escape")
            await pilot.press("t")          # another target, compiled by the worker
            await pilot.pause()
            await pilot.press("escape")
            await pilot.press("ctrl+t")     # the stepper: the worker records the program
            screen = await wait_recorded(pilot)
            assert isinstance(screen, StepperScreen) and screen.stepper is not None, screen
            print("shown", app.main.shown.comp.kernel.name, app.main.shown.comp.resources.registers)
            print("loaded", sorted(m for m in ("torch", "triton") if m in sys.modules))
    asyncio.run(main())
""")


def test_the_tui_process_never_imports_torch_nor_triton_and_numpy_only_when_a_panel_needs_it():
    script = _EVERY_VIEW.format(tests=os.path.join(ROOT, "tests"), path=kernel_path("add.py"))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert any(
        line.startswith("shown add_kernel ") and line.split()[-1].isdigit() for line in lines
    ), lines
    assert "loaded []" in lines, lines
    assert "shown with []" in lines, lines  # NumPy (12 MB) comes with the first panel that needs it


def _processes_of(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -ww" not in line]


def _read_until(fd: int, needle: bytes, seconds: float) -> bytes:
    seen, deadline = b"", time.monotonic() + seconds
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL, signal.SIGHUP])
def test_stopping_the_tui_leaves_no_process_and_no_temporary_file(tmp_path, signum):
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    # a path of its own: the worker names it in its arguments
    kernel_file = tmp_path / "runs_forever.py"
    kernel_file.write_text(open(fixture_path("runs_forever.py")).read())
    env = {
        **os.environ,
        "TMPDIR": str(private_tmp),
        "IRSCOPE_CAPTURE_QUIET": "600",
        "TERM": "xterm-256color",
        "TRITON_CACHE_DIR": str(tmp_path / "cache"),
    }
    controller, terminal = pty.openpty()
    front = subprocess.Popen(
        [sys.executable, "-m", "irscope", str(kernel_file)],
        cwd=ROOT,
        env=env,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        start_new_session=True,
    )
    os.close(terminal)
    try:
        # the file runs forever in the worker
        seen = _read_until(controller, b"captured 1 launch", 90)
        assert b"captured 1 launch" in seen, seen[-2000:]
        assert _processes_of(str(kernel_file)), "no worker runs the file"
        front.send_signal(signum)
        front.wait(timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (
            _processes_of(str(kernel_file)) or os.listdir(private_tmp)
        ):
            time.sleep(0.1)
        assert _processes_of(str(kernel_file)) == []
        assert os.listdir(private_tmp) == []
    finally:
        if front.poll() is None:
            front.kill()
        os.close(controller)


def test_escapes_and_brackets_from_a_file_never_reach_the_terminal_and_never_crash_the_tui(
    tmp_path,
):
    """The kernel's source and the error the file raises carry an OSC title sequence; the message has
    `[M=64, N=32]` and `x[i]`. The real binary shows the failure, keeps running, and `q` ends it."""
    controller, terminal = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    front = subprocess.Popen(
        [sys.executable, "-m", "irscope", fixture_path("escapes.py")],
        cwd=ROOT,
        env=env,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        start_new_session=True,
    )
    os.close(terminal)
    try:
        seen = _read_until(controller, b"ValueError", 120)
        assert b"ValueError" in seen, seen[-2000:]
        seen += _read_until(controller, b"never comes", 2)  # let it paint the panes
        assert front.poll() is None, "the TUI died on the message"
        os.write(controller, b"q")
        seen += _read_until(controller, b"never comes", 1)
        assert front.wait(timeout=20) == 0
        assert b"pwned-title" in seen  # the text is on screen, written out ...
        assert b"\x1b]0;pwned-title" not in seen and b"\x1b[2J" not in seen  # ... and never obeyed
    finally:
        if front.poll() is None:
            front.kill()
        os.close(controller)


def test_an_answer_can_carry_only_irscope_data_numpy_and_builtins():
    import pickle

    import numpy as np

    from irscope.base.target import Target
    from irscope.worker import protocol

    plain = {"target": Target("sm_90"), "offsets": np.arange(4), "names": ["x"]}
    back = protocol.loads(pickle.dumps(plain))
    assert back["target"] == Target("sm_90") and back["offsets"].tolist() == [0, 1, 2, 3]
    for foreign in (os.system, subprocess.Popen, eval):
        with pytest.raises(pickle.UnpicklingError):
            protocol.loads(pickle.dumps(foreign))


def test_an_answer_the_front_end_may_not_read_fails_its_own_request_and_no_other():
    """An answer holding a class outside the allow-list (an engine object, say) still says which request it
    answers: that request fails with one line instead of waiting forever, and the pipe goes on."""
    from irscope.engine.overrides import Overrides
    from irscope.worker import protocol

    read_end, write_end = os.pipe()
    try:
        protocol.send_object(write_end, {"id": 7, "value": Overrides.parse(["BLOCK=64"], [])})
        protocol.send_object(write_end, {"id": 8, "value": [1, 2]})
        with pytest.raises(protocol.UnreadableAnswer) as failed:
            protocol.receive_object(read_end)
        assert failed.value.request_id == 7
        assert "unreadable answer" in str(failed.value) and "irscope.engine" in str(failed.value)
        assert protocol.receive_object(read_end) == {"id": 8, "value": [1, 2]}
        protocol.send_object(write_end, {"op": "open", "id": 9})
        assert protocol.receive_object(read_end, trusted=True) == {"op": "open", "id": 9}
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_file_that_ends_its_worker_is_one_line_with_its_last_output_written_out():
    from irscope.worker.remote import WorkerGone, open_session

    session = open_session(fixture_path("exits_hard.py"))
    try:
        with pytest.raises(WorkerGone) as caught:
            session.request(
                "open",
                path=fixture_path("exits_hard.py"),
                target="sm_90",
                run_main=True,
                defines=[],
                arg_types=[],
                kernel=None,
                config=None,
            )
    finally:
        session.close()
    message = str(caught.value)
    assert "exits_hard.py ended the process with exit status" in message and "\n" not in message
    assert "\\x1b]52" in message and "\x1b" not in message


def test_scrubbing_an_answer_keeps_its_types_and_numbers():
    from collections import Counter, namedtuple

    from irscope.base.textsafe import scrub

    Pair = namedtuple("Pair", "a b")
    answer = {
        "strides": Counter({128: 31, 4: 1}),
        "pair": Pair("x\x1b[2J", 2),
        "names": ["ok", "\x07bell"],
    }
    scrub(answer)
    assert answer["strides"] == Counter({128: 31, 4: 1}) and answer["strides"].most_common(1) == [
        (128, 31)
    ]
    assert answer["pair"] == Pair("x\\x1b[2J", 2) and answer["names"] == ["ok", "\\x07bell"]


def test_closing_a_session_fails_the_request_that_waits_on_the_file(tmp_path):
    """`q` while the file still runs: the request waiting on the file's run must fail at once, or the
    thread that made it keeps the app from exiting. The file forks a process of its own session (as a
    compile child or a data loader would), which outlives the worker and holds its answer pipe open."""
    import threading

    from irscope.worker.remote import WorkerGone, open_session

    marker = tmp_path / "running"
    script = tmp_path / "still_running.py"
    script.write_text(
        textwrap.dedent(f"""
        import os, time
        if __name__ == '__main__':
            if os.fork() == 0:
                os.setsid()
                with open({str(marker)!r}, 'w') as f:
                    f.write(str(os.getpid()))
                time.sleep(60)
                os._exit(0)
            time.sleep(600)
        """)
    )
    session = open_session(str(script))
    outcome = []

    def ask():
        try:
            session.request(
                "open",
                path=str(script),
                target="sm_90",
                run_main=True,
                defines=[],
                arg_types=[],
                kernel=None,
                config=None,
            )
            outcome.append("answered")
        except WorkerGone as exc:
            outcome.append(exc)

    asker = threading.Thread(target=ask, daemon=True)
    asker.start()
    try:
        deadline = time.monotonic() + 120
        while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the file never started"
    finally:
        session.close()
    try:
        asker.join(timeout=30)
    finally:
        os.kill(int(marker.read_text()), signal.SIGKILL)
    assert not asker.is_alive(), "the request still waits after the session was closed"
    assert len(outcome) == 1 and isinstance(outcome[0], WorkerGone)
    session.close()  # a second close is harmless


def test_the_tui_gives_the_file_its_arguments():
    """`irscope FILE -- ARGS`: the app's `open` request carries them to its worker, which runs the file with them."""
    from tui_helpers import run_async, wait_until_shown

    from irscope.tui.app import IrscopeApp

    async def opened(file_args):
        app = IrscopeApp(fixture_path("needs_mode.py"), target="sm_90", file_args=file_args)
        async with app.run_test(size=(160, 50)) as pilot:
            await wait_until_shown(app, pilot)
            failure, shown = app.main.failure, app.main.shown
            return failure.message if failure else None, shown.comp.constexprs if shown else None

    assert run_async(opened)(["--mode", "y"]) == (None, {"BLOCK": 256})
    message, _ = run_async(opened)([])
    assert "required: --mode" in message and "-- ARGS" in message
