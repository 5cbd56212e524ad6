"""`irscope check PATH...`: the findings of every kernel in files or directories, as a CI gate.

Each file is opened as `irscope report --json` opens it, in a worker process of its own (`--jobs` of them
at once), so the findings are the report's: one engine (`irscope.findings`). This module only
gathers them, drops the ones a baseline accepts, prints them and picks the exit code: 0 nothing at or
above `--fail-on`, 1 something is, 2 bad input. A file that cannot be opened is an `open-failed`
finding, not the end of the run. Imports neither torch nor Triton.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor

from irscope.base.errors import IrscopeError
from irscope.base.missing import decorator_name
from irscope.base.paths import package_module
from irscope.base.textsafe import safe_text, scrub
from irscope.cli import check_output
from irscope.findings.merge import merged
from irscope.findings.model import at_least
from irscope.worker import client
from irscope.worker.client import run_captured

_KERNEL_DEF = re.compile(
    r"^\s*@\s*(?:triton\.)?(?:jit|autotune|heuristics)\b|\btriton\.jit\s*\(", re.MULTILINE
)
_SKIPPED_DIRS = {"__pycache__", "node_modules", "site-packages", "build", "dist"}


def run(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise IrscopeError(f"--jobs {args.jobs}: give 1 or more")
    accepted = read_baseline(args.baseline) if args.baseline else None
    if args.module_command:  # `check -m MODULE ARGS...`: one run, every kernel it launched
        files = ["-m " + " ".join(args.module_command)]
        results = [open_command(args.module_command, args.target)]
        if not results[0]["opened"]:  # nothing else to check: the run's own error, and its status
            sys.stderr.write(results[0]["said"])
            return results[0]["code"]
    else:
        files = collect_files(args.paths, args.exclude)
        results = _open_all(files, args.target, args.jobs, args.file_args)
    found = merged((f for r in results for f in r["findings"]), kernel_launches(results))
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
    for line in check_output.note_lines(results):  # what was not reached: not findings
        print(line, file=sys.stdout if args.format == "text" else sys.stderr)
    print(
        check_output.summary(len(files), kept, matched, results, command=bool(args.module_command)),
        file=sys.stderr,
    )
    return 1 if any(at_least(f["severity"], args.fail_on) for f in kept) else 0


def kernel_launches(results: list[dict]) -> dict[tuple, int]:
    """(file, kernel) -> its captured launches in all, over every file's compilations of it."""
    totals: dict[tuple, int] = {}
    for r in results:
        for key, count in r.get("launch_totals", {}).items():
            totals[key] = totals.get(key, 0) + count
    return totals


# ---------------------------------------------------------------------------------------------- files


def excluded(relative: str, patterns: list[str]) -> bool:
    """Whether a path (relative to the folder walked, or as given) matches an --exclude pattern: the path
    or a folder above it (`ops/backends` leaves out what is under it), or any one folder or file name in
    it (`_ascend` leaves out every folder of that name)."""
    parts = os.path.normpath(relative).replace(os.sep, "/").split("/")
    above = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatch.fnmatchcase(name, pattern) for pattern in patterns for name in (*above, *parts)
    )


