"""irscope's out-of-bounds finding against NVIDIA's compute-sanitizer (memcheck) on a GPU, both directions.

Cases: the fixtures written to go out of bounds or to look as if they did (a pointer table), the examples
(kernels/*.py) and the library test files (tests/corpus/library_tests/, each test id a case of its own on the
GPU, since memcheck's first error ends the process's CUDA context and so the kernels after it).

    python3 validation/sanitizer_bounds.py --gpu DIR [--jobs N]   # on the GPU: memcheck per case in DIR
    python validation/sanitizer_bounds.py --irscope DIR   # here, no GPU: `irscope report --json` per case
    python validation/sanitizer_bounds.py --table DIR     # the comparison, from both

On the GPU each case runs under `compute-sanitizer --tool memcheck` with PYTORCH_NO_CUDA_MEMORY_CACHING=1, so
that every tensor is an allocation of its own and an access past a tensor's end is past an allocation's end
(with PyTorch's caching allocator it would land in the same segment and nobody would notice). A kernel is
*flagged on the GPU* when memcheck reports an invalid global read, write or atomic in it, *clean on the GPU*
when a case that launches it ends with no memcheck error. Compared per kernel name: flagged on the GPU and by
irscope (agree), on the GPU only (missed), by irscope only and clean on the GPU (a false alarm), by irscope
only and never reached clean on the GPU (after a case's first error: not decided).
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY_TESTS = os.path.join(ROOT, "tests", "corpus", "library_tests")
# a sitecustomize that logs the name of every Triton kernel a process launches
LAUNCH_LOG = os.path.join(ROOT, "validation", "probes", "launch_log")
FIXTURES = ["tests/fixtures/stores_past_end.py", "tests/fixtures/pointer_table.py"]


def file_cases() -> list[str]:
    return FIXTURES + sorted(
        os.path.relpath(p, ROOT)
        for p in glob.glob(os.path.join(ROOT, "kernels", "*.py"))
        if not p.endswith(
            "gluon_copy.py"
        )  # Gluon is not interpreted: irscope has no bounds to check
    )


def library_files() -> list[str]:
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(LIBRARY_TESTS, "test_*.py")))


_INVALID = re.compile(r"Invalid __global__ (read|write|atomic)\w* of size (\d+) bytes")
_AT = re.compile(r"^=+\s+at (?:0x[0-9a-f]+ in )?([A-Za-z_][\w]*)")


def memcheck_kernels(log: str) -> dict[str, set[str]]:
    """kernel name -> the kinds of invalid global access memcheck reported in it."""
    found: dict[str, set[str]] = {}
    lines = log.splitlines()
    for i, line in enumerate(lines):
        m = _INVALID.search(line)
        if not m:
            continue
        for after in lines[i + 1 : i + 4]:
            at = _AT.match(after.strip() if after.startswith("=") else after)
            if at:
                found.setdefault(at.group(1), set()).add(m.group(1))
                break
    return found


def _memcheck(name: str, command: list[str], cwd: str, out_dir: str, timeout: int) -> dict:
    """One case under memcheck: its log and its result (NAME.log, NAME.json), written as soon as it ends."""
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1", PYTHONUNBUFFERED="1")
    safe = re.sub(r"[^\w.\[\]-]+", "_", name)
    launched_log = os.path.join(out_dir, f"{safe}.launched")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [LAUNCH_LOG, ROOT, env.get("PYTHONPATH")]))
    env["IRSCOPE_LAUNCH_LOG"] = launched_log
    started = time.monotonic()
    try:
        proc = subprocess.run(
            ["compute-sanitizer", "--tool", "memcheck", "--print-limit", "200", *command],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        out, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = (
            exc.stdout.decode("utf-8", "replace")
            if isinstance(exc.stdout, bytes)
            else exc.stdout or ""
        )
        code = "timeout"
    with open(os.path.join(out_dir, f"{safe}.log"), "w") as f:
        f.write(out)
    result = {
        "case": name,
        "command": command,
        "exit": code,
        "seconds": round(time.monotonic() - started, 1),
        "errors": "ERROR SUMMARY: 0 errors" not in out,
        "flagged": {k: sorted(v) for k, v in memcheck_kernels(out).items()},
        "launched": _read_lines(launched_log),
    }
    with open(os.path.join(out_dir, f"{safe}.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    print(name, code, result["seconds"], result["flagged"], flush=True)
    return result


def _read_lines(path: str) -> list[str]:
    try:
        with open(path) as f:
            return sorted(set(f.read().split()))
    except OSError:
        return []


def gpu_cases(irscope_json: str | None) -> list[tuple[str, list[str], str, int]]:
    """(case, command, folder, timeout): each file; each library test id; and, for every kernel irscope
    flagged in a library test file, each of the file's test ids again with memcheck on that kernel alone
    (`--kernel-name kns=NAME`: faster, and not ended by another kernel's error first)."""
    cases = [(os.path.basename(p), [sys.executable, p], ROOT, 240) for p in file_cases()]
    flagged = {}
    if irscope_json and os.path.exists(irscope_json):
        with open(irscope_json) as f:
            flagged = {case: sorted(r["flagged"]) for case, r in json.load(f).items()}
    for test_file in library_files():
        ids = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", test_file],
            cwd=LIBRARY_TESTS,
            capture_output=True,
            text=True,
        ).stdout.splitlines()
        for test_id in [i for i in ids if "::" in i]:
            run = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", test_id]
            cases.append((test_id, run, LIBRARY_TESTS, 400))
            for kernel in flagged.get(test_file, []):
                only = ["--kernel-name", f"kns={kernel}", *run]
                cases.append((f"{test_id} @{kernel}", only, LIBRARY_TESTS, 400))
    return cases


