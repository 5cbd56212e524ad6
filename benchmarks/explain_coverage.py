"""How much of the IR of the example kernels does the explainer explain?

For every example kernel in kernels/, compiled for sm_90, sm_100 and gfx942, every stage (TTIR, TTGIR,
LLVM IR, PTX, SASS, AMDGCN) is explained line by line with irscope.core.explain. Each distinct op or
opcode (with its modifiers: `ld.global.v4.b32` and `ld.global.b32` count apart; TTGIR layout kinds
count too) is one item; it is explained when irscope has a note for the op and for every modifier.
Prints a table per stage and the items still missing. Target: 100%.
    python benchmarks/explain_coverage.py [--targets sm_90,sm_100,gfx942] [--kernels kernels/*.py]
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from irscope.core.explain import explain_stage, lowering_story  # noqa: E402
from irscope.core.session import open_file  # noqa: E402


def collect(paths: list[str], targets: list[str]) -> tuple[dict[str, dict[str, bool]], dict[str, float]]:
    """stage -> {op: explained?} over every kernel, target and stage; and timings."""
    items: dict[str, dict[str, bool]] = defaultdict(dict)
    lines = explain_s = 0.0
    stories = story_s = 0.0
    for path in paths:
        for target in targets:
            for comp in open_file(path, target=target).compile_all():
                if not comp.ok:
                    print(f"  {os.path.basename(path)} {target}: did not compile ({comp.failure.message})", file=sys.stderr)
                    continue
                for stage in comp.stage_names:
                    if stage == "source":
                        continue
                    text = comp.stage(stage)
                    explain_stage("sass", "", comp)   # warm the SASS control-field cache outside the clock
                    start = time.perf_counter()
                    explained = explain_stage(stage, text, comp)
                    explain_s += time.perf_counter() - start
                    lines += len(explained)
                    for e in explained:
                        if e.op is not None:
                            items[stage][e.op] = items[stage].get(e.op, True) and e.known
                comp.source_map.lines("ptx" if comp.target.is_nvidia else "amdgcn")  # parse outside the clock
                for line in range(1, len(comp.stage("source").splitlines()) + 1):
                    start = time.perf_counter()
                    lowering_story(comp, line)
                    story_s += time.perf_counter() - start
                    stories += 1
    return items, {"us_per_line": 1e6 * explain_s / max(lines, 1), "lines": lines,
                   "ms_per_story": 1e3 * story_s / max(stories, 1), "stories": stories}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="sm_90,sm_100,gfx942")
    parser.add_argument("--kernels", nargs="*", default=sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py"))))
    args = parser.parse_args()
    items, timing = collect(args.kernels, args.targets.split(","))
    total = explained = 0
    print(f"{'stage':8} {'distinct ops':>12} {'explained':>10} {'fraction':>9}")
    for stage in ("ttir", "ttgir", "llir", "ptx", "sass", "amdgcn"):
        ops = items.get(stage, {})
        n, k = len(ops), sum(ops.values())
        total, explained = total + n, explained + k
        print(f"{stage:8} {n:12d} {k:10d} {k / n if n else 1:9.1%}")
    print(f"{'all':8} {total:12d} {explained:10d} {explained / total if total else 1:9.1%}")
    print(f"\nexplain_line: {timing['us_per_line']:.0f} µs per line over {timing['lines']:.0f} lines; "
          f"lowering_story: {timing['ms_per_story']:.1f} ms per source line over {timing['stories']:.0f} lines")
    for stage, ops in items.items():
        missing = sorted(op for op, ok in ops.items() if not ok)
        if missing:
            print(f"\nnot explained in {stage} ({len(missing)}): " + "  ".join(missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
