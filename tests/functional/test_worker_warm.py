"""The warm process (worker/warm.py): each worker of a session is a fork of one process that loaded torch and
Triton once, and each fork runs the file afresh, as a new process would: the file's and its modules' code as
they are now, the environment and working folder of the front end as they are now; and the warm process
ends with its front end."""

import os
import signal
import subprocess
import sys
import textwrap
import time

from conftest import ROOT

from irscope.worker import client, remote
from irscope.worker.warm import WarmProcess

KERNEL = textwrap.dedent(
    """
    import os

    import torch
    import triton
    import triton.language as tl

    from helper import SCALE


    @triton.jit
    def scale_kernel(x_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)


    if __name__ == "__main__":
        x = torch.ones(256, device="cuda")
        block = int(os.environ["WARM_TEST_BLOCK"]) * int(open("block_factor.txt").read())
        scale_kernel[(1,)](x, 256, FACTOR=SCALE, BLOCK=block)
    """
)


def _open(path: str) -> tuple[remote.Session, dict]:
    session = remote.open_session(path)
    _ws, comps = session.request(
        "open",
        None,
        path=path,
        target="sm_90",
        run_main=True,
        defines=[],
        arg_types=[],
        kernel=None,
        config=None,
        file_args=[],
    )
    (comp,) = comps
    return session, comp.constexprs


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def test_each_worker_is_a_fork_of_the_warm_process_that_runs_the_file_as_it_is_now(
    tmp_path, monkeypatch
):
    (tmp_path / "helper.py").write_text("SCALE = 3\n")
    (tmp_path / "kernel.py").write_text(KERNEL)
    (tmp_path / "block_factor.txt").write_text("1")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WARM_TEST_BLOCK", "128")
    first, constexprs = _open(str(tmp_path / "kernel.py"))
    try:
        assert isinstance(first.proc, WarmProcess)
        warm_pid = client._warm.process.pid
        assert _parent(first.proc.pid) == warm_pid
        assert (constexprs["FACTOR"], constexprs["BLOCK"]) == (3, 128)
    finally:
        first.close()
    assert first.proc.wait(timeout=10) is not None  # its exit, reported by the warm process

    # the file's module, its environment and its working folder changed: the next fork sees each change
    (tmp_path / "helper.py").write_text(
        "SCALE = 55\n"
    )  # (another size: no bytecode cache can pass for it)
    monkeypatch.setenv("WARM_TEST_BLOCK", "64")
    other = tmp_path / "other"
    other.mkdir()
    (other / "block_factor.txt").write_text("4")
    monkeypatch.chdir(other)
    second, constexprs = _open(str(tmp_path / "kernel.py"))
    try:
        assert client._warm.process.pid == warm_pid and _parent(second.proc.pid) == warm_pid
        assert (constexprs["FACTOR"], constexprs["BLOCK"]) == (55, 256)
    finally:
        second.close()


DIES = textwrap.dedent(
    """
    import sys, time
    from irscope.worker import client, remote

    session = remote.open_session(sys.argv[1])
    print(client._warm.process.pid, session.proc.pid, flush=True)
    time.sleep(600)
    """
)


def test_the_warm_process_and_its_workers_end_when_the_front_end_is_killed(tmp_path):
    script = tmp_path / "front.py"
    script.write_text(DIES)
    front = subprocess.Popen(
        [sys.executable, str(script), os.path.join(ROOT, "kernels", "add.py")],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    warm_pid, worker_pid = map(int, front.stdout.readline().split())
    front.send_signal(signal.SIGKILL)
    front.wait()
    deadline = time.monotonic() + 20
    alive = {warm_pid, worker_pid}
    while alive and time.monotonic() < deadline:
        alive = {pid for pid in alive if os.path.exists(f"/proc/{pid}") and not _zombie(pid)}
        time.sleep(0.1)
    assert not alive, f"still running after the front end was killed: {alive}"


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False