def collect_files(paths: list[str], exclude: list[str] | None = None) -> list[str]:
    """Files named, and under each directory every .py that defines a Triton kernel, in a stable order;
    none that an --exclude pattern matches."""
    exclude = exclude or []
    out: list[str] = []
    for path in paths:
        if not os.path.exists(path):
            raise IrscopeError(
                f"{path}: no such file or directory; give Python files or directories of them"
            )
        if os.path.isdir(path):
            found = []
            for root, dirs, names in os.walk(path):
                below = os.path.relpath(root, path)
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if not d.startswith(".")
                    and d not in _SKIPPED_DIRS
                    and not excluded(os.path.join(below, d), exclude)
                )
                found += [
                    os.path.join(root, n)
                    for n in sorted(names)
                    if n.endswith(".py")
                    and not excluded(os.path.join(below, n), exclude)
                    and defines_kernel(os.path.join(root, n))
                ]
            if not found:  # a CI step pointed at the wrong folder must not pass in silence
                left_out = f" that --exclude {' '.join(exclude)} leaves in" if exclude else ""
                raise IrscopeError(
                    f"{path}: no .py file under it{left_out} defines a Triton kernel (@triton.jit); give "
                    f"the folder that holds your kernels, or the files that launch them"
                )
            out += found
        elif not path.endswith((".py", ".ipynb")):
            raise IrscopeError(
                f"{path} is not a Python file or a notebook; give .py or .ipynb files, or directories"
            )
        elif not excluded(path, exclude):
            out.append(path)
    return list(dict.fromkeys(os.path.normpath(p) for p in out))


def defines_kernel(path: str) -> bool:
    """Whether the file's code (not its strings: FlagGems' code generators write `@triton.jit` into the
    sources they generate) decorates a function with a jit, an autotune or heuristics, or calls
    `triton.jit(...)`. A file Python cannot parse is judged by its text, and opened to say why."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return False
    if _KERNEL_DEF.search(text) is None:  # the cheap test first: most files say nothing of it
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            decorator_name(d) in ("jit", "autotune", "heuristics") for d in node.decorator_list
        ):
            return True
        if isinstance(node, ast.Call) and _dotted(node.func) in ("triton.jit", "jit"):
            return True
    return False


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


# ---------------------------------------------------------------------------------------------- opening


_MAIN_GUARD = re.compile(
    r"""^\s*if\s+(?:__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__)""",
    re.MULTILINE,
)


def library_module(path: str) -> str | None:
    """The package root of a module of a package that has no `__main__` code (`if __name__ ==
    "__main__":`), else None: run as its module, such a module defines its kernels and launches none of
    them itself, so the modules of one package are opened together (commands/modules.py)."""
    found = package_module(path)
    if found is None:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    return None if _MAIN_GUARD.search(text) else found[0]


def _tasks(files: list[str], jobs: int) -> list[list[str]]:
    """What each worker opens: a file with `__main__` code (or outside a package) alone; a package's
    library modules together, in up to `jobs` parts (each part imports the package once)."""
    alone: list[list[str]] = []
    packages: dict[str, list[str]] = {}
    for path in files:
        root = library_module(path)
        if root is None:
            alone.append([path])
        else:
            packages.setdefault(root, []).append(path)
    together: list[list[str]] = []
    for modules in packages.values():
        # a part of a few modules is not worth a process
        parts = max(1, min(jobs, len(modules) // 8))
        size = -(-len(modules) // parts)
        together += [modules[i : i + size] for i in range(0, len(modules), size)]
    return together + alone


def _open_all(files: list[str], target: str | None, jobs: int, file_args: list[str]) -> list[dict]:
    # each worker a fork of one warm process: torch and Triton loaded once (a shared one serves as well)
    if len(files) > 1 and client.shared_warm() is None:
        client.keep_warm(yield_to_screen=False)
    pool = ThreadPoolExecutor(max_workers=jobs)

    def open_task(task: list[str]) -> list[dict]:
        if len(task) == 1 and library_module(task[0]) is None:
            return [open_one(task[0], target, file_args)]
        return open_modules(task, target)

    try:
        done = [r for rs in pool.map(open_task, _tasks(files, jobs)) for r in rs]
        order = {path: i for i, path in enumerate(files)}
        return sorted(done, key=lambda r: order[r["path"]])
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
        ["report", "--json", "--unlaunched-ok", path]
        + (["--target", target] if target else [])
        + ["--", *file_args]
    )
    code, out, err = run_captured(argv, path)
    doc = _json_answer(out)
    if doc is None:
        return failed_result(path, open_failed(path, err, code))
    return result_of(path, doc)


def _json_answer(out: str):
    """A worker's JSON answer, or None when it printed none (it failed); scrubbed again, since JSON brings
    escaped control bytes back."""
    try:
        return scrub(json.loads(out)) if out.strip() else None
    except json.JSONDecodeError:
        return None


def open_command(command: list[str], target: str | None) -> dict:
    """`check -m MODULE ARGS...`: the command run once in a worker, as `report --json -m` runs it; its
    findings are at each kernel's own file and line."""
    shown = "-m " + " ".join(command)
    argv = ["report", "--json", *(["--target", target] if target else []), "-m", *command]
    code, out, err = run_captured(argv, shown)
    doc = _json_answer(out)
    if doc is None:
        return dict(
            failed_result(shown, open_failed(shown, err, code, command=True)), said=err, code=code
        )
    return result_of(shown, doc)


