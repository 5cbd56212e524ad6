"""Measured mode (`report --measure`): with a real GPU, time each compilation's launch, put its bandwidth
and FLOP rate against the device's peaks and on the roofline, and run Nsight Compute on it for counters
per source line next to irscope's predictions. With no GPU it refuses in one line, before the file runs.

One measurement per compilation, on its own launch (the first launch of that specialization): timing
with `triton.testing.do_bench` on copies of the arguments (triton_compat/measure.py), the work from
work.py, ncu from ncu_run.py, the comparison from agreement.py.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from irscope.analysis.banks.report import whole_launch_report
from irscope.analysis.coalescing.sectors import DEFAULT_PROGRAMS, analyze_coalescing
from irscope.analysis.measured.per_line import per_source_line
from irscope.analysis.recording import launch_grid
from irscope.base.compiled import CompiledKernel, LaunchedKernel
from irscope.engine.measure.ncu_child import spec_id
from irscope.engine.measure.ncu_run import run_ncu, run_ncu_many
from irscope.engine.measure.peaks import Peaks, peaks_of
from irscope.engine.measure.work import launch_work
from irscope.engine.triton_compat import local_gpu_target
from irscope.engine.triton_compat.measure import (
    bench,
    gpu_properties,
    relaunch,
    release_cached_memory,
)
from irscope.findings import findings, ranked
from irscope.findings.agreement import agreements, disagreement_findings

# Nothing here imports torch or Triton at module level: the TUI renders a measurement with format.py.


WHOLE_GRID_LIMIT = (
    512  # programs the interpreter runs for a whole-launch prediction (about 0.05 s each)
)
NOT_LAUNCHED = "the file does not launch it, so there are no real arguments to time it with"
NO_GRID = (
    "its launch was captured without a grid (a launcher of Inductor's own ran it), so irscope cannot "
    "launch it again to time it"
)
BANK_TIME_LIMIT = 30.0  # seconds for the bank-conflict model over those programs


@dataclass
class Measurement:
    kernel: str
    time_ms: tuple[float, float, float] | None = None  # median, 20th, 80th percentile
    work: Any = None  # work.Work
    peaks: Peaks | None = None
    lines: list = field(default_factory=list)  # per_line.LineCounters
    raw: dict[str, str] = field(default_factory=dict)  # ncu's raw metrics of the launch
    agreements: list = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # what could not be measured, and why
    # what each step took: timing, prediction, banks
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def gbps(self) -> float | None:
        if not self.time_ms or not self.work or not self.work.bytes_moved:
            return None
        return self.work.bytes_moved / (self.time_ms[0] * 1e-3) / 1e9

    @property
    def tflops(self) -> float | None:
        if not self.time_ms or not self.work or not self.work.flops:
            return None
        return self.work.flops / (self.time_ms[0] * 1e-3) / 1e12

    def roofline(self) -> dict[str, Any] | None:
        """Arithmetic intensity against the ridge point of this GPU, for the dot's precision (or FP32)."""
        if not self.work or not self.peaks or not self.peaks.dram_gbps or not self.work.bytes_moved:
            return None
        kind = self.work.flop_kind or "fp32"
        peak = self.peaks.math_tflops.get(kind)
        intensity = self.work.flops / self.work.bytes_moved
        if peak is None:
            return {
                "intensity_flop_per_byte": round(intensity, 3),
                "precision": kind,
                "ridge": None,
                "bound": None,
                "attainable_tflops": None,
            }
        ridge = peak * 1e12 / (self.peaks.dram_gbps * 1e9)
        attainable = min(peak, intensity * self.peaks.dram_gbps * 1e9 / 1e12)
        achieved = self.tflops if self.work.flops else None
        out = {
            "intensity_flop_per_byte": round(intensity, 3),
            "precision": kind,
            "ridge": round(ridge, 1),
            "bound": "memory" if intensity < ridge else "compute",
            "attainable_tflops": round(attainable, 3),
        }
        if self.gbps is not None:
            out["dram_fraction"] = round(self.gbps / self.peaks.dram_gbps, 4)
        if achieved is not None:
            out["math_fraction"] = round(achieved / peak, 4)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "time_ms": None
            if self.time_ms is None
            else {"median": self.time_ms[0], "p20": self.time_ms[1], "p80": self.time_ms[2]},
            "timed_by": "triton.testing.do_bench on copies of the launch's arguments",
            "work": self.work.to_json() if self.work else None,
            "achieved_gbps": None if self.gbps is None else round(self.gbps, 2),
            "achieved_tflops": None if self.tflops is None else round(self.tflops, 4),
            "peaks": self.peaks.to_json() if self.peaks else None,
            "roofline": self.roofline(),
            "ncu": {
                "lines": [c.to_json() for c in self.lines],
                "registers": self.raw.get("launch__registers_per_thread"),
                "gpu_time_us": self.raw.get("gpu__time_duration.sum"),
                "dram_bytes_read": self.raw.get("dram__bytes_read.sum"),
                "dram_bytes_write": self.raw.get("dram__bytes_write.sum"),
            }
            if self.raw
            else None,
            "agreements": [a.to_json() for a in self.agreements],
            "errors": self.errors,
            "seconds": {k: round(v, 2) for k, v in self.seconds.items()},
        }


