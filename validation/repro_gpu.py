"""`irscope repro` on a GPU (issue 33): each reproducer runs with plain Triton and compiles to the same cubin as
the original's real launch.

For each file: (1) the file runs as written with plain Python and Triton on the GPU, in an empty Triton cache
(A); (2) irscope, on the same GPU, writes a reproducer for every compilation it shows
(`benchmarks/repro_roundtrip.py --write`); (3) each reproducer runs with plain Python, in an empty cache of
its own (B); (4) the cubin in B must be byte-identical to one of the cubins the original compiled in A, of
the same kernel name. A cubin carries the code and the line table (file names and lines), so a reproducer
that specialized, laid out or named anything differently fails. Files run from their own folder with the
same absolute path in (1) and (2), so that the file names inside the cubins agree.

    python validation/repro_gpu.py FILE... --out DIR [--timeout 240]

Writes DIR/repro_gpu.json (every row, the checksums each reproducer printed) and DIR/repro_gpu.md.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cubins(cache: str) -> dict[str, str]:
    """sha256 of each cubin in a Triton cache -> the kernel's name (its file's stem)."""
    out = {}
    for path in glob.glob(os.path.join(cache, "**", "*.cubin"), recursive=True):
        with open(path, "rb") as f:
            out[hashlib.sha256(f.read()).hexdigest()] = os.path.splitext(os.path.basename(path))[0]
    return out


def _run(cmd: list[str], cwd: str, cache: str, timeout: float) -> tuple[int | None, str, str]:
    env = dict(os.environ, TRITON_CACHE_DIR=cache)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        return proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        return None, (exc.stdout or b"").decode(errors="replace"), "timed out"


def one_file(path: str, timeout: float) -> dict:
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    result: dict = {"file": os.path.relpath(path, ROOT), "rows": []}
    with tempfile.TemporaryDirectory(prefix="irscope-repro-gpu-") as scratch:
        start = time.perf_counter()
        rc, _, err = _run([sys.executable, path], folder, os.path.join(scratch, "A"), timeout)
        result["original"] = {"rc": rc, "seconds": round(time.perf_counter() - start, 1)}
        if rc != 0:
            result["original"]["error"] = err.strip().splitlines()[-1:] if err else []
        original = _cubins(os.path.join(scratch, "A"))
        repros = os.path.join(scratch, "repros")
        os.makedirs(repros)
        writer = [sys.executable, os.path.join(ROOT, "benchmarks", "repro_roundtrip.py"), "--write"]
        rc, out, err = _run([*writer, path, repros], folder, os.path.join(scratch, "W"), timeout)
        written = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        if rc != 0 and not written:
            result["writer_error"] = (err.strip().splitlines() or ["?"])[-1]
        for row in written:
            entry = {k: row.get(k) for k in ("kernel", "launch", "result", "reason")}
            if row.get("result") == "written":
                cache = os.path.join(scratch, f"B{row['launch']}_{len(result['rows'])}")
                rc, out, err = _run([sys.executable, row["repro"]], folder, cache, timeout)
                made = _cubins(cache)
                entry["ran"] = rc == 0
                entry["checksums"] = out.strip().splitlines()
                if rc != 0:
                    entry["error"] = (err.strip().splitlines() or ["?"])[-1]
                entry["cubins"] = len(made)
                entry["cubin_identical"] = bool(made) and all(sha in original for sha in made)
                entry["names"] = sorted(set(made.values()))
            result["rows"].append(entry)
    return result


def table(results: list[dict], command: str) -> str:
    lines = [
        f"Made by `{command}`.",
        "",
        "| file | original ran | reproducers | ran | cubin identical to one the original compiled | notes |",
        "|---|---|---|---|---|---|",
    ]
    total = [0, 0, 0]
    for res in results:
        rows = res["rows"]
        counts = [len(rows), sum(bool(r.get("ran")) for r in rows), sum(bool(r.get("cubin_identical")) for r in rows)]
        total = [a + b for a, b in zip(total, counts)]
        notes = "; ".join(
            dict.fromkeys(
                [r.get("error") or r.get("reason") or "" for r in rows if not r.get("cubin_identical")]
                + ([res["writer_error"]] if res.get("writer_error") else [])
            )
        ).strip("; ")
        lines.append(
            f"| {res['file']} | {res['original']['rc'] == 0} ({res['original']['seconds']} s) | {counts[0]} | "
            f"{counts[1]} | {counts[2]} | {notes.replace('|', '/')} |"
        )
    lines += [
        f"| **total** | | **{total[0]}** | **{total[1]}** | **{total[2]}** | |",
        "",
        f"{total[2]} of {total[0]} reproducers compiled, with plain Triton on the GPU, to a cubin byte-identical to "
        f"one the original's run compiled; {total[1]} ran to the end.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--timeout", type=float, default=240.0)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = []
    for path in args.files:
        results.append(one_file(path, args.timeout))
        res = results[-1]
        print(
            f"{res['file']}: {sum(bool(r.get('cubin_identical')) for r in res['rows'])} of {len(res['rows'])}",
            flush=True,
        )
        with open(os.path.join(args.out, "repro_gpu.json"), "w") as f:
            json.dump(results, f, indent=1)
    command = "python validation/repro_gpu.py " + " ".join(sys.argv[1:])
    text = table(results, command)
    with open(os.path.join(args.out, "repro_gpu.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
