"""Does irscope open real-world files it was never written for? The corpus in tests/corpus: Triton's
tutorials, short scripts calling Triton kernel libraries, community snippets (tests/corpus/README.md).

Each file is opened the way a user would: `python -m irscope report FILE --json`, no flags, in a fresh
process with the GPU hidden (CUDA_VISIBLE_DEVICES=""), stdin closed, under a time limit, with a fresh
Triton cache of its own and a fresh FlagGems cache (--warm: the environment's caches). A file is "ok"
when the command exits 0, prints valid JSON with at least one compilation, and every compilation has
every stage of its target (sm_90: ttir ttgir llir ptx sass; a Gluon kernel has no ttir). Otherwise the
outcome is the one line that says why: irscope's own error line, the timeout, or what the JSON lacks.
Target (issue 9): >= 95% ok, each under 30 s.

Every file declares the Triton releases it was written for (tests/corpus/triton_releases.toml): a
tutorial its folder's release, a driver the range its pinned library declares. The table shows them, and
the summary gives two rates: all files, and the files written for the Triton that runs them (the
interpreter running this script: run it with another environment's python to measure another release).
    python benchmarks/corpus.py [FILTER ...] [--jobs 1] [--timeout 30] [--warm] [--json]
FILTER keeps the files whose path under tests/corpus contains it (`drivers/`, `triton-3.6`). Drivers
need the libraries of tests/corpus/requirements.txt importable (`pip install --no-deps -r ...`).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import importlib.metadata
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")
sys.path.insert(0, ROOT)

from irscope.base.names import ALL_STAGES, stages_of  # noqa: E402  (plain data: no torch, no Triton)

TARGET_SECONDS = 30.0
TARGET_RATE = 0.95
RELEASES = os.path.join(CORPUS, "triton_releases.toml")


@dataclasses.dataclass
class Outcome:
    file: str  # path under tests/corpus
    ok: bool
    cause: str | None  # one line when not ok
    found: int = 0  # distinct kernels the report names (launched or not)
    compiled: int = 0  # distinct kernels with a compilation that has every stage
    stages: tuple[str, ...] = ()  # stages every compilation has (source left out)
    seconds: float = 0.0
    warning: str | None = (
        None  # irscope's warning on an ok file (e.g. the file raised after its launches)
    )
    written_for: str = "any"  # the Triton releases the file was written for (triton_releases.toml)
    specializations: int = 0  # compilations in the report (what opening the file compiled)
    named: int = 0  # specializations its benchmarks reach, named and not compiled (--launch N)
    # CPU seconds of the run and the processes it waited for (compile-ahead children, ptxas, nvdisasm): on a
    # busy machine the wall time grows with the load, this far less. Only with --jobs 1 (runs at once add up).
    cpu_seconds: float | None = None


# Test files of the kernel libraries, run with `irscope check -m pytest FILE` (validation/check_libraries.py),
# not opened as scripts: nothing in them runs as __main__.
RUN_BY_PYTEST = "library_tests/"


def corpus_files(filters: list[str] | None = None) -> list[str]:
    """Every .py file of the corpus that is run, as paths under tests/corpus, sorted: not the sibling modules
    a copied file imports (triton_releases.toml's [imported]); `filters` keep those containing any of the
    given substrings."""
    with open(RELEASES, "rb") as f:
        imported = set(tomllib.load(f).get("imported", {}).get("files", []))
    found = []
    for folder, _, names in os.walk(CORPUS):
        for name in names:
            rel = os.path.relpath(os.path.join(folder, name), CORPUS)
            if name.endswith(".py") and rel not in imported and not rel.startswith(RUN_BY_PYTEST):
                found.append(rel)
    if filters:
        found = [f for f in found if any(s in f for s in filters)]
    return sorted(found)


def written_for(rel: str, table: dict[str, str] | None = None) -> str:
    """The Triton releases a corpus file was written for: the longest key of triton_releases.toml that is
    its path or a prefix of it (KeyError when none is)."""
    if table is None:
        with open(RELEASES, "rb") as f:
            table = tomllib.load(f)["written_for"]
    keys = [k for k in table if rel == k or rel.startswith(k)]
    if not keys:
        raise KeyError(f"{rel} declares no Triton release in {os.path.relpath(RELEASES, ROOT)}")
    return table[max(keys, key=len)]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.match(r"\d+(\.\d+)*", text).group(0).split("."))


def fits(releases: str, version: str) -> bool:
    """Whether a Triton `version` ("3.9.0", "3.6.0+git…") is among `releases`: "any", "3.6" (any 3.6.x),
    "3.6-3.9" (3.6.x through 3.9.x) or ">=3.3" (that release or later)."""
    if releases == "any":
        return True
    have = _version(version)
    if releases.startswith(">="):
        want = _version(releases[2:])
        return have[: len(want)] >= want
    low, _, high = releases.partition("-")
    low_v, high_v = _version(low), _version(high or low)
    return low_v <= have[: len(low_v)] and have[: len(high_v)] <= high_v


def installed_triton() -> str:
    """The Triton the files run with: the one this interpreter has (they run under sys.executable)."""
    return importlib.metadata.version("triton")


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _error_line(stderr: str, rc: int) -> str:
    """irscope's own error line (it prints exactly one), else the last line the process wrote."""
    for line in stderr.splitlines():
        for prefix in ("irscope: error: ", "irscope: internal error: "):
            if line.startswith(prefix):
                return ("internal error: " if "internal" in prefix else "") + line[len(prefix) :]
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {rc} with nothing on stderr"


def judge(rel: str, rc: int, stdout: str, stderr: str, seconds: float) -> Outcome:
    """The outcome of one `report --json` run: ok, or the one reason it is not."""
    out = Outcome(rel, False, None, seconds=round(seconds, 2))
    doc = None
    try:
        doc = json.loads(stdout) if stdout.strip() else None
    except json.JSONDecodeError:
        pass
    if isinstance(doc, dict):
        kernels = doc.get("kernels") or []
        names = {k.get("name") for k in kernels} | {
            k.get("name") for k in doc.get("not_launched") or []
        }
        out.found = len(names)
        out.warning = doc.get("warning")
        out.specializations, out.named = len(kernels), len(doc.get("named") or [])
        complete, missing = set(), []
        common: set[str] | None = None
        for k in kernels:
            # a Gluon kernel has no TTIR (names.ABSENT_STAGES)
            want = stages_of(
                str(k.get("target", "")).startswith("sm_"), k.get("language") or "triton"
            )[1:]
            have = [s for s in want if s in (k.get("stages") or {})]
            common = set(have) if common is None else common & set(have)
            if len(have) == len(want) and not k.get("error"):
                complete.add(k.get("name"))
            elif k.get("error"):
                missing.append(
                    f"{k.get('name')} failed to compile: {_first_line(k['error'].get('message') or '')}"
                )
            else:
                missing.append(
                    f"{k.get('name')} lacks {' '.join(s for s in want if s not in have)}"
                )
        out.compiled = len(complete)
        out.stages = tuple(s for s in ALL_STAGES if s in (common or set()) and s != "source")
        if rc == 0 and kernels and not missing:
            out.ok = True
            return out
        if rc == 0:
            not_launched = ", ".join(sorted(k.get("name") for k in doc.get("not_launched") or []))
            out.cause = (
                missing[0]
                if missing
                else f"no kernel launched (defined: {not_launched})"
                if not_launched
                else "no kernel found"
            )
            return out
    if rc == 0:
        out.cause = "exit 0 but no JSON report on stdout"
    else:
        out.cause = _error_line(stderr, rc)
    return out


def checkout_layout(scratch: str, path: str) -> str:
    """Where a tutorial runs: from `python/tutorials/` of a Triton checkout, as upstream's CI runs them
    (tutorial 07 links libdevice from `../../third_party/nvidia/backend/lib`). The file is linked into
    `scratch/python/tutorials/`, the installed Triton's backend `lib` folders where a checkout keeps them (an
    editable install's `triton/backends/nvidia` is that folder). A Gluon tutorial goes to
    `python/tutorials/gluon/` with the other Gluon tutorials of its release (gluon_release_files): they import
    each other by file name. Returns the path to run."""
    import importlib.util  # no Triton import: only where the package lies

    triton_dir = importlib.util.find_spec("triton").submodule_search_locations[0]
    for backend in ("nvidia", "amd"):
        lib = os.path.join(triton_dir, "backends", backend, "lib")
        link = os.path.join(scratch, "third_party", backend, "backend", "lib")
        if os.path.isdir(lib) and not os.path.lexists(link):
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(lib, link)
    gluon = os.path.basename(os.path.dirname(os.path.dirname(path))) == "gluon"
    folder = os.path.join(scratch, "python", "tutorials", *(["gluon"] if gluon else []))
    os.makedirs(folder, exist_ok=True)
    siblings = gluon_release_files(path) if gluon else {os.path.basename(path): path}
    for name, source in siblings.items():
        os.symlink(source, os.path.join(folder, name))
    return os.path.join(folder, os.path.basename(path))


def gluon_release_files(path: str) -> dict[str, str]:
    """The Gluon tutorials of the release `path`'s folder stands for, by file name: a folder keeps only the
    files that differ from the earlier folders' (tutorials/gluon/ORIGIN.md), so the release's set is every
    earlier folder's, each replaced by a later folder's file of the same name. Folders are in release order
    by name (triton-3.6 < triton-main-...)."""
    folder = os.path.dirname(path)
    parent = os.path.dirname(folder)
    releases = sorted(
        name for name in os.listdir(parent) if os.path.isdir(os.path.join(parent, name))
    )
    files: dict[str, str] = {}
    for release in releases[: releases.index(os.path.basename(folder)) + 1]:
        for name in sorted(os.listdir(os.path.join(parent, release))):
            if name.endswith(".py"):
                files[name] = os.path.join(parent, release, name)
    return files


def scratch_run(
    rel: str, path: str, scratch: str, hide_gpu: bool = True
) -> tuple[str, dict[str, str]]:
    """Where and with what environment a corpus file runs as a new user's would, in the folder `scratch`: a
    tutorial from a checkout's layout there, irscope importable from this checkout, the GPU hidden (unless
    `hide_gpu` is false), an empty Triton cache and an empty FlagGems cache (a cold one benchmarks every
    config). Returns the path to run and the environment."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="") if hide_gpu else dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    if rel.startswith("tutorials/"):
        path = checkout_layout(os.path.join(scratch, "triton"), path)
    env["TRITON_CACHE_DIR"] = os.path.join(scratch, "triton-cache")
    env["FLAGGEMS_CACHE_DIR"] = os.path.join(scratch, "flaggems-cache")
    return path, env


def open_file(
    rel: str, timeout: float = TARGET_SECONDS, warm: bool = False, target: str | None = None
) -> Outcome:
    """Run `python -m irscope report FILE --json` on one file, as a user with no GPU would; `rel` is a
    path under tests/corpus (or any absolute path). A tutorial runs from a checkout's layout."""
    path = os.path.join(CORPUS, rel)  # an absolute `rel` stays as it is
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory(prefix="irscope-corpus-") as scratch:
        if rel.startswith("tutorials/"):
            path = checkout_layout(os.path.join(scratch, "triton"), path)
        cmd = [sys.executable, "-m", "irscope", "report", path, "--json"] + (
            ["--target", target] if target else []
        )
        if not warm:
            env["TRITON_CACHE_DIR"] = os.path.join(scratch, "triton-cache")
            # FlagGems keeps its own tuning results and generated kernels under ~/.flaggems; what a file
            # launches depends on them (a cold cache benchmarks every config), so each run starts cold too
            env["FLAGGEMS_CACHE_DIR"] = os.path.join(scratch, "flaggems-cache")
        # run in a scratch folder: benchmarks in the corpus save plots and CSVs to the working directory
        start, cpu_before = time.perf_counter(), _children_cpu()
        proc = subprocess.Popen(
            cmd,
            cwd=scratch,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the file's own children (compile-ahead) too
            proc.communicate()
            return _declared(
                Outcome(
                    rel,
                    False,
                    f"timed out after {timeout:g} s",
                    seconds=round(time.perf_counter() - start, 2),
                )
            )
        seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu_before
        try:
            # nothing of the run may outlive it (a stray child would skew the next)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # irscope names the file by the path it was given; the corpus-relative path reads better in a table
    stdout, stderr = (
        text.replace(path, rel).replace(os.path.join(CORPUS, rel), rel) for text in (stdout, stderr)
    )
    out = _declared(judge(rel, proc.returncode, stdout, stderr, seconds))
    out.cpu_seconds = round(cpu, 2)
    return out


def _children_cpu() -> float:
    """User and system CPU seconds of this process's children that have ended and been waited for (and of
    theirs, waited for by them)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _declared(out: Outcome) -> Outcome:
    """The outcome with the releases its corpus file was written for (a path outside the corpus: "any")."""
    if not os.path.isabs(out.file):
        out.written_for = written_for(out.file)
    return out


def summary(outcomes: list[Outcome], triton: str | None = None) -> dict:
    """Counts and rates: of all files, and of those written for `triton` (default: the installed one)."""
    triton = triton or installed_triton()
    times = [o.seconds for o in outcomes]
    ok = sum(o.ok for o in outcomes)
    mine = [o for o in outcomes if fits(o.written_for, triton)]
    mine_ok = sum(o.ok for o in mine)
    return {
        "files": len(outcomes),
        "ok": ok,
        "rate": round(ok / len(outcomes), 4) if outcomes else 0.0,
        "triton": triton,
        "files_for_triton": len(mine),
        "ok_for_triton": mine_ok,
        "rate_for_triton": round(mine_ok / len(mine), 4) if mine else 0.0,
        "median_seconds": round(statistics.median(times), 2) if times else 0.0,
        "max_seconds": max(times, default=0.0),
        "over_time": sum(o.seconds > TARGET_SECONDS for o in outcomes),
    }


def _short(text: str, rel: str) -> str:
    """A cause as a table cell: without the file's name (the row shows it) or irscope's generic advice
    on user-code errors (the JSON output keeps the whole line)."""
    text = _first_line(text)
    if text.startswith(rel):
        text = re.sub(r"^:(\d+):", r"line \1:", text[len(rel) :]).lstrip(" ")
    return text.split(" while irscope ran it")[0]


def format_table(outcomes: list[Outcome], triton: str | None = None) -> str:
    s = summary(outcomes, triton)
    width = max([len(o.file) for o in outcomes] + [4])
    rel_width = max([len(o.written_for) + 1 for o in outcomes] + [6])
    rows = [
        f"{'file':<{width}}  {'triton':<{rel_width}}  kernels  {'stages':<23}  {'s':>6}  {'cpu s':>6}  "
        f"specs   outcome",
        f"{'':-<{width}}  {'':-<{rel_width}}  -------  {'':-<23}  {'':->6}  {'':->6}  ------  -------",
    ]
    for o in outcomes:
        outcome = "ok" if o.ok else _short(o.cause or "", o.file)
        if o.ok and o.warning:
            outcome += f" (warned: {_short(o.warning, o.file)})"
        mark = " " if fits(o.written_for, s["triton"]) else "*"
        cpu, specs = (
            "-" if o.cpu_seconds is None else f"{o.cpu_seconds:.1f}",
            f"{o.specializations}+{o.named}",
        )
        rows.append(
            f"{o.file:<{width}}  {o.written_for + mark:<{rel_width}}  {o.found:>3}/{o.compiled:<3}  "
            f"{' '.join(o.stages) or '-':<23}  {o.seconds:>6.1f}  {cpu:>6}  {specs:<6}  "
            f"{outcome}"
        )
    rows.append("")
    rows.append(
        f"{s['ok']} of {s['files']} files open with every stage ({100 * s['rate']:.1f}%; target "
        f"{100 * TARGET_RATE:.0f}%); median {s['median_seconds']:.1f} s, slowest {s['max_seconds']:.1f} s, "
        f"{s['over_time']} over {TARGET_SECONDS:g} s"
    )
    rows.append(
        f"{s['ok_for_triton']} of the {s['files_for_triton']} files written for Triton {s['triton']} "
        f"(the one running them) open with every stage ({100 * s['rate_for_triton']:.1f}%)"
    )
    rows.append(
        "triton = the releases the file was written for (tests/corpus/triton_releases.toml); "
        "* = not the one running it"
    )
    rows.append(
        "kernels = found/compiled: distinct kernels the report names / those compiled with every stage"
    )
    rows.append(
        "specs = compiled+named: the compilations opening the file made + the specializations only its "
        "benchmarks' sweeps reached, named and not compiled (report --launch N compiles one); s = seconds to "
        "open the file; cpu s = the CPU seconds that took, children included (meaningful with --jobs 1)"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "filters", nargs="*", help="keep files whose path under tests/corpus contains one of these"
    )
    parser.add_argument("--jobs", type=int, default=1, help="files opened at once (default 1)")
    parser.add_argument(
        "--timeout", type=float, default=TARGET_SECONDS, help="seconds per file (default 30)"
    )
    parser.add_argument(
        "--warm",
        action="store_true",
        help="use the environment's Triton and FlagGems caches, not fresh ones",
    )
    parser.add_argument(
        "--target", help="irscope's --target (default: irscope's own, sm_90 with no GPU)"
    )
    parser.add_argument(
        "--json", action="store_true", help="one JSON document instead of the table"
    )
    args = parser.parse_args(argv)
    files = corpus_files(args.filters)
    if not files:
        print(
            f"corpus.py: no corpus file matches {' '.join(args.filters)}; see tests/corpus/",
            file=sys.stderr,
        )
        return 2
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        outcomes = list(
            pool.map(lambda f: open_file(f, args.timeout, args.warm, args.target), files)
        )
    if args.json:
        print(
            json.dumps(
                {"summary": summary(outcomes), "files": [dataclasses.asdict(o) for o in outcomes]},
                indent=2,
            )
        )
    else:
        print(format_table(outcomes))
    return 0


if __name__ == "__main__":
    # each file's time is a new worker's, as a user gets it: never a fork of a shared warm process
    os.environ.pop("IRSCOPE_WARM_SOCKET", None)
    sys.exit(main())
