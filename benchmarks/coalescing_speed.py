"""Time of the coalescing analysis per example kernel with the default program sampling (compile excluded:
it is Triton's cache's business), against the 1 s budget. No GPU needed.
    python benchmarks/coalescing_speed.py
"""

from __future__ import annotations

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from irscope.analysis.coalescing.sectors import analyze_coalescing  # noqa: E402
from irscope.engine.session import open_file  # noqa: E402

FILES = [
    "add",
    "gelu",
    "helper",
    "layernorm",
    "matmul",
    "misaligned",
    "softmax",
    "strided",
    "transpose",
]


def main() -> int:
    print(f"{'kernel':34} {'programs':>9} {'ld s/r':>7} {'st s/r':>7} {'seconds':>8}")
    worst = 0.0
    for name in FILES:
        ws = open_file(os.path.join(ROOT, "kernels", f"{name}.py"), target="sm_90")
        for comp in ws.compile_all():
            comp.stage("ptx")
            comp.source_map.lines("ttgir")
            start = time.perf_counter()
            result = analyze_coalescing(comp)
            took = time.perf_counter() - start
            worst = max(worst, took)
            ld, st = result.loads.sectors_per_request, result.stores.sectors_per_request
            print(
                f"{name + '/' + comp.kernel.name:34} {len(result.programs):>4} "
                f"of {result.grid[0] * result.grid[1] * result.grid[2]:<3}"
                f" {ld or 0:7.2f} {st or 0:7.2f} {took:8.2f}"
            )
    print(f"slowest: {worst:.2f} s (budget 1 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