def why_not_measurable(target_name: str | None) -> str | None:
    """One line saying why this machine cannot measure, or None. Asked before the file runs."""

    local = local_gpu_target()
    if local is None:
        return (
            "measuring needs a GPU, and this machine has none: irscope's virtual GPU runs kernels in Triton's "
            "interpreter, which times nothing"
        )
    if target_name is not None and target_name != local.name:
        return (
            f"measuring times this machine's GPU ({local.name}), and this compilation is for {target_name}; "
            f"compile for {local.name} to measure it"
        )
    return None


def child_key(ws, comp: CompiledKernel) -> tuple[str, int | None, int] | None:
    """How ncu's child (ncu_child.py) finds this compilation again: kernel, autotune config, launch index;
    None for a compilation the file's run did not make."""
    config = comp.launch.autotune_index if comp.kernel.is_autotuned else None
    index = next(
        (i for i, c in enumerate(ws.compile(comp.kernel, config=config)) if c is comp), None
    )
    return None if index is None else (comp.kernel.qualified_name, config, index)


def predicted_programs(comp: CompiledKernel) -> int:
    """How many programs measured mode's coalescing prediction runs: every program of a grid of up to
    WHOLE_GRID_LIMIT, so that each line's sectors are the launch's, as ncu counts them; for a larger grid only
    the ratios can be compared, and the default sample gives them as a larger one does (triton_square.py's
    4,096 rows of up to 16,384 elements: 512 programs took 6 to 59 s a compilation on the H100, and its twelve
    compilations did not finish in 420 s). A grid no larger than the default sample is the default analysis,
    which the report then reuses."""
    programs = math.prod(launch_grid(comp.launch))
    return max(DEFAULT_PROGRAMS, programs if programs <= WHOLE_GRID_LIMIT else DEFAULT_PROGRAMS)


