"""Shared test setup. Tests run the real Triton compiler on real kernels; nothing is mocked."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

# A private Triton cache for the test session, set before Triton is imported: tests see cold compiles
# and never touch the user's cache.
# The app picks row colours by the terminal's colour system (COLORTERM / TERM); tests and snapshots are
# truecolor whatever terminal runs them (test_tui checks the 256-colour rows on their own).
os.environ["COLORTERM"] = "truecolor"
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="irscope-test-cache-"))
os.environ.setdefault("IRSCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="irscope-test-own-cache-"))
# A findings rule that raises is dropped from the list outside tests (the other rules still run); here it raises,
# in this process and in every worker and child it starts: `findings(comp) == []` cannot pass because the
# rules crashed (core/findings/engine.py; test_findings checks both ways).
os.environ["IRSCOPE_STRICT_RULES"] = "1"
# pytest-xdist already runs a test per core: a report's analyses are computed in this process, not in forked
# copies of it (engine/forked_map.py), which would only contend for the same cores. test_engine_forked_map
# runs them forked, and checks that the report is the same either way.
os.environ.setdefault("IRSCOPE_JOBS", "1")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "kernels")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")


# SVG snapshots of the terminal UI hold real compiler output (IR text, line counts, registers), which
# changes between Triton releases. They were made with the version in this file, which CI installs for its
# first run (.ci/run); under another one they are skipped, and pytest's summary (-rs) prints the reason with
# the count, so that a run on a newer Triton cannot pass them silently.
with open(os.path.join(ROOT, "tests", "snapshots_triton.txt")) as _pin:
    SNAPSHOT_TRITON = _pin.read().strip()


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pyproject's addopts): one worker more than the CPUs. Many tests wait on a child process (a
    worker, a CLI run) or on the terminal UI's timers; with one worker a CPU, two cores stood idle a third of
    the time through the UI tests, and three workers kept them busy (the whole suite on two cores: 641 s
    against 716 to 786 s)."""
    usable = (
        os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    )
    return len(usable) + 1


def pytest_collection_modifyitems(config, items):
    import importlib.metadata

    # The terminal UI's tests are marked `front_end` by their folder: the front end never imports Triton (a
    # layer contract, pyproject.toml), so CI runs them, like the tests marked slow, on the snapshots' Triton
    # only (.ci/run); what the UI asks of the worker under each Triton is the worker's, tested in functional/.
    # A test of either kind that runs on some Triton releases only would then never run where it should.
    tui = os.path.join(ROOT, "tests", "tui", "")
    for item in items:
        if str(item.path).startswith(tui):
            item.add_marker(pytest.mark.front_end)
        if (item.get_closest_marker("slow") or item.get_closest_marker("front_end")) and any(
            "Triton" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif")
        ):
            raise pytest.UsageError(
                f"{item.nodeid} runs in CI's first run only and on some Triton releases only"
            )
    installed = importlib.metadata.version("triton")
    if installed == SNAPSHOT_TRITON or config.getoption("--snapshot-update", default=False):
        return
    skip = pytest.mark.skip(
        reason=f"SVG snapshots were made with Triton {SNAPSHOT_TRITON}; this is {installed}"
    )
    for item in items:
        if "snap_compare" in getattr(item, "fixturenames", ()):
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def _one_warm_process_for_the_commands_tests_start():
    """Every `irscope` command a test starts as a child process forks its worker from one warm process of this
    pytest process's (IRSCOPE_WARM_SOCKET, worker/client.py), which has loaded torch and Triton once, as the TUI's
    workers do: a new process's `import torch, triton` cost 1.9 s of CPU in each of about 100 commands a run.
    The worker a command gets is the same as a new process's, started in the same folder with the same
    environment (tests/functional/test_worker_process.py compares both). IRSCOPE_TEST_WARM=0: new processes."""
    if os.environ.get("IRSCOPE_TEST_WARM") == "0" or os.environ.get("IRSCOPE_WARM_SOCKET"):
        yield
        return
    folder = tempfile.mkdtemp(prefix="irscope-test-warm-")
    path = os.path.join(folder, "warm.sock")
    server = subprocess.Popen(
        [sys.executable, "-m", "irscope.worker", "--warm-listen", path],
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=dict(os.environ, IRSCOPE_FRONT_END_PID=str(os.getpid())),
    )
    deadline = time.monotonic() + 60
    while not os.path.exists(path) and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if os.path.exists(path):
        os.environ["IRSCOPE_WARM_SOCKET"] = path
    try:
        yield
    finally:
        os.environ.pop("IRSCOPE_WARM_SOCKET", None)
        server.kill()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)


# The compiler writes the kernel file's path into PTX's debug sections, so the PTX line count on screen
# depends on where the checkout lives. Snapshot tests open a copy at this fixed path instead.
SNAPSHOT_SOURCES = "/tmp/irscope-snapshot-sources"


@pytest.fixture(autouse=True)
def _fresh_triton_cache_for_snapshots(request, monkeypatch, tmp_path):
    """Triton's cache key holds a kernel's source but not its file's path, so a compile cached from the
    checkout's copy would put the checkout's path (and its length) back into the snapshot's PTX."""
    if "snap_compare" in request.fixturenames:
        monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-cache"))


def snapshot_source(path: str) -> str:
    """A copy of a kernel file at a path that is the same on every machine, for SVG snapshots."""
    import shutil

    os.makedirs(SNAPSHOT_SOURCES, exist_ok=True)
    target = os.path.join(SNAPSHOT_SOURCES, os.path.basename(path))
    with open(path, "rb") as f:
        wanted = f.read()
    if os.path.exists(target):
        with open(target, "rb") as f:
            if (
                f.read() == wanted
            ):  # left as it is: an app watching it would reload on a new copy's save
                return target
    # Copied beside it, then renamed over it: a test in another pytest process (-n) may be reading the same copy.
    fd, partial = tempfile.mkstemp(dir=SNAPSHOT_SOURCES, prefix=".copy-")
    os.close(fd)
    shutil.copyfile(path, partial)
    os.replace(partial, target)
    return target


def kernel_path(name: str) -> str:
    return os.path.join(KERNELS, name)


def fixture_path(name: str) -> str:
    return os.path.join(FIXTURES, name)


@pytest.fixture
def cli(capsys):
    """Run a command in-process, as the worker process runs it (irscope.commands.run.execute): returns (exit code,
    stdout, stderr). `run_irscope` runs the real front end, with its worker."""
    from irscope.commands.run import execute

    def run(*argv):
        code = execute([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def run_irscope(*argv, env=None, cwd=ROOT):
    """Run the real `python -m irscope` in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "irscope", *map(str, argv)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=600,
    )


@pytest.fixture
def front(capsys):
    """Run the front end in-process (irscope.cli.main.main: argument checks, then a worker or the TUI)."""
    from irscope.cli.main import main

    def run(*argv):
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run