def run_gpu(out_dir: str, jobs: int, irscope_json: str | None) -> None:
    from concurrent.futures import ThreadPoolExecutor

    os.makedirs(out_dir, exist_ok=True)
    cases = gpu_cases(irscope_json)
    with ThreadPoolExecutor(jobs) as pool:
        for name, command, cwd, timeout in cases:
            pool.submit(_memcheck, name, command, cwd, out_dir, timeout)


def run_irscope(out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    results = {}
    cases = [(os.path.basename(p), ROOT, [p]) for p in file_cases()]
    cases += [(t, LIBRARY_TESTS, ["-m", "pytest", "-q", t]) for t in library_files()]
    for name, cwd, args in cases:
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "irscope", "report", "--json", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
        )
        try:
            kernels = json.loads(proc.stdout)["kernels"]
        except (ValueError, KeyError):
            kernels = None
        results[name] = {
            "exit": proc.returncode,
            "seconds": round(time.monotonic() - started, 1),
            "stderr_tail": proc.stderr.splitlines()[-3:],
            "launched": sorted({k["name"] for k in kernels or []}),
            "flagged": {
                k["name"]: k["out_of_bounds"]["text"]
                for k in kernels or []
                if k.get("out_of_bounds")
            },
        }
        print(name, proc.returncode, sorted(results[name]["flagged"]), flush=True)
    with open(os.path.join(out_dir, "irscope.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)


def load_gpu(directory: str) -> dict[str, dict]:
    out = {}
    for path in glob.glob(os.path.join(directory, "*.json")):
        if os.path.basename(path) != "irscope.json":
            with open(path) as f:
                result = json.load(f)
            out[result["case"]] = result
    return out


def compare(gpu: dict, ours: dict) -> tuple[list[str], dict[str, int]]:
    """The table's rows (one per kernel either side flagged) and the counts, both directions.

    A kernel is clean on the GPU when a case launched it (the launch log), memcheck checked it (every kernel,
    or the one a case names after `@`) and the case ended by itself with no memcheck error. "clean on both": the
    kernels clean on the GPU that irscope did not flag either."""
    flagged_gpu: dict[str, set[str]] = {}
    for result in gpu.values():
        for kernel, kinds in result["flagged"].items():
            flagged_gpu.setdefault(kernel, set()).update(kinds)
    flagged_ours = {k: text for r in ours.values() for k, text in r["flagged"].items()}
    # memcheck's summary says 0 errors: the case ended by itself (a failing test included), nothing flagged
    whole = {c for c, r in gpu.items() if r["exit"] != "timeout" and not r["errors"]}
    # memcheck silent over a whole run: every kernel it launched (and checked: all, or the one named) is clean
    decided_clean = set()
    for case in whole:
        checked = gpu[case]["launched"]
        if " @" in case:
            checked = [k for k in checked if k == case.split(" @")[1]]
        decided_clean.update(checked)
    rows, counts = [], {"agree": 0, "missed": 0, "false alarm": 0, "not decided": 0}
    for kernel in sorted(set(flagged_gpu) | set(flagged_ours)):
        on_gpu, by_us = kernel in flagged_gpu, kernel in flagged_ours
        if on_gpu:
            verdict = "agree" if by_us else "missed"
        else:
            verdict = "false alarm" if kernel in decided_clean else "not decided"
        counts[verdict] += 1
        rows.append(
            f"| {kernel} | {', '.join(sorted(flagged_gpu.get(kernel, []))) or 'none'} | "
            f"{flagged_ours.get(kernel, 'none')} | {verdict} |"
        )
    counts["clean on both"] = len(decided_clean - set(flagged_ours) - set(flagged_gpu))
    return rows, counts


def table(directory: str) -> str:
    gpu = load_gpu(directory)
    with open(os.path.join(directory, "irscope.json")) as f:
        ours = json.load(f)
    rows, counts = compare(gpu, ours)
    lines = [
        f"GPU cases: {len(gpu)}, {sum(1 for r in gpu.values() if r['exit'] != 'timeout' and not r['errors'])}"
        f" of them ended with no memcheck error; irscope cases: {len(ours)}.",
        "",
        "| kernel | memcheck on the GPU | irscope (offline) | verdict |",
        "|---|---|---|---|",
        *rows,
        "",
        "Counts: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
        "",
        "| GPU case | exit | seconds | memcheck flagged |",
        "|---|---|---|---|",
    ]
    for case in sorted(gpu):
        r = gpu[case]
        flagged = [f"{k} ({'/'.join(v)})" for k, v in sorted(r["flagged"].items())]
        lines.append(f"| {case} | {r['exit']} | {r['seconds']} | {', '.join(flagged) or 'none'} |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] not in ("--gpu", "--irscope", "--table"):
        sys.exit(__doc__)
    mode, directory = argv[:2]
    if mode == "--gpu":
        jobs = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else 1
        run_gpu(
            directory,
            jobs,
            os.path.join(ROOT, "validation", "data", "h100_sanitizer", "irscope.json"),
        )
    elif mode == "--irscope":
        run_irscope(directory)
    else:
        print(table(directory))


if __name__ == "__main__":
    main(sys.argv[1:])
