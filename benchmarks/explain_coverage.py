"""How much of the IR of the example kernels does the explainer explain?

For every example kernel in kernels/, compiled for sm_90, sm_100 and gfx942, every stage (TTIR, TTGIR,
LLVM IR, PTX, SASS, AMDGCN) is explained line by line with irscope.ir.explain. Each distinct op or
opcode (with its modifiers: `ld.global.v4.b32` and `ld.global.b32` count apart; TTGIR layout kinds
count too) is one item; it is explained when irscope has a note for the op and for every modifier.
Prints a table per stage and the items still missing. Target: 100%.

--corpus does the same for the real-world files of tests/corpus (Triton's tutorials, library drivers,
snippets: code not written for irscope), each opened in a process of its own as `irscope report` would
(no GPU, the file's own launches), with its first --per-file compilations per target (FlagGems alone
records 161 autotune configs). A file that does not open is listed and left out.
    python benchmarks/explain_coverage.py [--targets sm_90,sm_100,gfx942] [--kernels kernels/*.py]
    python benchmarks/explain_coverage.py --corpus [FILTER ...] [--targets sm_90,gfx942] [--per-file 12]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from irscope.engine.session import open_file  # noqa: E402
from irscope.ir.explain import explain_stage, lowering_story  # noqa: E402


def collect(
    paths: list[str], targets: list[str], per_file: int | None = None
) -> tuple[dict[str, dict[str, bool]], dict[str, float]]:
    """stage -> {op: explained?} over every kernel, target and stage; and timings."""
    items: dict[str, dict[str, bool]] = defaultdict(dict)
    lines = explain_s = 0.0
    stories = story_s = 0.0
    for path in paths:
        for target in targets:
            for comp in open_file(path, target=target).compile_all()[:per_file]:
                if not comp.ok:
                    print(
                        f"  {os.path.basename(path)} {target}: did not compile ({comp.failure.message})",
                        file=sys.stderr,
                    )
                    continue
                for stage in comp.stage_names:
                    if stage == "source":
                        continue
                    text = comp.stage(stage)
                    # warm the SASS control-field cache outside the clock
                    explain_stage("sass", "", comp)
                    start = time.perf_counter()
                    explained = explain_stage(stage, text, comp)
                    explain_s += time.perf_counter() - start
                    lines += len(explained)
                    for e in explained:
                        if e.op is not None:
                            items[stage][e.op] = items[stage].get(e.op, True) and e.known
                # parse outside the clock
                comp.source_map.lines("ptx" if comp.target.is_nvidia else "amdgcn")
                for line in range(1, len(comp.stage("source").splitlines()) + 1):
                    start = time.perf_counter()
                    lowering_story(comp, line)
                    story_s += time.perf_counter() - start
                    stories += 1
    return items, {
        "us_per_line": 1e6 * explain_s / max(lines, 1),
        "lines": lines,
        "ms_per_story": 1e3 * story_s / max(stories, 1),
        "stories": stories,
    }


def corpus_child(path: str, targets: list[str], per_file: int) -> None:
    """In a process of its own (the file's code runs in it): print the items of one corpus file as JSON."""
    items, _ = collect([path], targets, per_file)
    print("\n" + json.dumps(items))


def collect_corpus(
    filters: list[str], targets: list[str], per_file: int, timeout: float
) -> dict[str, dict[str, bool]]:
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from corpus import CORPUS, corpus_files

    items: dict[str, dict[str, bool]] = defaultdict(dict)
    env = dict(
        os.environ,
        CUDA_VISIBLE_DEVICES="",
        PYTHONPATH=os.pathsep.join(
            [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        ),
    )
    for rel in corpus_files(filters or None):
        # the file runs outside the checkout, as a user's would
        with tempfile.TemporaryDirectory() as scratch:
            try:
                done = subprocess.run(
                    [
                        sys.executable,
                        os.path.abspath(__file__),
                        "--child",
                        os.path.join(CORPUS, rel),
                        "--targets",
                        ",".join(targets),
                        "--per-file",
                        str(per_file),
                    ],
                    cwd=scratch,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
            except subprocess.TimeoutExpired:
                print(f"  {rel}: left out (over {timeout:g} s)", file=sys.stderr)
                continue
        if done.returncode != 0 or not done.stdout.strip():
            why = (done.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"  {rel}: left out ({why[:160]})", file=sys.stderr)
            continue
        for stage, ops in json.loads(done.stdout.strip().splitlines()[-1]).items():
            for op, known in ops.items():
                items[stage][op] = items[stage].get(op, True) and known
        print(
            f"  {rel}: {sum(len(o) for o in items.values())} distinct ops so far",
            file=sys.stderr,
            flush=True,
        )
    return items


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--targets", default=None, help="default: sm_90,sm_100,gfx942; with --corpus sm_90,gfx942"
    )
    parser.add_argument(
        "--kernels", nargs="*", default=sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py")))
    )
    parser.add_argument(
        "--corpus",
        nargs="*",
        default=None,
        metavar="FILTER",
        help="the files of tests/corpus (those whose path contains a FILTER) instead of kernels/",
    )
    parser.add_argument(
        "--per-file", type=int, default=12, help="with --corpus: compilations per file and target"
    )
    parser.add_argument(
        "--timeout", type=float, default=600, help="with --corpus: seconds per file"
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        corpus_child(args.child, args.targets.split(","), args.per_file)
        return 0
    if args.corpus is not None:
        targets = (args.targets or "sm_90,gfx942").split(",")
        items, timing = collect_corpus(args.corpus, targets, args.per_file, args.timeout), None
    else:
        items, timing = collect(args.kernels, (args.targets or "sm_90,sm_100,gfx942").split(","))
    total = explained = 0
    print(f"{'stage':8} {'distinct ops':>12} {'explained':>10} {'fraction':>9}")
    for stage in ("ttir", "ttgir", "llir", "ptx", "sass", "amdgcn"):
        ops = items.get(stage, {})
        n, k = len(ops), sum(ops.values())
        total, explained = total + n, explained + k
        print(f"{stage:8} {n:12d} {k:10d} {k / n if n else 1:9.1%}")
    print(f"{'all':8} {total:12d} {explained:10d} {explained / total if total else 1:9.1%}")
    if timing:
        print(
            f"\nexplain_line: {timing['us_per_line']:.0f} µs per line over {timing['lines']:.0f} lines; "
            f"lowering_story: {timing['ms_per_story']:.1f} ms per source line over {timing['stories']:.0f} lines"
        )
    for stage, ops in items.items():
        missing = sorted(op for op, ok in ops.items() if not ok)
        if missing:
            print(f"\nnot explained in {stage} ({len(missing)}): " + "  ".join(missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
