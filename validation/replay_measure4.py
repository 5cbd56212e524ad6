"""The fourth H100 run's comparisons recomputed offline with irscope's present code, from the committed pages.

Measured mode compares each line's Nsight Compute counters with irscope's whole-launch predictions. The run's
pages are committed (validation/data/h100_measure4/call*/measure_*/ncu_pages.tar.gz); this script opens a corpus
file as measured mode did (Triton 3.6.0, the release the H100 ran, so that every binary is the one ncu
profiled), finds each compilation's pages (the newest call that has them), predicts the whole launch, and
prints every comparison, `FAIL` where prediction and measurement differ by more than measured mode's 5%.

    python validation/replay_measure4.py FILE [--kernel NAME] [--all]
FILE: a corpus file (tests/corpus/...) or an example (kernels/...); copied to a temporary folder first, as
the run did. --all prints agreeing rows too. Needs the corpus libraries (tests/corpus/requirements.txt).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
RUN = os.path.join(ROOT, "validation", "data", "h100_measure4")
CALLS = [os.path.join(RUN, f"call{c}", f"measure_{c}") for c in "EDCBA"]  # the newest first


def page_text(stem: str, suffix: str) -> tuple[str, str] | None:
    for call in CALLS:
        archive = os.path.join(call, "ncu_pages.tar.gz")
        if not os.path.exists(archive):
            continue
        with tarfile.open(archive) as tar:
            try:
                member = tar.extractfile(f"ncu_pages/{stem}{suffix}")
            except KeyError:
                continue
            if member is not None:
                return os.path.basename(call), member.read().decode()
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--kernel")
    parser.add_argument("--all", action="store_true")
    args = parser.parse_args()
    from irscope.analysis.banks.report import whole_launch_report
    from irscope.analysis.coalescing.sectors import analyze_coalescing
    from irscope.analysis.measured.ncu_parse import parse_raw_page, parse_source_page
    from irscope.analysis.measured.per_line import per_source_line
    from irscope.engine.measure import (
        BANK_TIME_LIMIT,
        WHOLE_GRID_LIMIT,
        child_key,
        predicted_programs,
    )
    from irscope.engine.session import open_file
    from irscope.engine.triton_compat import TRITON_VERSION
    from irscope.findings.agreement import agreements

    if not TRITON_VERSION.startswith("3.6."):
        print(f"Triton {TRITON_VERSION}: the run profiled binaries of Triton 3.6.0; run this with 3.6")
        return 2
    tmp = tempfile.mkdtemp(prefix="irscope-replay-")
    path = os.path.join(tmp, os.path.basename(args.file))
    shutil.copy(os.path.join(ROOT, args.file) if not os.path.isabs(args.file) else args.file, path)
    os.chdir(tmp)
    ws = open_file(path, target="sm_90")
    failed = 0
    for comp in ws.compile_all():
        if args.kernel and comp.kernel.name != args.kernel:
            continue
        key = child_key(ws, comp)
        if key is None or not comp.ok:
            continue
        stem = f"{os.path.basename(path).rsplit('.', 1)[0]}.{key[0].replace(':', '.')}.{key[2]}"
        source = page_text(stem, ".source.csv")
        raw = page_text(stem, ".raw.csv")
        if source is None or raw is None:
            print(f"{stem}: no pages")
            continue
        pages = parse_source_page(source[1])
        lines, mismatch = per_source_line(comp, pages[0])
        if mismatch:
            print(f"{stem} ({source[0]}): {mismatch}")
            continue
        coalescing = analyze_coalescing(comp, max_programs=predicted_programs(comp))
        banks = whole_launch_report(comp, max_programs=WHOLE_GRID_LIMIT, time_limit=BANK_TIME_LIMIT)
        for a in agreements(comp, coalescing, lines, parse_raw_page(raw[1])[0], banks):
            bad = a.agrees is False
            failed += bad
            if bad or args.all:
                print(f"{stem} ({source[0]}) line {a.source_line} {a.what}: measured {a.measured}, predicted "
                      f"{a.predicted} {'FAIL' if bad else 'ok'}{' (' + a.note + ')' if a.note else ''}")
    print(f"{failed} disagreement(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
