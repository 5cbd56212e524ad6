"""Predicted sectors/requests for every example kernel against the Nsight Compute numbers measured on the
H100 (docs/ncu_raw.csv), and the time the analysis takes per kernel. No GPU needed.
    python benchmarks/coalescing_vs_ncu.py
"""

from __future__ import annotations

import csv
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from irscope.core.analysis.coalescing import analyze_coalescing  # noqa: E402
from irscope.core.session import open_file  # noqa: E402

FILES = ["add", "gelu", "helper", "layernorm", "matmul", "misaligned", "softmax", "strided", "transpose"]


def measured() -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {}
    with open(os.path.join(ROOT, "docs", "ncu_raw.csv")) as f:
        for row in csv.DictReader(f):
            if row["kernel"].endswith("_kernel"):
                rows.setdefault(row["file"], []).append(row)
    return rows


def ratio(s, r):
    return float(s) / float(r) if float(r) else None


def main() -> int:
    truth = measured()
    print(f"{'file':22} {'kernel':22} {'ld ncu':>16} {'ld irscope':>16} {'st ncu':>14} {'st irscope':>14}  time   ok")
    for name in FILES:
        path = f"kernels/{name}.py"
        ws = open_file(os.path.join(ROOT, path), target="sm_90")
        comps = []
        for kernel in {l.kernel.name: l.kernel for l in ws.launches}.values():
            if kernel.is_autotuned:
                for config in range(len(kernel.autotune_configs)):
                    comps += ws.compile(kernel, config=config)
            else:
                for launch in ws.launches_of(kernel):  # every launch, even with one specialization
                    from irscope.core.compile import compile_launch
                    comp = compile_launch(launch, ws.target, ws.user_file.text)
                    comps.append((comp, launch))
        rows = truth.get(path, [])
        for i, item in enumerate(comps):
            comp, launch = item if isinstance(item, tuple) else (item, item.launch)
            if launch is not comp.launch:
                import copy
                comp = copy.copy(comp)
                comp.launch = launch
                comp.__dict__.pop("_coalescing", None)
            start = time.perf_counter()
            res = analyze_coalescing(comp, max_programs=10**6)
            took = time.perf_counter() - start
            row = next((r for r in rows if _matches(r, res)), rows[i] if i < len(rows) else None)
            ld_p = f"{res.loads.sectors}/{res.loads.requests}"
            st_p = f"{res.stores.sectors}/{res.stores.requests}"
            ld_m = f"{row['ld_sectors']}/{row['ld_requests']}" if row else "-"
            st_m = f"{row['st_sectors']}/{row['st_requests']}" if row else "-"
            ok = row is not None and _close(res.loads, row["ld_sectors"], row["ld_requests"]) and \
                _close(res.stores, row["st_sectors"], row["st_requests"])
            print(f"{path:22} {comp.kernel.name:22} {ld_m:>16} {ld_p:>16} {st_m:>14} {st_p:>14} {took:5.2f}s  "
                  f"{'yes' if ok else 'NO'}")
    return 0


def _matches(row, res) -> bool:
    return int(row["ld_requests"]) == res.loads.requests and int(row["st_requests"]) == res.stores.requests


def _close(counts, sectors, requests) -> bool:
    want = ratio(sectors, requests)
    got = counts.sectors_per_request
    if want is None or got is None:
        return want == got
    return abs(got - want) <= 0.05 * want


if __name__ == "__main__":
    sys.exit(main())
