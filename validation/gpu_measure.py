"""On a GPU: irscope's measured mode on every example (and given corpus files), against references.

For each file, `irscope report FILE --measure --json` (GPU visible, ncu on PATH) times every compilation
with triton.testing.do_bench and runs Nsight Compute on its launch; ncu's pages are kept under
OUT/ncu_pages (IRSCOPE_NCU_KEEP), irscope's JSON under OUT/json. Then, per compilation:
  - irscope's per-line counters must come from the binary irscope compiled (its SASS listing and ncu's,
    instruction by instruction; a mismatch is an error row);
  - measured against predicted: sectors per request per source line (loads, stores), registers,
    theoretical occupancy, and each line's shared-memory wavefronts and bank conflicts (the bank model run
    over the whole launch), each within 5%, in both directions (a measured line without a prediction fails);
  - the per-line sums against ncu's own kernel totals (l1tex sectors and requests of global loads), which
    irscope's mapping must not lose or double;
  - do_bench's median beside ncu's gpu__time_duration of the same launch, shown, not compared: do_bench
    includes launch latency, and ncu locks the clocks to base (its default --clock-control base), so
    either can be the larger;
Writes OUT/measure.md (the table for docs/validation.md) and OUT/measure.json; exit 1 on any failure.
    python3 validation/gpu_measure.py --out $OUT/measure [FILES...]
    python3 validation/gpu_measure.py --rebuild validation/data/h100_measure   # no GPU: from the kept JSON
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from irscope.engine.measure import NO_GRID, NOT_LAUNCHED  # noqa: E402

# measured mode's own words for a compilation it cannot launch again: the file does not launch it, or its
# capture holds no grid (a limit of irscope's, said in the row)
NOT_MEASURABLE = (NOT_LAUNCHED, NO_GRID)


def run_file(path: str, out: str, timeout: float = 900) -> dict:
    path_list = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)  # and the corpus's libraries
    env = dict(os.environ, IRSCOPE_NCU_KEEP=os.path.join(out, "ncu_pages"), PYTHONPATH=path_list)
    name = os.path.relpath(path, ROOT).replace("/", "__")
    os.makedirs(os.path.join(out, "json"), exist_ok=True)
    err_path = os.path.join(out, "json", name + ".stderr.txt")  # written as it comes: measured mode's steps
    try:
        with open(err_path, "w") as err:
            done = subprocess.run([sys.executable, "-m", "irscope", "report", path, "--measure", "--json"],
                                  stdout=subprocess.PIPE, stderr=err, text=True, env=env, timeout=timeout,
                                  cwd=os.path.dirname(path))
    except subprocess.TimeoutExpired:  # a row that says so, and the next file still runs
        doc = {"error": f"irscope report --measure did not finish in {timeout:.0f} s", "kernels": []}
        with open(os.path.join(out, "json", name + ".json"), "w") as f:
            json.dump(doc, f)
        return doc
    with open(err_path) as f:
        done.stderr = f.read()
    with open(os.path.join(out, "json", name + ".json"), "w") as f:
        f.write(done.stdout or json.dumps({"error": done.stderr[-2000:], "returncode": done.returncode}))
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1], "kernels": []}


def _num(text) -> float | None:
    try:
        return float(str(text).replace(",", ""))
    except (TypeError, ValueError):
        return None


def _why(note: str) -> str:
    """A ratio's note in the table's few words."""
    return "zero-filled copies" if "cp.async" in note else "masked-off executions"


def rows_of(rel: str, doc: dict) -> list[dict]:
    if doc.get("error") and not doc.get("kernels"):
        if "launches no kernel" in doc["error"]:  # the file's own choice on this GPU (tutorial 10 wants sm_100)
            return [{"file": rel, "kernel": "-", "failed": [], "skipped": "the file launches no kernel on this GPU: "
                     + doc["error"].split("(the last thing it printed: ", 1)[-1].split(")", 1)[0][:120]}]
        return [{"file": rel, "kernel": "-", "failed": [f"irscope failed: {doc['error']}"]}]
    rows = []
    for k in doc.get("kernels", []):
        m = k.get("measured") or {}
        row = {"file": rel, "kernel": k["name"], "failed": list(m.get("errors") or [])}
        if isinstance(k.get("error"), dict) and row["failed"] == ["the kernel did not compile"]:
            # the launch fails to compile on the GPU as well (Triton's JIT raised it in the file's run)
            rows.append({**row, "failed": [], "skipped": "did not compile: " + k["error"]["message"][:160]})
            continue
        if row["failed"] and all(e.startswith(NOT_MEASURABLE) for e in row["failed"]):
            row["skipped"], row["failed"] = row["failed"][0], []  # said, and no defect: nothing to launch again
            rows.append(row)
            continue
        if not m:
            row["failed"].append("not measured")
        t = (m.get("time_ms") or {}).get("median")
        ncu = m.get("ncu") or {}
        gpu_us = _num(ncu.get("gpu_time_us"))
        row.update(time_us=None if t is None else t * 1e3, ncu_us=gpu_us, gbps=m.get("achieved_gbps"),
                   peak=(m.get("peaks") or {}).get("dram_gbps"), tflops=m.get("achieved_tflops"))
        agree = m.get("agreements") or []
        row["lines"] = [a for a in agree if a["source_line"] is not None]
        row["checks"] = len(agree)
        # a prediction of part of the launch (its note says so) is shown, not compared
        bad = [a for a in agree if a["agrees"] is False
               or (not a.get("note") and (a["predicted"] is None) != (a["measured"] is None))]
        row["failed"] += [f"{a['what']} at line {_where(a)}: measured {a['measured']}, predicted "
                          f"{a['predicted']}" for a in bad]
        rows.append(row)
    return rows


def _where(a: dict) -> str:
    """A row's line, or its group of lines compared together (`156+157`)."""
    return "+".join(map(str, a["source_lines"])) if a.get("source_lines") else str(a["source_line"])


