"""What a launch has to do, for the roofline: bytes it must move to and from DRAM, and its tl.dot work.

Bytes: every tensor the kernel loads from is read once and every tensor it stores to is written once
(the compulsory traffic; a tensor both read and written counts twice). Which parameters the kernel
loads and stores comes from the addresses the interpreter recorded (the coalescing analysis), their sizes
from the launch's own tensors.

FLOPs: 2·M·N·K per execution of each `tl.dot` (from the TTGIR's operand shapes), times how often its
source line ran in recorded programs (line-traced in the interpreter), scaled from the sampled
programs to the whole grid. Programs that do unequal work (a causal mask, a ragged tail) make it an
estimate; the entry says how many programs it rests on.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from irscope.analysis.coalescing.sectors import sample_programs
from irscope.analysis.recording import launch_grid
from irscope.base.compiled import CompiledKernel
from irscope.engine.recording import record_program
from irscope.engine.triton_compat import kernel_parameters

_DOT = re.compile(r"=\s*(?:tt\.dot|ttng\.warp_group_dot)\s")
_SHAPED = re.compile(r"(?:tensor|memdesc)<([\dx]+)x(\w+)[,>]")
_PRECISION = re.compile(r"inputPrecision\s*=\s*(\w+)")
_PEAK_KIND = {"f16": "fp16", "bf16": "bf16", "f8E4M3FN": "fp8", "f8E5M2": "fp8", "i8": "int8"}
FLOP_PROGRAMS = 4  # programs line-traced to count dot executions


@dataclass
class DotSite:
    source_line: int | None
    m: int
    n: int
    k: int
    peak_kind: str  # the MATH_PEAKS key its work runs at: fp16, bf16, tf32, fp32, fp8, int8


@dataclass
class Work:
    bytes_read: int = 0
    bytes_written: int = 0
    # parameter -> "read" / "written" / "read+written"
    tensors: dict[str, str] = field(default_factory=dict)
    flops: float = 0.0
    flop_kind: str | None = None  # the precision of the largest share of the dot work
    flop_programs: int = 0  # programs traced to count it (0: no dot, or none could be traced)
    notes: list[str] = field(default_factory=list)

    @property
    def bytes_moved(self) -> int:
        return self.bytes_read + self.bytes_written

    def to_json(self) -> dict:
        return {
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "tensors": self.tensors,
            "flops": self.flops,
            "flop_precision": self.flop_kind,
            "flop_programs": self.flop_programs,
            "notes": self.notes,
        }


def dot_sites(comp: CompiledKernel) -> list[DotSite]:
    """Every tl.dot of the compilation's TTGIR with its M, N, K and the precision it runs at."""
    sites = []
    for index, raw in enumerate(comp.stage("ttgir").splitlines()):
        if not _DOT.search(raw):
            continue
        head, _, result = raw.rpartition("->")
        shapes = _SHAPED.findall(head.split(":", 1)[-1])
        out = _SHAPED.search(result)
        if not shapes or out is None:
            continue
        m, n = (int(x) for x in out.group(1).split("x")[-2:])
        k = int(shapes[0][0].split("x")[-1])
        elem = shapes[0][1]
        if elem == "f32":
            precision = _PRECISION.search(raw)
            kind = "fp32" if precision is None or precision.group(1) == "ieee" else "tf32"
        else:
            kind = _PEAK_KIND.get(elem, elem)
        site = DotSite(comp.source_map.source_line("ttgir", index), m, n, k, kind)
        # a helper inlined twice repeats its dots; the line's runs count each once
        if site not in sites:
            sites.append(site)
    return sites


def launch_work(comp: CompiledKernel, coalescing) -> Work:
    """`coalescing`: the compilation's KernelCoalescing (analysis/coalescing.py)."""
    work = Work()
    params = kernel_parameters(comp.kernel.jit, comp.launch.args, comp.launch.kwargs)
    kinds: dict[str, set] = {}
    for access in coalescing.accesses:
        if access.param:
            kinds.setdefault(access.param, set()).add(
                "written" if access.kind == "store" else "read"
            )
            if access.kind == "atomic":
                kinds[access.param].add("written")
    for name, how in sorted(kinds.items()):
        value = params.get(name)
        size = _tensor_bytes(value)
        if size is None:
            work.notes.append(f"{name}: not a tensor, its bytes are not counted")
            continue
        work.tensors[name] = "+".join(sorted(how))
        work.bytes_read += size if "read" in how else 0
        work.bytes_written += size if "written" in how else 0
    _count_flops(comp, work)
    return work


def _tensor_bytes(value) -> int | None:
    if hasattr(value, "untyped_storage") and hasattr(value, "element_size"):
        return int(value.numel()) * int(value.element_size())
    return None


def _count_flops(comp: CompiledKernel, work: Work) -> None:
    sites = dot_sites(comp)
    if not sites:
        return

    grid = launch_grid(comp.launch)
    programs = sample_programs(grid, FLOP_PROGRAMS)
    by_kind: dict[str, float] = {}
    traced = 0
    for pid in programs:
        rec = record_program(comp.launch, pid, with_locals=True, budget_bytes=1 << 24)
        if rec.error:
            work.notes.append(f"program {pid}: {rec.error}; its dot work is not counted")
            continue
        traced += 1
        runs: dict[int, int] = {}
        for step in rec.steps:
            if step.event == "line":
                runs[step.line] = runs.get(step.line, 0) + 1
        for site in sites:
            flops = 2.0 * site.m * site.n * site.k * runs.get(site.source_line, 0)
            by_kind[site.peak_kind] = by_kind.get(site.peak_kind, 0.0) + flops
    if not traced:
        return
    scale = math.prod(grid) / traced
    work.flops = sum(by_kind.values()) * scale
    work.flop_kind = max(by_kind, key=by_kind.get) if by_kind else None
    work.flop_programs = traced
    if traced < math.prod(grid):
        work.notes.append(
            f"dot work counted in {traced} of {math.prod(grid)} programs and scaled to the grid"
        )
