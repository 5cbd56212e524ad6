"""Nsight Compute's shared-memory wavefronts, per SASS instruction, against irscope's bank-conflict prediction.

For each kernels/*.py file irscope records every launch offline, in a child process that sees no GPU (as
on a laptop): the PTX, the grid, the block and the value of each kernel parameter. Nsight Compute profiles
the same file on the GPU (the SourceCounters section: per SASS instruction "Instructions Executed", "L1
Wavefronts Shared" and its "Ideal"). Then irscope's prediction is made from the recorded PTX and launch,
and compared both ways (bank_compare.py): every measured LDS / STS / LDSM / STSM / LDGSTS / HGMMA must have
a predicted PTX access and every predicted access a measured instruction, within 5%; a recorded launch
Nsight Compute did not measure is a failure too (unless its launch cap was reached). The PTX Nsight Compute
saw (`.source_ptx.csv`) is checked against the recorded PTX, and a difference is noted.

    python3 validation/ncu_bank_conflicts.py --out $OUT/bank          # GPU and ncu: measure, record, compare
    python3 validation/ncu_bank_conflicts.py --measured validation/data/bank_conflicts   # no GPU: committed data

Writes DIR/<file>.launches.json, DIR/<file>.{source_sass,source_cuda_sass,source_ptx,raw}.csv and
DIR/bank_conflicts.md (the table for docs/validation.md). Exit status 1 when a row fails or a file could not
be recorded or measured. Files are recorded 8 at a time and profiled one at a time as they come: Nsight
Compute cannot profile two processes at once ("Profiling failed because a driver resource was
unavailable"; the H100 run of 2026-11-23 lost add.py and a launch of misaligned.py to it, profiling 3 at
a time beside another script's ncu), so each profile also holds ncu_shared.one_ncu_at_a_time(), which
other validation scripts that run ncu take too.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "validation"))
from bank_compare import NCU_LAUNCHES, NOTES, compare_file, table  # noqa: E402
from ncu_shared import one_ncu_at_a_time  # noqa: E402

RECORD_TIMEOUT = 100   # seconds for one file's offline recording
PROFILE_TIMEOUT = 240  # seconds for one file under Nsight Compute (compiled_block.py, a fresh Inductor cache)


# ---------------------------------------------------------------------------------------------- recorded


def record(path: str, target: str, out_dir: str) -> str:
    """Every launch of `path` as irscope sees it offline: PTX, grid, block, parameters (DIR/<stem>.launches.json)."""
    from irscope.analysis.banks.report import launch_inputs
    from irscope.analysis.ptx.program import parse_program
    from irscope.engine.compile.compilation import compile_launch
    from irscope.engine.session import open_file
    from irscope.engine.triton_compat import TRITON_VERSION

    ws = open_file(path, target=target)
    doc = {"file": os.path.relpath(os.path.abspath(path), ROOT), "triton": TRITON_VERSION, "target": target,
           "kernels": sorted({k.name for k in ws.kernels}), "ptx": {}, "launches": []}
    for index, launch in enumerate(ws.launches):
        row = {"kernel": launch.kernel.name, "launch": index, "config": launch.autotune_index}
        comp = compile_launch(launch, ws.target, ws.user_file.text)
        if not comp.ok:
            row["error"] = comp.failure.message
        else:
            ptx = comp.stage("ptx").split("\n\t.section", 1)[0]
            key = hashlib.sha1(ptx.encode()).hexdigest()[:16]
            doc["ptx"][key] = ptx
            program = parse_program(ptx)
            inputs = launch_inputs(comp, program.params, program.threads, launch)
            row.update(ptx=key, registers=comp.resources.registers)
            if inputs is None:
                row["error"] = "no grid: the launch was not captured"
            else:
                row.update(grid=list(inputs.grid), threads=inputs.threads, params=inputs.params)
        doc["launches"].append(row)
    target_path = os.path.join(out_dir, os.path.splitext(os.path.basename(path))[0] + ".launches.json")
    with open(target_path, "w") as f:
        json.dump(doc, f, indent=1)
    return target_path


def _run(command: list[str], timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
    """subprocess.run in a session of its own, the whole session killed on timeout (ncu's and irscope's
    children included, so that nothing keeps the GPU)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                               env=env, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def record_offline(path: str, target: str, out_dir: str) -> str | None:
    """`record` in a child process that sees no GPU; None and the reason on stderr when it fails."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "", "PYTHONPATH": ROOT}
    try:
        done = _run([sys.executable, os.path.abspath(__file__), "--record", path, "--target", target, "--out",
                     out_dir], RECORD_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        print(f"record {path}: over {RECORD_TIMEOUT} s", file=sys.stderr)
        return None
    if done.returncode != 0:
        print(f"record {path}: {done.stderr.strip()[-600:]}", file=sys.stderr)
        return None
    return done.stdout.strip().splitlines()[-1]


# ---------------------------------------------------------------------------------------------- measured


def profile(path: str, kernels: list[str], out_dir: str) -> str:
    """Nsight Compute on the file's own Triton kernels; the CSV pages under out_dir/<stem>.*."""
    stem = os.path.join(out_dir, os.path.splitext(os.path.basename(path))[0])
    # Inductor's kernels may be fused and named otherwise on the GPU (compiled_block.py's second kernel is
    # triton_per_fused_addmm_gelu_sum_1 there, triton_per_fused_gelu_sum_1 offline): take all of them
    names = "triton_.*" if any(k.startswith("triton_") for k in kernels) else "|".join(kernels) or "."
    log = []
    # a fresh Inductor cache and in-process compiles (as ncu_sectors.py): a torch.compile file then
    # benchmarks every config of its autotuned kernels, the launches irscope recorded, instead of launching
    # a choice cached by an earlier run (in the 2026-11-23 run compiled_block.py launched one)
    cache = tempfile.mkdtemp(prefix="ncu-inductor-")
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TORCHINDUCTOR_COMPILE_THREADS="1")
    try:
        with one_ncu_at_a_time():
            done = _run(["ncu", "--target-processes", "application-only", "-c", str(NCU_LAUNCHES),
                         "-k", f"regex:^({names})$", "--section", "SourceCounters", "--section",
                         "MemoryWorkloadAnalysis_Tables", "--section", "LaunchStats", "--import-source", "yes",
                         "--export", stem, "-f", sys.executable, path], PROFILE_TIMEOUT, env=env)
        log.append(f"profile rc={done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    except (subprocess.TimeoutExpired, OSError) as exc:
        log.append(f"profile failed: {exc}")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    pages = {"source_sass": ["--page", "source", "--print-source", "sass"],
             "source_cuda_sass": ["--page", "source", "--print-source", "cuda,sass"],
             "source_ptx": ["--page", "source", "--print-source", "ptx"], "raw": ["--page", "raw"]}
    for name, flags in pages.items():
        if not os.path.exists(stem + ".ncu-rep"):
            break
        try:
            with open(f"{stem}.{name}.csv", "w") as f:
                page = subprocess.run(["ncu", "--import", stem + ".ncu-rep", "--csv", *flags], stdout=f,
                                      stderr=subprocess.PIPE, text=True, timeout=60)
            log.append(f"{name} rc={page.returncode} {page.stderr[-300:]}")
        except (subprocess.TimeoutExpired, OSError) as exc:
            log.append(f"{name} failed: {exc}")
    with open(stem + ".profile.log", "w") as f:
        f.write("\n".join(log))
    if os.path.exists(stem + ".ncu-rep") and not os.environ.get("KEEP_NCU_REPORTS"):
        os.remove(stem + ".ncu-rep")  # the CSV pages hold what the comparison reads; reports are megabytes
    return stem


def gpu_run(files: list[str], target: str, data: str) -> None:
    """Record every file offline (8 at a time, on the CPU) and profile each one as soon as it is recorded,
    one at a time (Nsight Compute profiles one process at a time)."""
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=8) as recorders, ThreadPoolExecutor(max_workers=1) as profilers:
        recorded = {recorders.submit(record_offline, os.path.abspath(f), target, data): f for f in files}
        profiled = []
        for done in as_completed(recorded):
            path, got = recorded[done], done.result()
            if got is None:
                continue  # the comparison reports the file as not recorded
            kernels = json.load(open(got))["kernels"]
            profiled.append(profilers.submit(profile, os.path.abspath(path), kernels, data))
            print(f"{time.monotonic() - start:5.1f}s recorded {os.path.relpath(path, ROOT)}", file=sys.stderr,
                  flush=True)
        for done in as_completed(profiled):
            print(f"{time.monotonic() - start:5.1f}s profiled {done.result()}", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="kernel files (default: kernels/*.py)")
    parser.add_argument("--out", help="where the raw data and the table go (GPU mode; --record)")
    parser.add_argument("--measured", help="a directory of committed data: compare without a GPU")
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("--record", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.record:
        print(record(args.record, args.target, args.out or "."))
        return 0
    files = args.files or sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py")))
    if args.measured and not args.files:  # every file the directory has data for
        files = sorted(glob.glob(os.path.join(args.measured, "*.launches.json")))
    stems = [os.path.basename(f).split(".")[0] for f in files]
    data = args.measured
    if data is None:
        if not args.out:
            parser.error("give --out DIR (GPU mode) or --measured DIR")
        data = args.out
        os.makedirs(data, exist_ok=True)
        gpu_run(files, args.target, data)
    rows, problems = [], []
    for stem in stems:
        base = os.path.join(data, stem)
        if not os.path.exists(base + ".launches.json"):
            problems.append(f"{stem}: nothing recorded")
            continue
        try:
            got_rows, got_problems = compare_file(base)
        except (OSError, ValueError, KeyError) as exc:
            problems.append(f"{stem}: {type(exc).__name__}: {exc}")
            continue
        rows += got_rows
        problems += got_problems
    text = "\n".join(table(rows))
    failed = [r for r in rows if not r["ok"]]
    print(f"{len(rows)} row(s), {len(failed)} off by more than 5% or unmatched, {len(problems)} problem(s)")
    for p in problems:
        print("problem:", p)
    for note in NOTES:
        print("note:", note)
    print(text)
    if args.out and args.measured is None:
        with open(os.path.join(data, "bank_conflicts.md"), "w") as f:
            f.write(text + "\n")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
