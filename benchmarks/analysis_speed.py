"""How long the memory analyses take per compilation, after the compile: memory ops of every stage,
per-line marks of every stage, why-not-vectorized, occupancy, and the what-if recompile.

    python benchmarks/analysis_speed.py [--targets sm_90,gfx942]

Prints one row per compilation, milliseconds (first call on a compilation; the analyses cache on it).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from irscope.analysis.marks import line_marks  # noqa: E402
from irscope.analysis.memory.ops import memory_ops  # noqa: E402
from irscope.analysis.occupancy import occupancy  # noqa: E402
from irscope.analysis.vectorize.what_if import what_if  # noqa: E402
from irscope.analysis.vectorize.why_not import why_not_vectorized  # noqa: E402
from irscope.engine.session import open_file  # noqa: E402

KERNELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels")


def ms(fn):
    start = time.perf_counter()
    result = fn()
    return (time.perf_counter() - start) * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--targets", default="sm_90,gfx942")
    args = parser.parse_args()
    print(
        f"{'kernel':<24} {'target':<7} {'lines':>6} {'ops':>5} {'mem ms':>7} {'marks ms':>8} "
        f"{'why ms':>7} {'occ ms':>6} {'what-if ms':>10}"
    )
    for target in args.targets.split(","):
        for name in sorted(f for f in os.listdir(KERNELS) if f.endswith(".py")):
            ws = open_file(os.path.join(KERNELS, name), target=target)
            for i, comp in enumerate(ws.compile_all()):
                if not comp.ok:
                    continue
                # SASS disassembled here
                lines = sum(len(comp.stage(s).splitlines()) for s in comp.stage_names)
                _ = comp.resources, comp.source_map
                for stage in comp.stage_names:
                    comp.source_map.lines(stage)
                t_mem, ops = ms(lambda: memory_ops(comp))
                t_marks, _ = ms(lambda: [line_marks(comp, s) for s in comp.stage_names])
                t_why, diags = ms(lambda: why_not_vectorized(comp))
                t_occ, _ = ms(lambda: occupancy(comp))
                t_what, _ = ms(lambda: what_if(comp, diags)) if diags else (0.0, None)
                label = f"{name[:-3]}[{i}]"
                print(
                    f"{label:<24} {target:<7} {lines:>6} {len(ops):>5} {t_mem:>7.1f} {t_marks:>8.1f} "
                    f"{t_why:>7.1f} {t_occ:>6.2f} {t_what:>10.1f}"
                )


if __name__ == "__main__":
    main()
