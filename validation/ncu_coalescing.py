"""Nsight Compute's measured sectors per request against irscope's prediction, for every example kernel.

For each kernels/*.py file: Nsight Compute measures every Triton kernel launch the file makes (global
loads and stores: l1tex sectors and requests, as validation/ncu_sectors.py does), and irscope predicts
the same launches offline — in a child process with the GPU hidden, the launch captured in Triton's
interpreter, every program recorded — for the GPU's own target. Prints one row per launch: measured
and predicted sectors/requests and sectors per request, loads and stores, and whether the prediction
is within 5%; the last table is markdown for docs/validation.md.

    python3 validation/ncu_coalescing.py --out $OUT/coalescing.md          # needs a GPU and ncu
    python3 validation/ncu_coalescing.py --measured docs/ncu_raw.csv       # no GPU: a recorded ncu CSV
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOLERANCE = 0.05


# ---------------------------------------------------------------------------------------------- predicted


def predict(path: str, target: str) -> dict:
    """Every launch of every kernel the file makes, in launch order, with whole-grid totals ("rows"), and
    the names of every Triton kernel irscope found, launched or not ("kernels")."""
    sys.path.insert(0, ROOT)
    from irscope.analysis.coalescing.sectors import analyze_coalescing
    from irscope.engine.compile.compilation import compile_launch
    from irscope.engine.session import open_file

    ws = open_file(path, target=target)
    out = []
    for index, launch in enumerate(ws.launches):
        comp = compile_launch(launch, ws.target, ws.user_file.text)
        row = {"kernel": launch.kernel.name, "launch": index, "config": launch.autotune_index,
               "registers": comp.resources.registers if comp.ok else None}
        try:
            result = analyze_coalescing(comp, max_programs=10**9, launch=launch)
        except Exception as exc:  # report the row, keep going
            row["error"] = f"{type(exc).__name__}: {exc}"
            out.append(row)
            continue
        row.update(ld_sectors=result.loads.sectors, ld_requests=result.loads.requests,
                   st_sectors=result.stores.sectors, st_requests=result.stores.requests,
                   ideal_ld=result.loads.ideal_sectors_per_request, ideal_st=result.stores.ideal_sectors_per_request,
                   seconds=round(result.seconds, 3), error=result.error, notes=result.notes)
        out.append(row)
    return {"rows": out, "kernels": sorted({k.name for k in ws.kernels})}


def predict_offline(path: str, target: str) -> dict:
    """`predict` in a child process that sees no GPU: exactly what irscope does on a laptop."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--predict", path, "--target", target],
                          capture_output=True, text=True, cwd=ROOT, env=env)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("PREDICTION "):
            return json.loads(line[len("PREDICTION "):])
    return {"rows": [{"kernel": "?", "error": "irscope failed: " + done.stderr.strip()[-400:]}], "kernels": []}


# ---------------------------------------------------------------------------------------------- measured


def measured_from_ncu(path: str) -> list[dict]:
    sys.path.insert(0, os.path.join(ROOT, "validation"))
    from ncu_sectors import measure
    return measure(path)


def measured_from_csv(csv_path: str) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {}
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            rows.setdefault(row["file"], []).append(row)
    return rows


def gpu_target() -> str:
    import torch
    if torch.cuda.is_available():
        if torch.version.hip:
            return torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
        major, minor = torch.cuda.get_device_capability()
        return f"sm_{major}{minor}"
    return "sm_90"


# ---------------------------------------------------------------------------------------------- compare


def pair(measured: list[dict], predicted: list[dict], kernels: list[str]) -> list[tuple[dict | None, dict | None]]:
    """Every measured launch of a Triton kernel against irscope's prediction of it, in both directions: a
    measured launch with no prediction is a row (None on the right), and so is a prediction with no
    measurement (None on the left).

    Launches of one kernel are taken in order; autotuned kernels run each config several times while
    benchmarking, so each measured row goes with the config whose register count it shows, and a measured
    row whose register count no config has is a row without a prediction. Measured launches of anything
    but the file's Triton kernels (`kernels`: torch's random fills, cuBLAS) are not the comparison's."""
    rows = [m for m in measured if m.get("kernel") in set(kernels) | {p["kernel"] for p in predicted}]
    out: list[tuple[dict | None, dict | None]] = []
    for name in dict.fromkeys([p["kernel"] for p in predicted] + [m["kernel"] for m in rows]):
        preds = [p for p in predicted if p["kernel"] == name]
        meas = [m for m in rows if m["kernel"] == name]
        if any(p.get("config") is not None for p in preds):
            used = set()
            for m in meas:
                same = [p for p in preds if str(p.get("registers")) == str(m.get("registers"))]
                out.append((m, same[0] if same else None))
                used.update(id(p) for p in same[:1])
            out.extend((None, p) for p in preds if id(p) not in used)
            continue
        for i in range(max(len(preds), len(meas))):
            out.append((meas[i] if i < len(meas) else None, preds[i] if i < len(preds) else None))
    return out


