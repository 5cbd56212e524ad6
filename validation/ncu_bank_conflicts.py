"""Nsight Compute's shared-memory wavefronts, per SASS instruction, against irscope's bank-conflict prediction.

For each kernels/*.py file irscope records every launch offline, in a child process that sees no GPU (as
on a laptop): the PTX, the grid, the block and the value of each kernel parameter. Nsight Compute profiles
the same file on the GPU (the SourceCounters section: per SASS instruction "Instructions Executed", "L1
Wavefronts Shared" and its "Ideal"). Then irscope's prediction is made from the recorded PTX and launch,
and compared both ways: every measured LDS / STS / LDSM / STSM / LDGSTS / HGMMA must have a predicted PTX
access and every predicted access a measured instruction. Instructions of one source line and kind are
paired in sorted order (ptxas reorders them); a row fails when any pair is more than 5% apart. HGMMA
(wgmma) reads are not modelled: irscope predicts no excess for them, and the row checks that the measured
wavefronts equal their ideal. A `.source_ptx.csv` beside the data is checked against the recorded PTX.

    python3 validation/ncu_bank_conflicts.py --out $OUT/bank          # GPU and ncu: measure, record, compare
    python3 validation/ncu_bank_conflicts.py --measured validation/data/bank_conflicts   # no GPU: committed data

Writes DIR/<file>.launches.json, DIR/<file>.{source_sass,source_cuda_sass,source_ptx,raw}.csv and
DIR/bank_conflicts.md (the table for docs/validation.md). Exit status 1 when a row fails.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "validation"))
TOLERANCE = 0.05
NCU_LAUNCHES = 8
RECORD_TIMEOUT = 100   # seconds for one file's offline recording
PROFILE_TIMEOUT = 90   # seconds for one file under Nsight Compute
_NOT_CODE = (".loc", ".file", ".section", "//", "$L__", "{", "}")
# reads irscope does not model are compared per launch (their count, and no excess measured): ptxas
# attributes HGMMA to other source lines than the PTX wgmma it came from
_PER_LAUNCH = ("wgmma", "bulk")


# ---------------------------------------------------------------------------------------------- recorded


def record(path: str, target: str, out_dir: str) -> str:
    """Every launch of `path` as irscope sees it offline: PTX, grid, block, parameters (DIR/<stem>.launches.json)."""
    from irscope.core.analysis.shared_banks import launch_inputs
    from irscope.core.analysis.ptx_program import parse_program
    from irscope.core.compile import compile_launch
    from irscope.core.session import open_file
    from irscope.core.triton_compat import TRITON_VERSION

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
            inputs = launch_inputs(comp, program.params, program.threads)
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


def record_offline(path: str, target: str, out_dir: str) -> str | None:
    """`record` in a child process that sees no GPU; None and the reason on stderr when it fails."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "", "PYTHONPATH": ROOT}
    try:
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--record", path, "--target", target,
                               "--out", out_dir], capture_output=True, text=True, cwd=ROOT, env=env,
                              timeout=RECORD_TIMEOUT)
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
    names = "|".join(kernels) or "."
    log = []
    try:
        done = subprocess.run(["ncu", "-c", str(NCU_LAUNCHES), "-k", f"regex:^({names})$", "--section",
                               "SourceCounters", "--section", "LaunchStats", "--import-source", "yes", "--export", stem,
                               "-f", sys.executable, path], capture_output=True, text=True, cwd=ROOT,
                              timeout=PROFILE_TIMEOUT)
        log.append(f"profile rc={done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    except (subprocess.TimeoutExpired, OSError) as exc:
        log.append(f"profile failed: {exc}")
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
    return stem


# ---------------------------------------------------------------------------------------------- compare


def ptx_locations(ptx: str) -> list[tuple[str, int] | None]:
    """Per PTX line, the (file base name, line) of the last `.loc` before it: what ptxas saw."""
    import re
    files = {int(m.group(1)): os.path.basename(m.group(2)) for m in re.finditer(r'\.file\s+(\d+)\s+"([^"]+)"', ptx)}
    out, current = [], None
    for line in ptx.splitlines():
        m = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)", line)
        if m:
            current = (files.get(int(m.group(1)), "?"), int(m.group(2))) if int(m.group(2)) else None
        out.append(current)
    return out


