"""Running Nsight Compute on one compilation's launch, and reading back its source and raw pages.

ncu profiles a child process (ncu_child.py) that opens the file again and launches the chosen
compilation once inside an NVTX range; only that launch is profiled, with the sections that give
per-instruction counters (SourceCounters), warp stall reasons (WarpStateStats), memory tables, launch
statistics and occupancy. What stops it is said in one line: no ncu, no permission to read the GPU's
performance counters, a child that failed, a launch that was not profiled.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from irscope.analysis.measured.ncu_parse import (
    SourcePage,
    parse_raw_page,
    parse_source_page,
    split_raw_text,
    split_source_text,
)
from irscope.engine.measure.ncu_child import RANGE

SECTIONS = (
    "SourceCounters",
    "WarpStateStats",
    "MemoryWorkloadAnalysis_Tables",
    "LaunchStats",
    "Occupancy",
    "SpeedOfLight",
)
TIMEOUT_S = 600


@dataclass
class NcuResult:
    page: SourcePage | None = None
    raw: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    command: str = ""


def ncu_path() -> str | None:
    return os.environ.get("IRSCOPE_NCU") or shutil.which("ncu")


def run_ncu(
    file: str,
    kernel: str,
    config: int | None,
    index: int,
    *,
    run_main: bool = True,
    defines: list[str] | None = None,
    arg_types: list[str] | None = None,
    spec: str | None = None,
) -> NcuResult:
    """ncu on one compilation's launch (run_ncu_many with one key)."""
    return run_ncu_many(
        file,
        [(kernel, config, index, spec)],
        run_main=run_main,
        defines=defines,
        arg_types=arg_types,
    )[0]


def run_ncu_many(
    file: str,
    keys: list[tuple[str, int | None, int, str | None]],
    *,
    run_main: bool = True,
    defines: list[str] | None = None,
    arg_types: list[str] | None = None,
) -> list[NcuResult]:
    """ncu on several compilations of one file in one run of it: one NcuResult per key (kernel, autotune
    config, launch index, spec_id), in order. The child says which it launched (ncu_child.py), and ncu's
    results, one per launch, are matched to the keys in that order."""
    ncu = ncu_path()
    if ncu is None:
        return [
            NcuResult(
                error="Nsight Compute's `ncu` is not on PATH (set IRSCOPE_NCU to its path): "
                "no per-line counters"
            )
            for _ in keys
        ]
    (kernel, config, index, spec), more = keys[0], keys[1:]
    child = child_command(
        file,
        kernel,
        config,
        index,
        run_main=run_main,
        defines=defines,
        arg_types=arg_types,
        spec=spec,
        also=more,
    )
    results = [NcuResult() for _ in keys]
    with tempfile.TemporaryDirectory(prefix="irscope-ncu-") as tmp:
        report = os.path.join(tmp, "launch")
        cmd = (
            [
                ncu,
                "--nvtx",
                "--nvtx-include",
                f"{RANGE}/",
                "-c",
                str(len(keys)),
                "--import-source",
                "no",
                "-f",
                "--export",
                report,
            ]
            + [x for s in SECTIONS for x in ("--section", s)]
            + child
        )
        for r in results:
            r.command = " ".join(cmd)
        env = child_env(tmp)
        try:
            with ncu_machine_lock():
                for attempt in range(RESOURCE_TRIES):
                    done = subprocess.run(
                        cmd,
                        capture_output=True,
                        text=True,
                        timeout=TIMEOUT_S,
                        env=env,
                        stdin=subprocess.DEVNULL,
                    )
                    if (
                        not resource_busy(done.stdout + done.stderr)
                        or attempt == RESOURCE_TRIES - 1
                    ):
                        break
                    time.sleep(RESOURCE_WAIT_S)
        except subprocess.TimeoutExpired:
            return _failed(results, f"ncu did not finish in {TIMEOUT_S} s")
        output = done.stdout + done.stderr
        if "ERR_NVGPUCTRPERM" in output:
            return _failed(
                results,
                "ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM): run as "
                "root, or allow profiling for all users (NVreg_RestrictProfilingToAdminUsers=0)",
            )
        # validation: keep ncu's output beside irscope's answer
        keep = os.environ.get("IRSCOPE_NCU_KEEP")
        stems = (
            [
                os.path.join(
                    keep, f"{os.path.basename(file).rsplit('.', 1)[0]}.{k.replace(':', '.')}.{i}"
                )
                for k, _c, i, _s in keys
            ]
            if keep
            else []
        )
        if keep:
            os.makedirs(keep, exist_ok=True)
            for stem in stems:
                with open(stem + ".log", "w", encoding="utf-8") as f:
                    f.write(output)
        if not os.path.exists(report + ".ncu-rep"):
            last = [line for line in output.splitlines() if line.strip()][-1:] or ["no output"]
            error = f"ncu profiled nothing (exit {done.returncode}): {last[0][:300]}"
            # after RESOURCE_TRIES: held for good, most likely by the file itself
            if resource_busy(output):
                error = (
                    "ncu could not profile this launch: the GPU's profiling resource was taken "
                    f"{RESOURCE_TRIES} times, by another profiler in the file itself (Triton's "
                    "proton, torch.profiler) or on the machine"
                )
            return _failed(results, error)
        source = _page(ncu, report, ["--page", "source", "--csv", "--print-source", "sass"])
        raw = _page(ncu, report, ["--page", "raw", "--csv"])
    launched = [
        int(m) for m in re.findall(r"^irscope_measure: launched #(\d+)$", done.stderr, re.M)
    ]
    missing = dict(re.findall(r"^irscope_measure: not launched #(\d+): (.*)$", done.stderr, re.M))
    # one of each per launch, in launch order
    pages, rows = (
        parse_source_page(source),
        parse_raw_page(raw),
    )
    if keep:  # each compilation's own pages, as validation reads them
        sources, raws = split_source_text(source), split_raw_text(raw)
        for k, place in enumerate(launched):
            for suffix, texts in ((".source.csv", sources), (".raw.csv", raws)):
                with open(stems[place] + suffix, "w", encoding="utf-8") as f:
                    f.write(texts[k] if k < len(texts) else "")
    for place, result in enumerate(results):
        k = launched.index(place) if place in launched else None
        if k is None and str(place) in missing:
            result.error = f"irscope_measure: {missing[str(place)]}"
        elif k is None or k >= len(pages) or k >= len(rows):
            result.error = "ncu's report holds no profiled launch (the NVTX range was not seen)"
        else:
            result.page, result.raw = pages[k], rows[k]
    return results