def measure_all(
    ws,
    comps,
    *,
    with_ncu: bool = True,
    run_main: bool = True,
    defines: list[str] | None = None,
    arg_types: list[str] | None = None,
    progress=None,
) -> list[Measurement]:
    """measure() of each compilation, with one Nsight Compute run of the file per kernel for all its
    compilations (ncu_run.run_ncu_many): each run of the file under ncu costs what the parent's run did, and a
    tutorial with six compilations took six runs. (One run for every kernel at once failed on the H100 for
    torch.compile's kernels, which the child then captured without a kernel name to look for.)
    `progress(text)`, when given, hears each step as it ends, with its seconds: a file's measurement can take
    minutes (its runs under ncu, the whole-launch predictions)."""

    def told(what: str, began: float) -> None:
        if progress is not None:
            progress(f"{what}: {time.monotonic() - began:.1f} s")

    found = {}
    if with_ncu:
        keys = {
            id(c): child_key(ws, c)
            for c in comps
            if c.ok and c.launch.origin == "captured" and c.launch.grid
        }
        keys = {k: v for k, v in keys.items() if v is not None}
        wanted = [c for c in comps if id(c) in keys]
        if wanted:
            release_cached_memory()
            for name in dict.fromkeys(keys[id(c)][0] for c in wanted):  # one child run per kernel
                group = [c for c in wanted if keys[id(c)][0] == name]
                began = time.monotonic()
                results = run_ncu_many(
                    ws.user_file.path,
                    [(*keys[id(c)], spec_id(c.spec, c.kernel.jit)) for c in group],
                    run_main=run_main,
                    defines=defines,
                    arg_types=arg_types,
                )
                found.update({id(c): r for c, r in zip(group, results)})
                told(
                    f"Nsight Compute ran the file for {name.rpartition(':')[2]} ({len(group)} compilation(s))",
                    began,
                )
    done = []
    for number, c in enumerate(comps, 1):
        began = time.monotonic()
        done.append(
            measure(
                ws,
                c,
                with_ncu=with_ncu,
                run_main=run_main,
                defines=defines,
                arg_types=arg_types,
                ncu=found.get(id(c)),
            )
        )
        steps = ", ".join(f"{k} {v:.1f} s" for k, v in done[-1].seconds.items())
        told(
            f"{c.kernel.name}, compilation {number} of {len(comps)}{' (' + steps + ')' if steps else ''}",
            began,
        )
    return done


def measure(
    ws,
    comp: LaunchedKernel,
    *,
    with_ncu: bool = True,
    run_main: bool = True,
    defines: list[str] | None = None,
    arg_types: list[str] | None = None,
    ncu=None,
) -> Measurement:
    """Measure one compilation of `ws`. `run_main`, `defines`, `arg_types`: how the file was opened
    (--no-run, -D, --arg), so that ncu's child opens it the same way. `ncu`: its NcuResult when
    measure_all already ran Nsight Compute for it."""

    result = Measurement(comp.kernel.name)
    if not comp.ok:
        result.errors.append("the kernel did not compile")
        return result
    if comp.launch.origin != "captured":
        result.errors.append(NOT_LAUNCHED)
        return result
    if not comp.launch.grid:
        result.errors.append(NO_GRID)
        return result
    began = time.monotonic()
    result.peaks = peaks_of(gpu_properties())
    try:
        result.time_ms = bench(
            relaunch(comp.kernel.jit, comp.launch.args, comp.launch.kwargs, comp.launch.grid)
        )
    except Exception as exc:  # noqa: BLE001 - the user's kernel on the user's data: say it, go on
        result.errors.append(f"timing failed: {type(exc).__name__}: {exc}")
    result.seconds["timing"], began = time.monotonic() - began, time.monotonic()
    coalescing = (
        analyze_coalescing(comp, max_programs=predicted_programs(comp))
        if with_ncu
        else analyze_coalescing(comp)
    )
    result.work = launch_work(comp, coalescing)
    result.seconds["coalescing"] = time.monotonic() - began
    if not with_ncu:
        return result

    key = child_key(ws, comp)
    if key is None:
        result.errors.append(
            "Nsight Compute not run: this compilation is not one the file's run made "
            "(an edit or another target); measure it as launched"
        )
        return result
    if ncu is None:
        release_cached_memory()
        ncu = run_ncu(
            ws.user_file.path,
            *key,
            run_main=run_main,
            defines=defines,
            arg_types=arg_types,
            spec=spec_id(comp.spec, comp.kernel.jit),
        )
    if ncu.error:
        result.errors.append(ncu.error)
        return result
    result.raw = ncu.raw
    result.lines, mismatch = per_source_line(comp, ncu.page)
    if mismatch:
        result.errors.append(f"per-line counters not shown: {mismatch}")
    banks = None
    if not mismatch:
        began = time.monotonic()
        banks = whole_launch_report(comp, max_programs=WHOLE_GRID_LIMIT, time_limit=BANK_TIME_LIMIT)
        result.seconds["banks"] = time.monotonic() - began
    result.agreements = agreements(comp, coalescing, result.lines, ncu.raw, banks)
    extra = disagreement_findings(comp, result.agreements)
    if extra:
        comp.analyses.put("findings", ranked(findings(comp) + extra))
    return result
