"""Measure global-memory sectors per request with Nsight Compute for every example kernel.

Ground truth for irscope's coalescing prediction: for each Triton kernel launched by kernels/*.py,
l1tex sectors ÷ requests for global loads and stores, and registers per thread. Needs a GPU and ncu.
    python3 validation/ncu_sectors.py --out $OUT/ncu.csv
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import os
import subprocess
import sys
import tempfile

from ncu_shared import one_ncu_at_a_time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METRICS = {
    "ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "ld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "st_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "st_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "registers": "launch__registers_per_thread",
}


def measure(path: str) -> list[dict]:
    cmd = ["ncu", "--csv", "--metrics", ",".join(METRICS.values()), sys.executable, path]
    # A fresh Inductor cache and in-process compiles: a torch.compile file benchmarks every config of its
    # autotuned kernels (each a launch ncu measures) instead of reusing a choice cached by an earlier run.
    with tempfile.TemporaryDirectory(prefix="ncu-inductor-") as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TORCHINDUCTOR_COMPILE_THREADS="1")
        with one_ncu_at_a_time():  # a second ncu profiling at the same time would fail
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    text = done.stdout[done.stdout.find('"ID"'):] if '"ID"' in done.stdout else ""
    rows: dict[tuple, dict] = {}
    for rec in csv.DictReader(io.StringIO(text)):
        key = (rec["ID"], rec["Kernel Name"])
        row = rows.setdefault(key, {"file": os.path.relpath(path, ROOT), "launch": rec["ID"],
                                    "kernel": rec["Kernel Name"]})
        for short, metric in METRICS.items():
            if rec["Metric Name"] == metric:
                row[short] = rec["Metric Value"].replace(",", "")
    if not rows:
        return [{"file": os.path.relpath(path, ROOT), "kernel": "ncu failed: " + (done.stderr.strip()[-300:])}]
    return list(rows.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--out")
    args = parser.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py")))
    fields = ["file", "launch", "kernel", *METRICS]
    out = io.StringIO()
    writer = csv.DictWriter(out, fields, extrasaction="ignore")
    writer.writeheader()
    for path in files:
        for row in measure(os.path.abspath(path)):
            writer.writerow(row)
            print(row, file=sys.stderr, flush=True)
    print(out.getvalue())
    if args.out:
        with open(args.out, "w") as f:
            f.write(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
