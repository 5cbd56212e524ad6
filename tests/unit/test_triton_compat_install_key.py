"""A first run: Triton's install hash is worked out in a process of its own while the file runs
(triton_compat/install_key.py), and the compile child compiles before it is known (key_deferred.py).
What lands in Triton's cache must be what a plain compile writes, byte for byte."""

import json
import os
import subprocess
import sys

from conftest import ROOT, kernel_path

# Opens a kernel file in a fresh process and prints every stage, the compile child's progress, and whether
# the install hash was still unknown when the file's launch forked the child.
# The hashing process waits for the launch (a file the launch writes): on a busy machine it once finished
# first, and the compile child then had the key at its start, which is the other path.
SCRIPT = """
import json, os, sys, time
import triton.runtime.cache as cache_module
from irscope.engine.compile import ahead
from irscope.engine.session import open_file
from irscope.engine.triton_compat import hashing_process, triton_key_known
from irscope.engine.triton_compat.install_key import remember_triton_key
import irscope.engine.compile.ahead as ahead_module
launched = os.path.join(os.environ["IRSCOPE_CACHE_DIR"], "launched")
remember_triton_key()
hash_install = cache_module.triton_key._original
def after_the_launch():
    while not os.path.exists(launched):
        time.sleep(0.01)
    return hash_install()
cache_module.triton_key._original = after_the_launch
seen = {}
original = ahead_module.start
def start(*args, **kwargs):
    seen["known_at_launch"] = triton_key_known()
    seen["hashing"] = hashing_process() is not None
    open(launched, "w").close()
    return original(*args, **kwargs)
ahead_module.start = start
import irscope.engine.session as session
ahead_flag = sys.argv[2] == "ahead"
ws = open_file(sys.argv[1], target="sm_90", compile_ahead=ahead_flag)
comp = ws.compile_all()[0]
stages = {name: comp.stage(name) for name in comp.stage_names}
key = ahead.compilation_key(comp.kernel.jit, comp.target, comp.spec)
print(json.dumps({"stages": stages, "progress": ahead.progress(key), "seen": seen,
                  "hashing_after": hashing_process(), "metadata_hash": comp.metadata["hash"]}))
"""


def _open(tmp_path, name: str, how: str, own_cache: str) -> dict:
    env = dict(
        os.environ,
        TRITON_CACHE_DIR=str(tmp_path / name),
        IRSCOPE_CACHE_DIR=str(tmp_path / own_cache),
        PYTHONPATH=ROOT,
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, kernel_path("matmul.py"), how],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=str(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cache_files(folder) -> dict[str, bytes]:
    """Every file of a Triton cache, by its path inside it; a group's list of paths made relative."""
    out = {}
    for parent, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(parent, name)
            with open(path, "rb") as f:
                data = f.read()
            if name.startswith("__grp__"):
                data = data.replace(str(folder).encode(), b"CACHE")
            out[os.path.relpath(path, folder)] = data
    return {
        k: v for k, v in out.items() if not k.startswith("irscope" + os.sep)
    }  # irscope's own notes


def test_a_first_run_compiles_before_the_install_hash_and_writes_what_triton_writes(tmp_path):
    first = _open(tmp_path, "deferred", "ahead", "fresh-own-cache")
    assert first["seen"] == {
        "known_at_launch": False,
        "hashing": True,
    }  # the child started before the hash
    assert first["progress"] == "cs"  # ... and compiled and disassembled
    assert first["hashing_after"] is None  # the hashing process was collected
    assert len(first["metadata_hash"]) == 64

    # the memo is there now: an ordinary compile
    plain = _open(tmp_path, "plain", "alone", "fresh-own-cache")
    assert plain["progress"] is None
    assert plain["stages"] == first["stages"]
    assert plain["metadata_hash"] == first["metadata_hash"]
    deferred_files, plain_files = (
        _cache_files(tmp_path / "deferred"),
        _cache_files(tmp_path / "plain"),
    )
    assert sorted(deferred_files) == sorted(plain_files)
    assert deferred_files == plain_files
    metadata = [
        json.loads(v) for k, v in plain_files.items() if k.endswith(".json") and "__grp__" not in k
    ]
    assert [m["hash"] for m in metadata] == [first["metadata_hash"]]
    # nothing of the compile under the stand-in key is left: one folder, the real key's
    assert len({os.path.dirname(k) for k in deferred_files}) == 1
