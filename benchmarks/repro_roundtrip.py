"""`irscope repro`, round-tripped (issue 33): for every compilation irscope shows of each file, write its
reproducer, open the reproducer as irscope opens any file, compile it in an empty Triton cache, and compare
every stage with the original's, byte for byte.

    python benchmarks/repro_roundtrip.py [FILTER ...] [--examples] [--corpus] [--timeout 300] [--out DIR]

Each file runs in a child process of its own (GPU hidden, fresh Triton cache, a scratch working folder; a
tutorial from a Triton checkout's layout, as benchmarks/corpus.py runs it); the child opens the file once and
round-trips each compilation the report compiles by default. Corpus files run only where written for the
installed Triton (tests/corpus/triton_releases.toml). Writes DIR/repro_roundtrip.json (every row) and
DIR/repro_roundtrip.md (the table, with the command that made it).

With --apart, for files whose original and a reproducer do not fit in memory together (the newest Gluon
tutorial 14's GPU-sized tensors on a 24 GB machine): the child writes every reproducer and the original's
stages, and exits; then each reproducer is opened and compared in a fresh process of its own, one at a time.
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402  (benchmarks/corpus.py: the corpus's files, releases and checkout layout)


def child(path: str, out_dir: str, check: bool = True) -> None:
    """In the child: open `path`, then round-trip each compilation; one JSON line per compilation. Without
    `check`, only write each reproducer (validation/repro_gpu.py runs them on a GPU).

    Each round trip runs in a forked copy of this process (engine/forked_map.py), as many at once as there
    are cores (IRSCOPE_JOBS caps them; 1: one copy at a time, for files whose reproducers hold more memory
    than two at once fit in), a batch at a time so that the rows come out as they are done: a
    reproducer's GPU-sized inputs stay alive in the process that opened it (Gluon tutorial 02's round trips,
    one after the other in one process, ran a 128 GB machine out of memory), and a copy gives its memory
    back when it exits."""
    from irscope.base.errors import IrscopeError
    from irscope.engine.forked_map import available_jobs, forked_map
    from irscope.engine.session import open_file

    try:
        ws = open_file(path)
    except IrscopeError as err:  # the file opens to nothing to reproduce: its one line
        print(f"irscope: error: {err}", file=sys.stderr)
        sys.exit(2)
    launched = []
    for launch in ws.launches:
        if launch.kernel not in launched:
            launched.append(launch.kernel)
    work = [
        (ws, kernel, number, comp, os.path.join(out_dir, f"repro_{index}.py"), check)
        for index, (kernel, number, comp) in enumerate(
            (kernel, number, comp)
            for kernel in launched
            for number, comp in enumerate(ws.compile(kernel))
        )
    ]
    batch = available_jobs()
    for at in range(0, len(work), batch):
        for row in forked_map(_one_round_trip, work[at : at + batch], at_once=batch):
            print(json.dumps(row), flush=True)


class SavedStages:
    """An original compilation's stages as the child saved them (--apart): what `repro.round_trip` compares."""

    def __init__(self, path: str) -> None:
        with open(path, encoding="utf-8") as f:
            saved = json.load(f)
        self.target = saved["target"]
        self.stages = saved["stages"]
        self.stage_names = list(self.stages)

    def stage(self, name: str) -> str:
        return self.stages[name]


def save_stages(comp, path: str) -> None:
    from irscope.commands.repro import STAGES_COMPARED

    stages = {name: comp.stage(name) for name in STAGES_COMPARED if name in comp.stage_names}
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"target": str(comp.target), "stages": stages}, f)


def check_one(repro: str, stages: str) -> None:
    """In a fresh process (--apart): round-trip one written reproducer against the original's saved stages;
    prints its stage lines as one JSON list."""
    from irscope.commands.repro import round_trip

    print(json.dumps(round_trip(SavedStages(stages), repro)), flush=True)


def _one_round_trip(item) -> dict:
    """Write one compilation's reproducer and, with `check`, round-trip it: its row of the table."""
    from irscope.commands.repro import render, round_trip

    ws, kernel, number, comp, target, check = item
    row = {"kernel": ws.kernel_label(kernel), "launch": number}
    start = time.perf_counter()
    try:
        if comp.failure is not None:
            raise RuntimeError(f"the original does not compile: {comp.failure.message}")
        with open(target, "w", encoding="utf-8") as f:
            f.write(render(comp, row["kernel"], ws.user_file.shown))
        row["repro"] = target
        if not check:
            save_stages(comp, target + ".stages.json")
            row["result"] = "written"
            return row
        row["stages"] = round_trip(comp, target)
        row["result"] = (
            "identical"
            if row["stages"] and all("byte-identical" in s for s in row["stages"])
            else "differs"
        )
    except Exception as exc:  # noqa: BLE001 - a row of the table, whatever went wrong
        row["result"] = "failed"
        row["reason"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    row["seconds"] = round(time.perf_counter() - start, 2)
    return row


def run_file(rel: str, path: str, timeout: float, apart: bool = False) -> dict:
    with tempfile.TemporaryDirectory(prefix="irscope-repro-") as scratch:
        path, env = corpus.scratch_run(rel, path, scratch)
        repros = os.path.join(scratch, "repros")
        os.makedirs(repros)
        mode = "--write" if apart else "--child"
        cmd = [sys.executable, os.path.abspath(__file__), mode, path, repros]
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                cmd, cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout
            )
            stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as exc:
            stdout, stderr, rc = (exc.stdout or b"").decode(), "", None
        rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
        if apart:
            for row in rows:
                left = timeout - (time.perf_counter() - start)
                if row.get("result") == "written" and left > 0:
                    _check_apart(row, scratch, env, left)
    said = [line for line in stderr.splitlines() if line.startswith("irscope: error")]
    return {
        "file": rel,
        "rows": rows,
        "seconds": round(time.perf_counter() - start, 1),
        "ended": "timed out"
        if rc is None
        else ("ok" if rc == 0 else (said[-1] if said else f"exit {rc}")),
    }


