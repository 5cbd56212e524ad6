"""How fast is the source map? Parse + map every stage of the largest example kernel.

For each target, the example kernel with the most IR lines (all stages together) is compiled (Triton's
cache makes that cheap after the first run; SASS is disassembled before the clock starts), then each
stage is mapped from scratch in a fresh SourceMap, several times; the best and median times are shown
with lines/s, and the peak Python memory of one mapping (tracemalloc) per IR line.
Target (issue 3): every stage of the largest kernel in ≤ 50 ms in total on the 2-core dev machine.
    python benchmarks/sourcemap_speed.py [kernels/matmul.py ...] [--target sm_90 gfx942] [--repeat 20]
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import time
import tracemalloc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from irscope.engine.session import open_file  # noqa: E402
from irscope.ir.sourcemap import SourceMap  # noqa: E402


def fresh_map(comp) -> SourceMap:
    texts = {stage: comp.stage(stage) for stage in comp.stage_names}
    return SourceMap(comp.stage_names, texts.__getitem__, comp.kernel.file)


def map_stage(comp, stage: str) -> float:
    sm = fresh_map(comp)
    if stage == "sass":
        # the SASS map reads the PTX map (inline-asm line shifts); time SASS on its own
        sm.lines("ptx")
    start = time.perf_counter()
    sm.lines(stage)
    sm.mapped_fraction(stage)
    sm.ir_lines(stage, comp.kernel.line)
    return time.perf_counter() - start


def peak_bytes(comp, stage: str) -> int:
    sm = fresh_map(comp)
    if stage == "sass":
        sm.lines("ptx")
    tracemalloc.start()
    sm.lines(stage)
    sm.ir_lines(stage, comp.kernel.line)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "files", nargs="*", help="kernel files (default: every example in kernels/)"
    )
    parser.add_argument("--target", nargs="+", default=["sm_90", "gfx942"])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py")))
    worst_total = 0.0
    for target in args.target:
        comps = []
        for path in files:
            ws = open_file(path, target=target)
            comps += [c for c in ws.compile_all() if c.ok]
        sizes = [(sum(len(c.stage(s).splitlines()) for s in c.stage_names), c) for c in comps]
        size, comp = max(sizes, key=lambda pair: pair[0])
        print(
            f"\n{target}: largest kernel {comp.kernel.name} ({os.path.basename(comp.kernel.file)}), "
            f"{size} IR lines in {len(comp.stage_names)} stages"
        )
        print(
            f"  {'stage':<8}{'lines':>7}{'best ms':>10}{'median ms':>11}{'lines/s':>12}{'peak KiB':>10}"
            f"{'B/line':>8}{'mapped':>8}{'recorded':>9}"
        )
        total_best = 0.0
        for stage in comp.stage_names:
            n = len(comp.stage(stage).splitlines())
            times = [map_stage(comp, stage) for _ in range(args.repeat)]
            best, median = min(times), statistics.median(times)
            total_best += median
            peak = peak_bytes(comp, stage)
            sm = fresh_map(comp)
            print(
                f"  {stage:<8}{n:>7}{best * 1e3:>10.2f}{median * 1e3:>11.2f}{n / median:>12,.0f}"
                f"{peak / 1024:>10.0f}{peak / max(n, 1):>8.0f}{sm.mapped_fraction(stage):>8.3f}"
                f"{sm.recorded_fraction(stage):>9.3f}"
            )
        verdict = "ok" if total_best <= 0.050 else "OVER the 50 ms target"
        print(f"  all stages (sum of medians): {total_best * 1e3:.1f} ms  [{verdict}]")
        worst_total = max(worst_total, total_best)
    return 0 if worst_total <= 0.050 else 1


if __name__ == "__main__":
    sys.exit(main())