def ratio(sectors, requests) -> float | None:
    try:
        s, r = float(sectors), float(requests)
    except (TypeError, ValueError):
        return None
    return s / r if r else None


def close(measured: float | None, predicted: float | None) -> bool:
    if measured is None or predicted is None:
        return measured == predicted
    return abs(predicted - measured) <= TOLERANCE * measured


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--out", help="also write the markdown table here")
    parser.add_argument("--measured", help="a CSV from validation/ncu_sectors.py instead of running ncu")
    parser.add_argument("--target", help="irscope's target (default: this machine's GPU, else sm_90)")
    parser.add_argument("--predict", help=argparse.SUPPRESS)
    parser.add_argument("--one-process", action="store_true",
                        help="predict every file in this process, one after another (the tests' rebuild: one "
                             "import of torch and Triton), not each in a child of its own")
    args = parser.parse_args()
    if args.predict:
        print("PREDICTION " + json.dumps(predict(args.predict, args.target or "sm_90")))
        return 0
    if args.one_process:  # the GPU hidden, as from each child
        os.environ.update(CUDA_VISIBLE_DEVICES="", HIP_VISIBLE_DEVICES="")
    target = args.target or gpu_target()
    files = args.files or sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py")))
    recorded = measured_from_csv(args.measured) if args.measured else None
    table = ["| file | kernel | launch | ld measured | ld irscope | ld ideal | st measured | st irscope | "
             "within 5% |", "|---|---|---|---|---|---|---|---|---|"]
    failures = unmeasured = unpredicted = 0
    for path in files:
        rel = os.path.relpath(os.path.abspath(path), ROOT)
        measured = recorded.get(rel, []) if recorded is not None else measured_from_ncu(os.path.abspath(path))
        prediction = (predict(os.path.abspath(path), target) if args.one_process
                      else predict_offline(os.path.abspath(path), target))
        for m, p in pair(measured, prediction["rows"], prediction["kernels"]):
            if p is None:
                table.append(f"| {rel} | {m['kernel']} | {m['launch']} | "
                             f"{fmt(ratio(m['ld_sectors'], m['ld_requests']))} | no prediction | - | "
                             f"{fmt(ratio(m['st_sectors'], m['st_requests']))} | no prediction | NO |")
                unpredicted += 1
                continue
            if p.get("error") and "ld_sectors" not in p:
                table.append(f"| {rel} | {p['kernel']} | - | - | {p['error']} | - | - | - | NO |")
                failures += 1
                continue
            ld_m = ratio(m["ld_sectors"], m["ld_requests"]) if m else None
            st_m = ratio(m["st_sectors"], m["st_requests"]) if m else None
            ld_p = ratio(p["ld_sectors"], p["ld_requests"])
            st_p = ratio(p["st_sectors"], p["st_requests"])
            ok = m is not None and close(ld_m, ld_p) and close(st_m, st_p)
            verdict = "yes" if ok else ("not measured" if m is None else "NO")
            failures += m is not None and not ok
            unmeasured += m is None
            launch = m["launch"] if m else "-"
            cfg = f" (config {p['config']})" if p.get("config") is not None else ""

            def cell(value, sectors, requests):
                return f"{fmt(value)} ({sectors}/{requests})"
            table.append(
                f"| {rel} | {p['kernel']}{cfg} | {launch} | "
                f"{cell(ld_m, m['ld_sectors'], m['ld_requests']) if m else '-'} | "
                f"{cell(ld_p, p['ld_sectors'], p['ld_requests'])} | {fmt(p.get('ideal_ld'))} | "
                f"{cell(st_m, m['st_sectors'], m['st_requests']) if m else '-'} | "
                f"{cell(st_p, p['st_sectors'], p['st_requests'])} | {verdict} |")
            print(table[-1], file=sys.stderr, flush=True)
    text = "\n".join(table)
    print(f"\nirscope target {target}; sectors per request (sectors/requests), whole grid; "
          f"{failures} row(s) off by more than 5%, {unmeasured} prediction(s) with no measurement, "
          f"{unpredicted} measured launch(es) with no prediction\n")
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 1 if failures or unmeasured or unpredicted else 0


if __name__ == "__main__":
    sys.exit(main())
