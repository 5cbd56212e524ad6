"""`irscope check PATH...`: the findings of every kernel in files or directories, as a CI gate.

Each file is opened as `irscope report --json` opens it, in a worker process of its own (`--jobs` of them
at once), so the findings are the report's: one engine (`irscope.findings`). This module only
gathers them, drops the ones a baseline accepts, prints them and picks the exit code: 0 nothing at or
above `--fail-on`, 1 something is, 2 bad input. A file that cannot be opened is an `open-failed`
finding, not the end of the run. Imports neither torch nor Triton.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor

from irscope.base.errors import IrscopeError
from irscope.base.textsafe import safe_text, scrub
from irscope.cli import check_output
from irscope.findings.model import at_least, rank_key
from irscope.worker import client
from irscope.worker.client import run_captured

_KERNEL_DEF = re.compile(
    r"^\s*@\s*(?:triton\.)?(?:jit|autotune|heuristics)\b|\btriton\.jit\s*\(", re.MULTILINE
)
_SKIPPED_DIRS = {"__pycache__", "node_modules", "site-packages", "build", "dist"}


def run(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise IrscopeError(f"--jobs {args.jobs}: give 1 or more")
    files = collect_files(args.paths)
    accepted = read_baseline(args.baseline) if args.baseline else None
    results = _open_all(files, args.target, args.jobs, args.file_args)
    found = sorted(_dedupe(f for r in results for f in r["findings"]), key=rank_key)
    if args.write_baseline:
        write_baseline(args.write_baseline, found)
        print(
            f"irscope: wrote {len(found)} finding(s) of {len(files)} file(s) to {args.write_baseline}",
            file=sys.stderr,
        )
        return 0
    kept, matched = apply_baseline(found, accepted) if accepted is not None else (found, 0)
    sys.stdout.write(check_output.render(args.format, kept, results))
    sys.stdout.flush()
    print(check_output.summary(len(files), kept, matched), file=sys.stderr)
    return 1 if any(at_least(f["severity"], args.fail_on) for f in kept) else 0


# ---------------------------------------------------------------------------------------------- files


def collect_files(paths: list[str]) -> list[str]:
    """Files named, and under each directory every .py that defines a Triton kernel, in a stable order."""
    out: list[str] = []
    for path in paths:
        if not os.path.exists(path):
            raise IrscopeError(
                f"{path}: no such file or directory; give Python files or directories of them"
            )
        if os.path.isdir(path):
            found = []
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(
                    d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS
                )
                found += [
                    os.path.join(root, n)
                    for n in sorted(names)
                    if n.endswith(".py") and defines_kernel(os.path.join(root, n))
                ]
            if not found:  # a CI step pointed at the wrong folder must not pass in silence
                raise IrscopeError(
                    f"{path}: no .py file under it defines a Triton kernel (@triton.jit); give the "
                    f"folder that holds your kernels, or the files that launch them"
                )
            out += found
        elif not path.endswith(".py"):
            raise IrscopeError(f"{path} is not a Python file; give .py files or directories")
        else:
            out.append(path)
    return list(dict.fromkeys(os.path.normpath(p) for p in out))


def defines_kernel(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return _KERNEL_DEF.search(f.read()) is not None
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------- opening


def _open_all(files: list[str], target: str | None, jobs: int, file_args: list[str]) -> list[dict]:
    if (
        len(files) > 1
    ):  # each file's worker a fork of one warm process: torch and Triton loaded once
        client.keep_warm(yield_to_screen=False)
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        return list(pool.map(lambda path: open_one(path, target, file_args), files))
    # Ctrl+C: end the workers, so that their threads return and nothing is left
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        client.stop_all()
        raise
    finally:
        pool.shutdown(wait=True)


def open_one(path: str, target: str | None, file_args: list[str] = ()) -> dict:
    """One file through a worker, as `irscope report --json` runs it: its findings, or one `open-failed`.
    `file_args`: the file's own command line (`check PATH... -- ARGS`)."""

    argv = (
        ["report", "--json", path] + (["--target", target] if target else []) + ["--", *file_args]
    )
    code, out, err = run_captured(argv, path)
    try:
        # JSON brings escaped control bytes back
        doc = scrub(json.loads(out)) if out.strip() else None
    except json.JSONDecodeError:
        doc = None
    if doc is None:
        return {
            "path": path,
            "kernels": 0,
            "findings": [open_failed(path, err, code)],
            "opened": False,
        }
    findings = []
    for entry in doc.get("kernels", []):
        for f in entry.get("findings") or []:
            findings.append(dict(f, file=_relative(f.get("file") or path)))
    return {
        "path": path,
        "kernels": len(doc.get("kernels", [])),
        "findings": findings,
        "opened": True,
        "notes": list(doc.get("notes") or []) + ([doc["warning"]] if doc.get("warning") else []),
    }