def predicted_groups(doc: dict, launch: dict) -> tuple[dict, list[str]]:
    """(file, line, kind) -> [(wavefronts, ideal, executions, modelled)] for one recorded launch."""
    from irscope.core.analysis.bank_conflicts import LaunchInputs, predict
    from irscope.core.analysis.ptx_program import parse_program
    ptx = doc["ptx"][launch["ptx"]]
    inputs = LaunchInputs(tuple(launch["grid"]), launch["threads"], launch["params"])
    report = predict(parse_program(ptx), inputs)
    where = ptx_locations(ptx)
    groups: dict = {}
    for r in report.accesses:
        file_line = ("all lines", 0) if r.access.kind in _PER_LAUNCH else where[r.access.line] or ("?", 0)
        value = (r.wavefronts, r.ideal, r.executions, r.access.not_modelled is None and not r.unknown)
        groups.setdefault((*file_line, r.access.kind), []).append(value)
    return groups, report.stops


def pair_launches(measured: list[dict], recorded: list[dict]) -> list[tuple[dict, dict | None]]:
    """Each measured launch with the recorded launch of the same kernel, grid and block (the autotuner's
    benchmark runs of one config are launches of the same binary); registers break a tie."""
    out = []
    for m in measured:
        same = [r for r in recorded if r["kernel"] == m["kernel"] and "grid" in r
                and tuple(r["grid"]) == tuple(m["grid"] or ()) and r["threads"] == (m["block"] or (0,))[0]]
        if len(same) > 1 and m.get("registers") is not None:
            same = [r for r in same if r.get("registers") == m["registers"]] or same
        out.append((m, same[0] if same else None))
    return out


def close(measured: int | None, predicted: int | None) -> bool:
    if measured is None or predicted is None:
        return False
    return abs(predicted - measured) <= TOLERANCE * measured


def compare_file(stem_path: str) -> tuple[list[dict], list[str]]:
    """Rows (one per launch, source line and kind) and problems for one file's recorded and measured data."""
    from ncu_shared import measured_launches, read_rows
    with open(stem_path + ".launches.json") as f:
        doc = json.load(f)
    problems = [f"{doc['file']}: launch {r['launch']} ({r['kernel']}): {r['error']}"
                for r in doc["launches"] if r.get("error")]
    measured = measured_launches(stem_path)
    ptx_page = stem_path + ".source_ptx.csv"
    if os.path.exists(ptx_page) or os.path.exists(ptx_page + ".gz"):
        ran = [r[1].strip() for r in read_rows(ptx_page)[1:] if len(r) > 1]
        ran = [t for t in ran if t and not t.startswith(_NOT_CODE)]
        if ran and not any(_same_code(ran, text) for text in doc["ptx"].values()):
            problems.append(f"{doc['file']}: the PTX Nsight Compute saw is not the PTX irscope recorded")
    rows, cache = [], {}
    pairs = pair_launches(measured, doc["launches"])
    seen = {id(rec) for _, rec in pairs}
    if len(measured) < NCU_LAUNCHES:  # Nsight Compute measured every launch: each recorded one must be there
        problems += [f"{doc['file']}: recorded launch {r['launch']} of {r['kernel']} was not measured"
                     for r in doc["launches"] if id(r) not in seen and not r.get("error")]
    for index, (m, rec) in enumerate(pairs):
        if rec is None:
            problems.append(f"{doc['file']}: measured launch {index} of {m['kernel']} (grid {m['grid']}) has no "
                            f"recorded launch")
            continue
        key = (rec["ptx"], json.dumps(rec["params"]), tuple(rec["grid"]))
        if key not in cache:
            cache[key] = predicted_groups(doc, rec)
        groups, stops = cache[key]
        problems += [f"{doc['file']}: {m['kernel']}: {s}" for s in stops]
        measured_groups: dict = {}
        for r in m["rows"]:
            if r.never:
                if r.wavefronts:
                    problems.append(f"{doc['file']}: {r.text} never executes yet has {r.wavefronts} wavefronts")
                continue
            file_line = ("all lines", 0) if r.kind in _PER_LAUNCH else (r.file or "?", r.line or 0)
            measured_groups.setdefault((*file_line, r.kind), []).append(r)
        for key3 in sorted(set(groups) | set(measured_groups), key=lambda k: (k[0], k[1], k[2])):
            rows.append(_row(doc, m, rec, index, key3, groups.get(key3, []), measured_groups.get(key3, [])))
    return rows, problems