def open_modules(paths: list[str], target: str | None) -> list[dict]:
    """A package's library modules (library_module), opened in turn by one worker (commands/modules.py)."""
    argv = ["modules", *paths, *(["--target", target] if target else [])]
    code, out, err = run_captured(argv, paths[0])
    doc = _json_answer(out)
    answers = doc.get("files") if isinstance(doc, dict) else None
    if answers is None:  # the worker itself failed: every module of its part with the same cause
        return [failed_result(path, open_failed(path, err, code)) for path in paths]
    out_results = []
    for answer in answers:
        path = answer["path"]
        if "report" in answer:
            out_results.append(result_of(path, answer["report"]))
        else:
            said = f"irscope: error: {answer['error']}\n" + "".join(
                f"  your code | {line}\n" for line in answer["traceback"].splitlines()
            )
            out_results.append(failed_result(path, open_failed(path, said, answer["code"])))
    return out_results


def failed_result(path: str, finding: dict) -> dict:
    return {"path": path, "kernels": 0, "findings": [finding], "opened": False}


def result_of(path: str, doc: dict) -> dict:
    """One file's (or one command's) report document as check keeps it: its findings, each with the
    launches its compilation stands for (findings/merge.py), the launches of each kernel, and what the
    run did not reach."""
    findings = []
    totals: dict[tuple, int] = {}
    for number, entry in enumerate(doc.get("kernels", [])):
        launches = int(entry.get("launch_count") or 1)
        kernel_file = _relative(entry.get("file") or path)
        totals[(kernel_file, entry["name"])] = (
            totals.get((kernel_file, entry["name"]), 0) + launches
        )
        for f in entry.get("findings") or []:
            findings.append(
                dict(
                    f,
                    file=_relative(f.get("file") or path),
                    launches=f.get("holds_for_launches") or launches,
                    compilation=(path, number),
                    kernel_file=kernel_file,
                )
            )
    return {
        "path": path,
        "kernels": len(doc.get("kernels", [])),
        "findings": findings,
        "opened": True,
        "notes": list(doc.get("notes") or []) + ([doc["warning"]] if doc.get("warning") else []),
        "not_launched": _not_launched(doc),
        "launch_totals": totals,
    }


def _not_launched(doc: dict) -> list[dict]:
    """The kernels the run did not launch, helpers left out where the run could tell them (missing)."""
    if doc.get("missing"):
        return [
            {
                "name": m["kernel"],
                "line": m["line"],
                "file": _relative(m["file"]) if m.get("file") else None,
            }
            for m in doc["missing"]
        ]
    return [
        {"name": k["name"], "line": k["def_line"], "file": None}
        for k in doc.get("not_launched") or []
    ]


def open_failed(path: str, err: str, code: int, command: bool = False) -> dict:
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
        "fix": "make the command run with `python " + path + "` (no GPU needed)"
        if command
        else "make the file run with `python FILE` (or `python -m` for a module of a package; no GPU "
        "needed), or give irscope the arguments it lacks (see `irscope report --help`)",
        "what_if": None,
    }


def _relative(path: str) -> str:
    if os.path.isabs(path):
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else path
    return os.path.normpath(path)


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
