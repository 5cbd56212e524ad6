"""Files and caches that used to break irscope: a copied or renamed kernel file whose compile Triton's cache
already holds from the original's path, a cache that cannot be written (read-only, full, a file in the way),
and files with a UTF-8 byte order mark or a PEP 263 coding line. Real compiles, real runs of the CLI."""

import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, kernel_path

from irscope.base.errors import IrscopeError
from irscope.engine.session import open_file

STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")


def _compiled(path, **kwargs):
    ws = open_file(str(path), target="sm_90", **kwargs)
    (comp,) = ws.compile_all()
    assert comp.ok, comp.failure
    return ws, comp


def _compiled_all(path, **kwargs):
    ws = open_file(str(path), target="sm_90", **kwargs)
    comps = ws.compile_all()
    assert comps and all(comp.ok for comp in comps), [comp.failure for comp in comps]
    return comps


@pytest.mark.parametrize(
    "kernel, relative",
    [
        ("add.py", "renamed_add.py"),
        ("add.py", os.path.join("elsewhere", "add.py")),
        # Gluon's source class keyed by the path too (it failed: "super(type, obj): obj must be an instance")
        ("gluon_copy.py", os.path.join("elsewhere", "gluon_copy.py")),
    ],
)
def test_a_copy_maps_to_its_own_lines_after_the_original_was_compiled(tmp_path, kernel, relative):
    """Triton's cache key holds the kernel's source, not its path: the copy's first compile is the original's,
    which records the original's path. irscope compiles it again under its own path; every stage maps."""
    _compiled_all(
        kernel_path(kernel), compile_ahead=False
    )  # the original's compile is in the cache
    copy = tmp_path / relative
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(kernel_path(kernel), copy)
    # compile ahead on: a child compiles the copy, the parent then reads its cache
    stages = STAGES if kernel == "add.py" else STAGES[1:]  # Gluon starts at TTGIR
    for comp in _compiled_all(copy):
        assert f'loc("{copy}":' in comp.stage(stages[0])
        assert str(copy) in comp.stage("ptx")
        for stage in stages:
            assert comp.source_map.mapped_fraction(stage) > 0.5, stage
    # and the original still shows its own path
    for again in _compiled_all(kernel_path(kernel), compile_ahead=False):
        assert f'loc("{kernel_path(kernel)}":' in again.stage(stages[0])


def _report(env_changes, *prefix):
    # a new worker process: the limits and mounts `prefix` puts the command under are the worker's too (a fork
    # of the shared warm process, conftest.py, has that process's)
    env = {**os.environ, "PYTHONPATH": ROOT, "IRSCOPE_WARM": "0", **env_changes}
    command = [*prefix, sys.executable, "-m", "irscope", "report", kernel_path("add.py")]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def _check_one_warning_and_a_report(done, *folders):
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("irscope: warning: cannot write the cache"), (
        done.stderr
    )
    for folder in folders:
        assert folder in lines[0]
    assert (
        "add_kernel" in done.stdout
        and "registers" in done.stdout
        and "Traceback" not in done.stdout
    )


