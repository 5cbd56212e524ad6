"""What a finding is: one thing that costs a compiled kernel time, where it is, what it costs, the fix.

Severities: `error` — the kernel cannot run as written (it does not compile, its block cannot launch)
or the file cannot be opened; `warning` — a loss the analyses measure: at least twice the DRAM sectors,
instructions or local traffic the work needs, a dot off the tensor cores, a shared-memory round trip
in every iteration of a hot loop; `info` — a smaller loss, or one whose effect on time irscope cannot
tell (low occupancy, a shuffle once per program, sectors fetched again from L1).

Findings are ranked by severity, then by `weight`: the fraction of the resource the finding wastes
(sectors, vector width, occupancy, per-thread storage), 0 to 1. The weight orders findings; it is not a
prediction of time. A finding without a measurable fraction (weight None) comes after the others of
its severity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SEVERITIES = ("error", "warning", "info")

# rule id -> (one line on what it flags, the default severity). SARIF's rule table and `check --rules`.
RULES: dict[str, tuple[str, str]] = {
    "uncoalesced": (
        "a warp's global load or store touches more 32-byte sectors than its bytes need",
        "warning",
    ),
    "not-vectorized": (
        "a global access is narrower per thread than its layout allows, because of an argument "
        "or offset the compiler cannot prove aligned",
        "warning",
    ),
    "masked-tail": (
        "a mask built from a size that is not a multiple of 16 keeps a global access scalar",
        "warning",
    ),
    "spill": ("registers spill to local memory (off-chip, per thread)", "warning"),
    "local-memory": ("the kernel keeps data in local memory (off-chip, per thread)", "warning"),
    "low-occupancy": ("few warps per SM, and the resource that limits them", "info"),
    "small-grid": (
        "the launch's grid is under one wave: block slots of the GPU stay idle for the whole launch "
        "(the launch's size, not the kernel)",
        "info",
    ),
    "tail-effect": (
        "the launch's grid ends in a partial wave that may take 20% of the run or more (the launch's "
        "size, not the kernel)",
        "info",
    ),
    "short-programs": (
        "the launch's programs are so short that its SMs take longer to start its blocks than to move "
        "their bytes",
        "warning",
    ),
    "layout-shuffle": (
        "a ttg.convert_layout moves a tensor between threads through shared memory",
        "info",
    ),
    "no-tensor-core": ("a tl.dot is computed on the FMA pipes, without mma / wgmma", "warning"),
    "bank-conflict": (
        "shared-memory accesses take more wavefronts than their bytes need: lanes meet in a bank "
        "at different words, or an async copy's phase reads several global lines at the same "
        "offsets",
        "warning",
    ),
    "out-of-bounds": (
        "the launch, run in the interpreter, loaded or stored outside every tensor",
        "error",
    ),
    "compile-error": ("the kernel does not compile for this launch and target", "error"),
    "open-failed": (
        "the file could not be opened: it failed before any kernel was compiled",
        "error",
    ),
    "measured-disagrees": (
        "on a GPU (--measure), Nsight Compute measured something other than irscope "
        "predicted, by more than 5%",
        "warning",
    ),
}


@dataclass(frozen=True)
class Cost:
    """What a finding costs, as far as irscope can count it: a number, its unit, and the same in words."""

    value: float | int | None
    unit: str  # e.g. "excess_sectors_per_request", "vector_bytes_lost", "local_bytes_per_thread"
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "unit": self.unit, "text": self.text}


@dataclass(frozen=True)
class WhatIf:
    """The change the fix makes, and what it gives: from a recompile, or from a model (then said)."""

    text: str
    recompiled: bool

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "recompiled": self.recompiled}


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str  # "error" | "warning" | "info"
    kernel: str
    file: str | None  # the file the line is in: the kernel's own file (or a compile error's)
    source_line: int | None  # 1-based, in `file`
    column: int | None  # 1-based, where the compiler recorded one
    message: str  # the cause, in words
    fix: str
    cost: Cost
    weight: float | None = None  # fraction of the resource wasted (ranking only)
    what_if: WhatIf | None = None
    source_text: str | None = None  # the source line itself, stripped (baselines match on it)
    # of the compilation's launches, how many it holds for, where a rule describes some and not others (the
    # launch-size rules: one grid is small, another is not); None: all of them
    holds_for_launches: int | None = None
    # how a front end names the line where its own numbers are not the file's: a notebook's `3:6` (cell:line)
    line_label: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "kernel": self.kernel,
            "file": self.file,
            "source_line": self.source_line,
            "column": self.column,
            "source_text": self.source_text,
            "cost": self.cost.to_json(),
            "weight": None if self.weight is None else round(self.weight, 4),
            "message": self.message,
            "fix": self.fix,
            "what_if": None if self.what_if is None else self.what_if.to_json(),
            "holds_for_launches": self.holds_for_launches,
        }


def rank_key(f: Finding | dict) -> tuple:
    """Severity first, then the wasted fraction (largest first), then where it is."""
    get = f.get if isinstance(f, dict) else lambda k: getattr(f, k)
    weight = get("weight")
    return (
        SEVERITIES.index(get("severity")),
        weight is None,
        -(weight or 0.0),
        get("file") or "",
        get("source_line") or 0,
        get("rule"),
    )


def ranked(findings: list) -> list:
    return sorted(findings, key=rank_key)


def at_least(severity: str, threshold: str) -> bool:
    """Whether `severity` is as severe as `threshold` or more ("never" is met by nothing)."""
    return threshold != "never" and SEVERITIES.index(severity) <= SEVERITIES.index(threshold)