def _same_code(ran: list[str], recorded: str) -> bool:
    mine = [t.strip() for t in recorded.splitlines()]
    mine = [t for t in mine if t and not t.startswith(_NOT_CODE)]
    return mine == ran


def _row(doc, m, rec, index, key, predicted, measured) -> dict:
    file, line, kind = key
    meas = sorted(measured, key=lambda r: (r.wavefronts or 0, r.executed))
    pred = sorted(predicted, key=lambda p: (p[0], p[2]))
    if kind in _PER_LAUNCH:
        ok = len(meas) == len(pred) and all(r.wavefronts == r.ideal for r in meas)
    else:
        ok = len(meas) == len(pred) and all(p[3] and close(r.wavefronts, p[0]) for r, p in zip(meas, pred))
    return {"file": doc["file"], "kernel": m["kernel"], "config": rec.get("config"), "launch": index,
            "source": file if not line else f"{file}:{line}", "kind": kind, "measured_n": len(meas), "predicted_n": len(pred),
            "measured": sum(r.wavefronts or 0 for r in meas), "measured_ideal": sum(r.ideal or 0 for r in meas),
            "predicted": sum(p[0] for p in pred), "predicted_ideal": sum(p[1] for p in pred),
            "executed": sum(r.executed for r in meas), "predicted_executed": sum(p[2] for p in pred), "ok": ok}


def table(rows: list[dict]) -> list[str]:
    """Markdown, identical launches (autotuner benchmark runs) folded into one row with their count."""
    out = ["| file | kernel | source line | kind | instr. (measured/irscope) | executed (measured/irscope) | "
           "wavefronts measured (ideal) | wavefronts irscope (ideal) | launches | within 5% |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    folded: dict = {}
    for r in rows:
        key = tuple((k, v) for k, v in r.items() if k != "launch")
        folded[key] = folded.get(key, 0) + 1
    for key, launches in folded.items():
        r = dict(key)
        kind = r["kind"] + (" (not modelled: no excess)" if r["kind"] in _PER_LAUNCH else "")
        cfg = f" (config {r['config']})" if r["config"] is not None else ""
        irscope = "-" if r["kind"] in _PER_LAUNCH else f"{r['predicted']} ({r['predicted_ideal']})"
        out.append(f"| {r['file']} | {r['kernel']}{cfg} | {r['source']} | {kind} | {r['measured_n']}/{r['predicted_n']} "
                   f"| {r['executed']}/{r['predicted_executed']} | {r['measured']} ({r['measured_ideal']}) | {irscope} "
                   f"| {launches} | {'yes' if r['ok'] else 'NO'} |")
    return out


def gpu_run(files: list[str], target: str, data: str) -> None:
    """Record every file offline (8 at a time) and profile each one as soon as it is recorded (3 at a time:
    the recording runs on the CPU, and Nsight Compute's own work is mostly CPU too)."""
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=8) as recorders, ThreadPoolExecutor(max_workers=3) as profilers:
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
    print(text)
    if args.out and args.measured is None:
        with open(os.path.join(data, "bank_conflicts.md"), "w") as f:
            f.write(text + "\n")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