def open_failed(path: str, err: str, code: int) -> dict:
    """The worker's one-line error as a finding at the line of the file it names, when it names one."""
    lines = [safe_text(line) for line in err.splitlines() if line.strip()]
    said = next(
        (line for line in lines if line.startswith("irscope: error:")), lines[0] if lines else ""
    )
    message = (
        said.removeprefix("irscope: error:").strip()
        or f"the file could not be opened (exit status {code})"
    )
    line = None
    base = os.path.basename(path)
    for text in lines:  # the last frame of the user's traceback in this file
        m = re.search(r'File "([^"]+)", line (\d+)', text)
        if m and os.path.basename(m.group(1)) == base:
            line = int(m.group(2))
    return {
        "rule": "open-failed",
        "severity": "error",
        "kernel": None,
        "file": _relative(path),
        "source_line": line,
        "column": None,
        "source_text": None,
        "cost": {"value": None, "unit": "none", "text": "nothing in this file was checked"},
        "weight": 1.0,
        "message": message,
        "fix": "make the file run with `python FILE` (no GPU needed), or give irscope the "
        "arguments it lacks (see `irscope report --help`)",
        "what_if": None,
    }


def _relative(path: str) -> str:
    if os.path.isabs(path):
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else path
    return os.path.normpath(path)


def _dedupe(findings) -> list[dict]:
    """One finding per (file, line, column, rule, message): a kernel launched twice the same way is one."""
    seen, out = set(), []
    for f in findings:
        key = (f["file"], f["source_line"], f["column"], f["rule"], f["message"])
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


# ---------------------------------------------------------------------------------------------- baseline


def _baseline_key(f: dict) -> tuple:
    """Not the line number: an edit above a finding must not make it new."""
    return (f["file"], f.get("kernel"), f["rule"], f.get("source_text") or f.get("message"))


def write_baseline(path: str, findings: list[dict]) -> None:
    entries = [
        dict(zip(("file", "kernel", "rule", "source_text"), _baseline_key(f))) for f in findings
    ]
    try:
        with open(path, "w", encoding="utf-8") as out:
            json.dump({"irscope_baseline": 1, "accepted": entries}, out, indent=2)
            out.write("\n")
    except OSError as err:
        raise IrscopeError(
            f"--write-baseline {path}: {err.strerror}; give a writable path"
        ) from None


def read_baseline(path: str) -> dict[tuple, int]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        entries = doc["accepted"]
        keys = [(e["file"], e.get("kernel"), e["rule"], e.get("source_text")) for e in entries]
    except OSError as err:
        raise IrscopeError(
            f"--baseline {path}: {err.strerror}; give a file written by --write-baseline"
        ) from None
    except (ValueError, KeyError, TypeError):
        raise IrscopeError(
            f"--baseline {path}: not a baseline irscope wrote; write one with --write-baseline"
        ) from None
    counts: dict[tuple, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return counts


def apply_baseline(findings: list[dict], accepted: dict[tuple, int]) -> tuple[list[dict], int]:
    """Findings the baseline does not accept, and how many it did (each entry accepts one finding)."""
    left = dict(accepted)
    kept, matched = [], 0
    for f in findings:
        key = _baseline_key(f)
        if left.get(key, 0) > 0:
            left[key] -= 1
            matched += 1
        else:
            kept.append(f)
    return kept, matched
