"""`irscope check` on the kernel libraries of tests/corpus/requirements.txt, as a new user would run it: over
each library's installed package directory, and through a small test file per library
(tests/corpus/library_tests/, `check -m pytest FILE`). No GPU: the virtual sm_90.

    python validation/check_libraries.py [NAME...]      # all, or the runs named (e.g. mingru.dir)

Each run's stdout (the JSON document), stderr and wall time go to validation/data/check_libraries/; the
table in docs/validation.md is printed from them by `--table`. Runs one at a time (`--jobs 2` within a
directory run), from the site-packages folder for a directory (paths in the output are then the package's)
and from the test files' folder for a test run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "validation", "data", "check_libraries")
TESTS = os.path.join(ROOT, "tests", "corpus", "library_tests")
SITE = sysconfig.get_paths()["purelib"]

# (library as installed, its package folder, its test file)
LIBRARIES = [
    ("mingru-scans", "mingru", "test_mingru_scans.py"),
    ("jvp-flash-attention", "jvp_flash_attention", "test_jvp_flash_attention.py"),
    ("adasplash", "adasplash", "test_adasplash.py"),
    ("gemlite", "gemlite", "test_gemlite.py"),
    ("liger-kernel", "liger_kernel", "test_liger_kernel.py"),
    ("fla-core", "fla", "test_fla.py"),
    ("flag-gems", "flag_gems", "test_flag_gems.py"),
]


def runs() -> list[tuple[str, str, list[str]]]:
    """(name, folder to run in, irscope's arguments after `check`)."""
    out = []
    for _, package, test in LIBRARIES:
        out.append((f"{package}.dir", SITE, [package, "--jobs", "2", "--format", "json"]))
        out.append((f"{package}.tests", TESTS, ["--format", "json", "-m", "pytest", "-q", test]))
    return out


def run_one(name: str, cwd: str, args: list[str]) -> None:
    env = dict(os.environ, PYTHONPATH=ROOT)
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "irscope", "check", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - started
    with open(os.path.join(DATA, f"{name}.json"), "w") as f:
        f.write(proc.stdout)
    with open(os.path.join(DATA, f"{name}.stderr.txt"), "w") as f:
        f.write(proc.stderr)
    with open(os.path.join(DATA, f"{name}.run.json"), "w") as f:
        json.dump(
            {"command": ["irscope", "check", *args], "cwd": cwd, "exit": proc.returncode,
             "seconds": round(seconds, 1)},
            f,
            indent=2,
        )
    print(f"{name}: exit {proc.returncode}, {seconds:.0f} s", flush=True)


def table() -> str:
    """One row per run: files (or the run), kernels not launched, findings by severity, open-failed, seconds."""
    rows = [
        "| run | files | compilations | findings (error / warning / info) | open-failed | not launched | exit | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, _, _ in runs():
        try:
            with open(os.path.join(DATA, f"{name}.run.json")) as f:
                meta = json.load(f)
        except (OSError, ValueError):
            continue  # not run
        try:
            with open(os.path.join(DATA, f"{name}.json")) as f:
                doc = json.load(f)
        except (OSError, ValueError):  # no document: the run's own error line (stderr) says why
            rows.append(f"| {name} | no answer (see {name}.stderr.txt) | | | | | {meta['exit']} | {meta['seconds']:.0f} |")
            continue
        found = doc["findings"]
        count = {s: sum(f["severity"] == s for f in found) for s in ("error", "warning", "info")}
        failed = sum(f["rule"] == "open-failed" for f in found)
        files = doc["files"]
        rows.append(
            f"| {name} | {len(files) if name.endswith('.dir') else '1 run'} | "
            f"{sum(x['kernels'] for x in files)} | {len(found)} ({count['error']} / {count['warning']} / "
            f"{count['info']}) | {failed} | {sum(len(x.get('not_launched', [])) for x in files)} | "
            f"{meta['exit']} | {meta['seconds']:.0f} |"
        )
    return "\n".join(rows)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--table"]:
        print(table())
        return
    os.makedirs(DATA, exist_ok=True)
    for name, cwd, args in runs():
        if not argv or name in argv:
            run_one(name, cwd, args)


if __name__ == "__main__":
    main(sys.argv[1:])