def _check_apart(row: dict, scratch: str, env: dict, timeout: float) -> None:
    """Round-trip a written reproducer in a fresh process, after the original's has exited (--apart)."""
    start = time.perf_counter()
    cmd = [sys.executable, os.path.abspath(__file__), "--check-one", row["repro"]]
    try:
        done = subprocess.run(
            cmd, cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout
        )
        lines = [line for line in done.stdout.splitlines() if line.startswith("[")]
        if done.returncode != 0 or not lines:
            raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()[-200:]}")
        row["stages"] = json.loads(lines[-1])
        identical = row["stages"] and all("byte-identical" in s for s in row["stages"])
        row["result"] = "identical" if identical else "differs"
    except subprocess.TimeoutExpired:
        pass  # the file's time ran out: written, not round-tripped (as the rows after it)
    except RuntimeError as exc:
        row["result"] = "failed"
        row["reason"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    row["seconds"] = round(row.get("seconds", 0) + time.perf_counter() - start, 2)


def files(args) -> list[tuple[str, str]]:
    out = []
    if args.examples or not args.corpus:
        for path in sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py"))):
            out.append((os.path.relpath(path, ROOT), path))
    if args.corpus or not args.examples:
        version = corpus.installed_triton()
        for rel in corpus.corpus_files(args.filters or None):
            if corpus.fits(corpus.written_for(rel), version):
                out.append((rel, os.path.join(corpus.CORPUS, rel)))
    if args.filters:
        out = [(rel, p) for rel, p in out if any(s in rel for s in args.filters)]
    return [(rel, p) for rel, p in out if not any(s in rel for s in args.exclude or ())]


def table(results: list[dict], command: str) -> str:
    lines = [
        f"Made by `{command}` (Triton {corpus.installed_triton()}).",
        "",
        "| file | compilations | byte-identical | differ | failed | s | what went wrong |",
        "|---|---|---|---|---|---|---|",
    ]
    totals = [0, 0, 0, 0]
    for res in results:
        rows = res["rows"]
        counts = [
            len(rows),
            sum(r["result"] == "identical" for r in rows),
            sum(r["result"] == "differs" for r in rows),
            sum(r["result"] == "failed" for r in rows),
        ]
        totals = [a + b for a, b in zip(totals, counts)]
        wrong = "; ".join(
            dict.fromkeys(
                [
                    r.get("reason")
                    or ", ".join(s for s in r.get("stages", ()) if "DIFFERS" in s)
                    or "written, not round-tripped in the file's time"
                    for r in rows
                    if r["result"] != "identical"
                ]
                + ([] if res["ended"] == "ok" else [res["ended"]])
            )
        )
        lines.append(
            f"| {res['file']} | {counts[0]} | {counts[1]} | {counts[2]} | {counts[3]} | {res['seconds']} | "
            f"{wrong.replace('|', '/')} |"
        )
    lines.append(
        f"| **total** | **{totals[0]}** | **{totals[1]}** | **{totals[2]}** | **{totals[3]}** | | |"
    )
    lines += [
        "",
        f"{totals[1]} of {totals[0]} compilations round-trip byte-identical in every stage "
        f"({sum(r['ended'] != 'ok' for r in results)} file(s) did not end normally).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["--child"], ["--write"]):
        child(argv[1], argv[2], check=argv[0] == "--child")
        return 0
    if argv[:1] == ["--check-one"]:
        check_one(argv[1], argv[1] + ".stages.json")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("filters", nargs="*", help="keep files whose path contains one of these")
    parser.add_argument("--examples", action="store_true", help="the examples in kernels/ only")
    parser.add_argument("--corpus", action="store_true", help="the corpus only")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per file")
    parser.add_argument(
        "--out", default="repro_roundtrip", help="folder for the JSON and the table"
    )
    parser.add_argument(
        "--apart",
        action="store_true",
        help="round-trip each reproducer in a fresh process once the original's has exited (memory)",
    )
    parser.add_argument(
        "--exclude",
        nargs="+",
        metavar="TEXT",
        help="leave out files whose path contains one of these",
    )
    args = parser.parse_args(argv)
    results = []
    os.makedirs(args.out, exist_ok=True)
    for rel, path in files(args):
        res = run_file(rel, path, args.timeout, args.apart)
        results.append(res)
        with open(os.path.join(args.out, "repro_roundtrip.json"), "w") as f:
            json.dump(results, f, indent=1)  # after each file: a run cut short keeps what it did
        print(
            f"{rel}: {sum(r['result'] == 'identical' for r in res['rows'])} of {len(res['rows'])} identical, "
            f"{res['ended']}, {res['seconds']} s",
            flush=True,
        )
    command = "python benchmarks/repro_roundtrip.py " + " ".join(argv)
    with open(os.path.join(args.out, "repro_roundtrip.md"), "w") as f:
        f.write(table(results, command.strip()) + "\n")
    print(table(results, command.strip()))
    return 0


if __name__ == "__main__":
    # each file's time is a new worker's, as a user gets it: never a fork of a shared warm process
    os.environ.pop("IRSCOPE_WARM_SOCKET", None)
    sys.exit(main())