def _failed(results: list[NcuResult], error: str) -> list[NcuResult]:
    for r in results:
        r.error = error
    return results


# The profiling resource held by another process (a profiler that was still ending; seen once on the H100
# with two files measured at once): tried again after a pause, a few times.
RESOURCE_TRIES = 3
RESOURCE_WAIT_S = 5.0


def resource_busy(output: str) -> bool:
    """Whether ncu failed because the driver's profiling resource was taken, not because of the launch."""
    return "driver resource was unavailable" in output


def child_command(
    file: str,
    kernel: str,
    config: int | None,
    index: int,
    *,
    run_main: bool = True,
    defines: list[str] | None = None,
    arg_types: list[str] | None = None,
    spec: str | None = None,
    also: list[tuple] | None = None,
) -> list[str]:
    """The process ncu profiles (ncu_child.py), opening the file as the user's irscope did. `spec`: the
    compilation's specialization (ncu_child.spec_id), so the child can stop the file once it has it."""
    child = [
        sys.executable,
        "-m",
        "irscope.engine.measure.ncu_child",
        file,
        kernel,
        str(-1 if config is None else config),
        str(index),
    ]
    child += ["--spec", spec] if spec else []
    for k, c, i, sp in also or []:  # more compilations in the same run (run_ncu_many)
        child += ["--also", k, str(-1 if c is None else c), str(i), sp or ""]
    child += [] if run_main else ["--no-run"]
    for d in defines or []:
        child += ["-D", d]
    for a in arg_types or []:
        child += ["--arg", a]
    return child


def child_env(tmp: str) -> dict[str, str]:
    """Inductor compiles afresh and in-process in the profiled child: a kernel loaded from Inductor's caches
    (or from its compile-worker pool) comes without its Python function, which capture needs."""
    return dict(
        os.environ,
        TORCHINDUCTOR_COMPILE_THREADS="1",
        TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor"),
        PYTHONPATH=os.pathsep.join(p for p in (_package_root(), os.environ.get("PYTHONPATH")) if p),
    )


@contextlib.contextmanager
def ncu_machine_lock():
    """One Nsight Compute profile at a time on this machine: two at once fail ("a driver resource was
    unavailable"). The validation scripts take it too."""
    with open(os.path.join(tempfile.gettempdir(), "irscope-ncu.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _page(ncu: str, report: str, flags: list[str]) -> str:
    done = subprocess.run(
        [ncu, "--import", report + ".ncu-rep", *flags],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    return done.stdout


def _package_root() -> str:
    return os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    )