def test_a_file_where_the_cache_folders_should_be(tmp_path):
    """(root ignores permissions, so the unwritable caches here are paths that cannot be folders)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    triton_dir, own_dir = str(blocker / "triton"), str(blocker)
    done = _report({"TRITON_CACHE_DIR": triton_dir, "IRSCOPE_CACHE_DIR": own_dir})
    _check_one_warning_and_a_report(done, triton_dir, own_dir)
    assert "TRITON_CACHE_DIR and IRSCOPE_CACHE_DIR" in done.stderr


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_a_cache_under_proc(tmp_path):
    done = _report(
        {"TRITON_CACHE_DIR": "/proc/irscope-cache", "IRSCOPE_CACHE_DIR": str(tmp_path / "own")}
    )
    _check_one_warning_and_a_report(done, "/proc/irscope-cache")


def _private_tmpfs(folder, options):
    """A command prefix that runs the rest in a mount namespace of its own with a tmpfs on `folder`."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare (util-linux) to mount a read-only or tiny file system")
    script = 'mount -t tmpfs -o "$0" tmpfs "$1" && shift && exec "$@"'  # $0: options, $1: folder
    probe = subprocess.run(
        [unshare, "-m", "sh", "-c", script, options, str(folder), "true"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs in a private mount namespace here: {probe.stderr.decode().strip()}"
        )
    return [unshare, "-m", "sh", "-c", script, options, str(folder)]


@pytest.mark.parametrize(
    "options,reason", [("ro", "Read-only file system"), ("size=12k", "No space left on device")]
)
def test_a_read_only_or_full_cache(tmp_path, options, reason):
    """A read-only cache fails the check before the run; a 12 KB one passes it and fills up during the
    compile, which then goes on in a temporary folder. Either way: one warning line and the whole report."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    prefix = _private_tmpfs(mount, options)
    cache = str(mount / "triton")
    done = _report({"TRITON_CACHE_DIR": cache, "IRSCOPE_CACHE_DIR": str(tmp_path / "own")}, *prefix)
    _check_one_warning_and_a_report(done, cache, reason)


# --- encodings ----------------------------------------------------------------------------------------------


def test_a_utf8_byte_order_mark(tmp_path):
    path = tmp_path / "bom_add.py"
    path.write_bytes(b"\xef\xbb\xbf" + open(kernel_path("add.py"), "rb").read())
    ws, comp = _compiled(path, compile_ahead=False)
    assert not ws.user_file.text.startswith("\ufeff")
    # line 21, as in kernels/add.py
    assert ws.user_file.text.splitlines()[20].startswith("def add_kernel(")
    assert comp.source_map.mapped_fraction("ttir") > 0.5


def test_a_pep263_coding_line(tmp_path):
    path = tmp_path / "latin1_add.py"
    source = open(kernel_path("add.py"), encoding="utf-8").read()
    path.write_bytes(
        "# -*- coding: latin-1 -*-\n# café au lait\n".encode("latin-1") + source.encode("latin-1")
    )
    ws, comp = _compiled(path, compile_ahead=False)
    assert "# café au lait" in ws.user_file.text
    def_line = 1 + next(
        i for i, t in enumerate(ws.user_file.text.splitlines()) if t.startswith("def add_kernel(")
    )
    assert ws.kernel("add_kernel").line == def_line == 23  # two lines below kernels/add.py's
    assert comp.source_map.mapped_fraction("ttir") > 0.5
    assert f'loc("{path}":{def_line}:' in comp.stage("ttir")


def test_an_unknown_coding_line_is_one_clear_line(tmp_path):
    path = tmp_path / "odd.py"
    path.write_text("# -*- coding: no-such-codec -*-\nimport triton\n")
    with pytest.raises(IrscopeError) as err:
        open_file(str(path), target="sm_90", compile_ahead=False)
    message = str(err.value)
    assert (
        "\n" not in message
        and "unknown encoding: no-such-codec" in message
        and "coding line" in message
    )


# latin-1 bytes, nothing declared
# ... on the first line
@pytest.mark.parametrize(
    "raw,expected",
    [
        (
            b"import triton\n# caf\xe9\n",
            "not UTF-8 text, and no coding line",
        ),
        (
            b"# caf\xe9\nimport triton\n",
            "not UTF-8 text, and no coding line",
        ),
        (
            b"# coding: ascii\nimport triton  # caf\xc3\xa9\n",
            "is not ascii text, as its coding line says",
        ),
    ],
)
def test_bytes_that_are_not_the_declared_encoding(tmp_path, raw, expected):
    path = tmp_path / "broken.py"
    path.write_bytes(raw)
    with pytest.raises(IrscopeError) as err:
        open_file(str(path), target="sm_90", compile_ahead=False)
    assert expected in str(err.value) and "\n" not in str(err.value)


def test_the_install_hash_is_worked_out_beside_the_file_and_is_triton_own(tmp_path):
    """open_file hashes Triton's install in a process of its own when irscope's memo is empty
    (triton_compat/install_key.py): the memo it writes holds the value Triton itself computes, a launch
    asking meanwhile gets that same value, and the process is collected once it is done."""
    script = """
import os
import triton.runtime.cache as cache
original = cache.triton_key
from irscope.engine.triton_compat import hashing_process, triton_install_key, warm_triton_key
warm_triton_key()
pid = hashing_process()
asked = triton_install_key()  # as a launch would, while the process may still hash
collected = None
if pid is not None:
    try:
        os.waitpid(pid, os.WNOHANG)
        collected = False
    except ChildProcessError:
        collected = True
memo = [n for n in os.listdir(os.environ["IRSCOPE_CACHE_DIR"]) if n.startswith("triton_key.")]
with open(os.path.join(os.environ["IRSCOPE_CACHE_DIR"], memo[0])) as f:
    kept = f.read()
print(pid is not None and pid != os.getpid(), collected, hashing_process(), asked == original() == kept)
"""
    env = dict(
        os.environ,
        IRSCOPE_CACHE_DIR=str(tmp_path / "own"),
        TRITON_CACHE_DIR=str(tmp_path / "triton"),
        PYTHONPATH=ROOT,
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True", "None", "True"]
    again = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert again.stdout.split() == [
        "False",
        "None",
        "None",
        "True",
    ]  # the memo is there: no process the second time