def table(rows: list[dict]) -> str:
    out = ["| file | kernel | do_bench median | ncu gpu time | GB/s (% of DRAM peak) | TFLOP/s | sectors/request "
           "per line, measured / predicted | bank conflicts per line, measured / predicted | checks | result |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def f(v, fmt):
            return "-" if v is None else format(v, fmt)
        bw = "-" if r.get("gbps") is None else f"{r['gbps']:.1f}" + (
            f" ({r['gbps'] / r['peak']:.1%})" if r.get("peak") else "")
        lines = "; ".join(f"{_where(a)} {a['what'].split()[0]} {f(a['measured'], 'g')} / "
                          f"{f(a['predicted'], 'g')}" + (f" (not compared: {_why(a['note'])})" if a.get("note") else "")
                          for a in r.get("lines", []) if a["what"].endswith("/request"))
        banks = "; ".join(f"{_where(a)} {f(a['measured'], 'g')} / {f(a['predicted'], 'g')}"
                          + (" (not compared)" if a.get("note") else "")
                          for a in r.get("lines", []) if a["what"] == "bank conflicts")
        verdict = "PASS" if not r["failed"] else "FAIL: " + "; ".join(r["failed"])[:300]
        if r.get("skipped"):
            verdict = f"not measured: {r['skipped']}"
        out.append(f"| {r['file']} | {r['kernel']} | {f(r.get('time_us'), '.2f')} µs | {f(r.get('ncu_us'), '.2f')} µs | "
                   f"{bw} | {f(r.get('tflops'), '.3f')} | {lines or '-'} | {banks or '-'} | {r.get('checks', 0)} | {verdict} |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--out", default=os.environ.get("OUT", "/tmp/irscope-measure"))
    parser.add_argument("--rebuild", help="a folder of a past run: rebuild the table from its json/")
    parser.add_argument("--timeout", type=float, default=900, help="seconds each file may take")
    parser.add_argument("--budget", type=float, help="seconds for all files: a file gets what is left (a device "
                                                     "call has a hard limit), and one not started in time says so")
    parser.add_argument("--jobs", type=int, default=1, help="files measured at once (ncu profiles one at a time; "
                                                             "do_bench then shares the GPU with the others)")
    args = parser.parse_args()
    rows = []
    if args.rebuild:
        for path in sorted(glob.glob(os.path.join(args.rebuild, "json", "*.json"))):
            rel = os.path.basename(path)[:-5].replace("__", "/")
            rows += rows_of(rel, json.load(open(path)))
    else:
        os.makedirs(args.out, exist_ok=True)
        files = [os.path.abspath(p) for p in args.files or sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py")))]
        end = time.monotonic() + (args.budget if args.budget else math.inf)

        def one(path: str) -> dict:
            left = min(args.timeout, end - time.monotonic())
            if left < 20:
                return {"error": "not run: the run's --budget was spent", "kernels": []}
            start = time.monotonic()
            doc = run_file(path, args.out, left)
            print(f"# {os.path.relpath(path, ROOT)}: {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
            return doc
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            docs = pool.map(one, files)
            for path, doc in zip(files, docs):
                found = rows_of(os.path.relpath(path, ROOT), doc)
                rows += found
                print("\n".join(table(found).splitlines()[2:]), flush=True)
    text = table(rows)
    target = args.rebuild or args.out
    if not args.rebuild:
        with open(os.path.join(target, "measure.md"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(target, "measure.json"), "w") as f:
            json.dump(rows, f, indent=1)
    print(text)
    failed = [r for r in rows if r["failed"]]
    skipped = [r for r in rows if r.get("skipped")]
    print(f"\n{len(rows) - len(failed) - len(skipped)} of {len(rows) - len(skipped)} compilations measured and "
          f"agreeing" + (f"; {len(skipped)} not measurable (said in its row)" if skipped else ""))
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
