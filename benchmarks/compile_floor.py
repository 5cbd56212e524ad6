"""How much of a slow file's time is Triton's own compiler: a floor no tool that shows every stage can beat.

For each file given (a corpus file: under tests/corpus/, run as benchmarks/corpus.py runs it), side by side in
one run, each side in a fresh process with fresh Triton and irscope caches:
  irscope  `irscope report --json FILE`, as a user runs it: wall seconds
  compile  the same file's launches captured with nothing compiled (compile-ahead off), then every
           compilation the report shows compiled one after the other (Triton's compiler, ptxas included) and
           disassembled (nvdisasm: showing SASS needs it): the CPU seconds of those compiles alone
  run      the wall seconds of that capture, each launch's kernel cut to the one program the interpreter
           always runs (IRSCOPE_INTERPRET_S=0): about the file's own work (its torch code on this CPU),
           which any tool that captures the file's real launches runs, on one core
  floor    the larger of compile / this machine's cores (every core busy compiling and nothing else to
           do) and (run + compile) / cores with run on one core at least: what no tool that runs the file
           and shows these compilations' stages goes under
and irscope's wall time over the floor, and irscope - floor: what the interpreter, the waiting and the
analyses add.

    python benchmarks/compile_floor.py tests/corpus/drivers/adasplash_attention.py [...]
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child_compile(path: str) -> dict:
    """In a fresh process: the launches captured, then each compilation compiled and disassembled, timed."""
    sys.path.insert(0, ROOT)
    from irscope.engine.session import open_file

    os.environ["IRSCOPE_INTERPRET_S"] = "0"
    start = time.perf_counter()
    ws = open_file(path, compile_ahead=False)
    run = time.perf_counter() - start
    before = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    comps = ws.compile_all()
    for comp in comps:
        if "sass" in comp.stage_names:
            comp.stage("sass")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(a.ru_utime + a.ru_stime - (b.ru_utime + b.ru_stime) for a, b in zip(after, before))
    return {"compilations": len(comps), "compile_cpu": cpu, "compile_wall": wall, "run": run}


def _environment(scratch: str) -> dict:
    return dict(
        os.environ,
        CUDA_VISIBLE_DEVICES="",
        TRITON_CACHE_DIR=os.path.join(scratch, "triton-cache"),
        IRSCOPE_CACHE_DIR=os.path.join(scratch, "irscope-cache"),
        FLAGGEMS_CACHE_DIR=os.path.join(scratch, "flaggems-cache"),
        PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p),
    )


def measure(path: str) -> dict:
    path = os.path.abspath(path)
    folder = os.path.dirname(path)  # corpus files run from their own folder, as corpus.py runs them
    with tempfile.TemporaryDirectory(prefix="irscope-floor-") as scratch:
        start = time.perf_counter()
        report = subprocess.run(
            [sys.executable, "-m", "irscope", "report", "--json", path],
            env=_environment(os.path.join(scratch, "report")),
            cwd=folder,
            capture_output=True,
            text=True,
        )
        irscope_wall = time.perf_counter() - start
        shown = len(json.loads(report.stdout)["kernels"]) if report.returncode == 0 else None
    with tempfile.TemporaryDirectory(prefix="irscope-floor-") as scratch:
        done = subprocess.run(
            [sys.executable, __file__, "--child", path],
            env=_environment(scratch),
            cwd=folder,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{path}: {done.stderr.strip()[-500:]}")
        compiled = json.loads(done.stdout.strip().splitlines()[-1])
    cores = len(os.sched_getaffinity(0))
    floor = max(compiled["run"], (compiled["run"] + compiled["compile_cpu"]) / cores)
    return {
        "file": os.path.relpath(path, ROOT),
        "shown": shown,
        "irscope_s": irscope_wall,
        **compiled,
        "cores": cores,
        "floor_s": floor,
    }


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child_compile(sys.argv[2])))
        return 0
    files = sys.argv[1:]
    if not files:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    os.environ.pop("IRSCOPE_WARM_SOCKET", None)  # a new process, as a user's first command
    print(
        "file | compilations (report / compiled here) | irscope s | Triton compile CPU s | run s "
        "(one program per launch) | floor s (cores) | irscope / floor | irscope - floor s"
    )
    for path in files:
        r = measure(path)
        print(
            f"{r['file']} | {r['shown']} / {r['compilations']} | {r['irscope_s']:.1f} | "
            f"{r['compile_cpu']:.1f} | {r['run']:.1f} | {r['floor_s']:.1f} ({r['cores']}) | "
            f"{r['irscope_s'] / r['floor_s']:.2f} | {r['irscope_s'] - r['floor_s']:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
