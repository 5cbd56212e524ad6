"""What does irscope cost on top of Triton's own compiler?

For each example kernel, in fresh processes with fresh caches, side by side:
  cold  plain  = triton.compile(...) of the very specialization the file's launch gets
        irscope = open the file (run its launch in the interpreter), specialize, compile, every stage
                  ready; "IR" = up to the cubin, "+SASS" = also disassembled with nvdisasm
  warm  reopen = a whole process that opens the file again on a warm cache and has every stage ready
                 (SASS and resources included), minus the time of `python -c "import torch, triton"`;
                 `irscope report` does more than that (its analyses re-run the interpreter)
  first  irscope = cold, and irscope's own cache (the memo of Triton's install hash) empty too: the very
                  first run after installing or upgrading Triton
Targets (issue 2): cold ratio ≤ 1.10; warm reopen ≤ 0.3 s over the import.
    python benchmarks/compile_overhead.py [kernels/add.py ...] [--target sm_90]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child_plain(path: str, target: str) -> dict:
    """Time only triton.compile; the specialization comes from irscope before the clock starts."""
    sys.path.insert(0, ROOT)
    from irscope.core.session import open_file
    from irscope.core.triton_compat import compile_specialized, specialize

    ws = open_file(path, target=target, run_main=True)
    launch = ws.launches_of(ws.kernel(None) if len({la.kernel.name for la in ws.launches}) == 1
                            else ws.kernels[0])[0]
    spec = specialize(launch.kernel.jit, launch.args, launch.kwargs, ws.target)
    start = time.perf_counter()
    compile_specialized(launch.kernel.jit, spec, ws.target)
    return {"plain": time.perf_counter() - start}


def child_irscope(path: str, target: str) -> dict:
    sys.path.insert(0, ROOT)
    from irscope.core.session import open_file  # imports torch and triton: not counted, as for plain

    start = time.perf_counter()
    ws = open_file(path, target=target)
    kernel = ws.kernel(None) if len({la.kernel.name for la in ws.launches}) == 1 else ws.kernels[0]
    comp = ws.compile(kernel)[0]
    for stage in comp.stage_names:
        if stage != "sass":
            comp.stage(stage)
    comp.resources
    ir_ready = time.perf_counter() - start
    if "sass" in comp.stage_names:
        comp.stage("sass")
    return {"irscope_ir": ir_ready, "irscope_sass": time.perf_counter() - start}


def _run_child(mode: str, path: str, target: str, cache: str, own_cache: str) -> dict:
    env = dict(os.environ, TRITON_CACHE_DIR=cache, IRSCOPE_CACHE_DIR=own_cache, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, __file__, "--child", mode, path, target], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} {path}: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _wall(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, capture_output=True, check=True, cwd=ROOT)
    return time.perf_counter() - start


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        mode, path, target = sys.argv[2:5]
        result = child_plain(path, target) if mode == "plain" else child_irscope(path, target)
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(description="irscope's compile overhead over plain triton.compile")
    parser.add_argument("files", nargs="*")
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("--repeat", type=int, default=3, help="warm timings: take the median of this many")
    args = parser.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py")))

    print(f"target {args.target}; times in seconds; cold = fresh process and fresh Triton cache")
    print(f"{'kernel':<16}{'plain':>8}{'irscope IR':>12}{'ratio':>7}{'+SASS':>8}{'ratio':>7}"
          f"{'first':>8}{'ratio':>7}{'import':>8}{'reopen':>8}{'over':>7}")
    own = tempfile.mkdtemp(prefix="irscope-own-cache-")  # irscope's install-hash memo, kept across kernels
    for path in files:
        name = os.path.basename(path)
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b, \
                tempfile.TemporaryDirectory() as c, tempfile.TemporaryDirectory() as empty:
            plain = _run_child("plain", path, args.target, a, empty)["plain"]
            _run_child("irscope", path, args.target, c, own)  # makes sure the memo exists
            ours = _run_child("irscope", path, args.target, b, own)
            first = _run_child("irscope", path, args.target, c + "/first", empty)["irscope_ir"]
            env = dict(os.environ, TRITON_CACHE_DIR=b, IRSCOPE_CACHE_DIR=own, PYTHONPATH=ROOT)
            base = statistics.median(_wall([sys.executable, "-c", "import torch, triton"], env)
                                     for _ in range(args.repeat))
            reopen = statistics.median(_wall([sys.executable, __file__, "--child", "irscope", path, args.target],
                                             env) for _ in range(args.repeat))
        print(f"{name:<16}{plain:>8.2f}{ours['irscope_ir']:>12.2f}{ours['irscope_ir'] / plain:>7.2f}"
              f"{ours['irscope_sass']:>8.2f}{ours['irscope_sass'] / plain:>7.2f}{first:>8.2f}{first / plain:>7.2f}"
              f"{base:>8.2f}{reopen:>8.2f}"
              f"{reopen - base:>7.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
