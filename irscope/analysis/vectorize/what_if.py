"""The what-if: the kernel recompiled with the fixes the why-not-vectorized analysis suggests.

Each fix that can be made to the launch itself (an int rounded up to a multiple of 16, an aligned copy of
a tensor, a runtime stride of 1) is applied, the kernel compiled again, and the access widths compared:
the proof that the reasons `vectorize` gives were the ones that mattered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from irscope.analysis.vectorize.facts import machine_widths
from irscope.analysis.vectorize.why_not import Diagnosis, why_not_vectorized
from irscope.base.compiled import LaunchedKernel


@dataclass
class WhatIf:
    """The kernel recompiled with the fixes irscope suggests, and how the access widths change."""

    changes: list[str]  # what was changed, in words
    comp: Any  # the recompiled Compilation
    rows: list[dict[str, Any]]  # per (source line, op): before / after widths
    # what still keeps accesses narrow after the fix
    remaining: list[Diagnosis] = field(default_factory=list)

    @property
    def improved(self) -> bool:
        return any((r["after"] or 0) > (r["before"] or 0) for r in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "changes": list(self.changes),
            "rows": list(self.rows),
            "improved": self.improved,
            "ok": bool(self.comp is not None and self.comp.ok),
            "remaining": [d.to_json() for d in self.remaining],
        }


def what_if(comp: LaunchedKernel, diagnoses: list[Diagnosis] | None = None) -> WhatIf | None:
    """Recompile with every fix that can be applied to the launch itself: ints that the mask or the
    address depend on rounded up to a multiple of 16, misaligned tensors replaced by aligned copies, a
    runtime stride set to 1 (what a contiguous tensor gives). None when there is nothing to change."""
    diagnoses = why_not_vectorized(comp) if diagnoses is None else diagnoses
    targets: dict[str, str] = {}
    for d in diagnoses:
        for r in d.reasons:
            if r.arg and r.kind in (
                "unaligned_pointer",
                "mask_not_divisible",
                "unaligned_offset",
                "runtime_stride",
            ):
                targets.setdefault(r.arg, r.kind)
    if not targets:
        return None
    names = comp.param_names
    args = list(comp.launch.args)
    kwargs = dict(comp.launch.kwargs)
    changes = []

    def fixed(name: str, value: Any) -> Any:
        if name not in targets:
            return value
        if targets[name] == "unaligned_pointer" and hasattr(value, "clone"):
            changes.append(f"{name} an aligned copy")
            return value.clone()
        if (
            targets[name] == "runtime_stride"
            and isinstance(value, int)
            and not isinstance(value, bool)
        ):
            changes.append(f"{name} {value} -> 1 (contiguous)")
            return 1
        if isinstance(value, int) and not isinstance(value, bool):
            rounded = -(-value // 16) * 16
            changes.append(f"{name} {value} -> {rounded}")
            return rounded
        return value

    for i, value in enumerate(args):
        if i < len(names):
            args[i] = fixed(names[i], value)
    for name in list(kwargs):
        kwargs[name] = fixed(name, kwargs[name])
    if not changes:
        return None
    fixed_comp = comp.recompiled(args=tuple(args), kwargs=kwargs, origin="what-if")
    keys = {(d.source_line, d.op) for d in diagnoses}
    remaining = why_not_vectorized(fixed_comp) if fixed_comp.ok else []
    return WhatIf(changes, fixed_comp, _compare(comp, fixed_comp, keys), remaining)


def _compare(before, after, keys: set | None = None) -> list[dict[str, Any]]:
    """Widths before and after, per (source line, op) among `keys` (default: every global access)."""
    old = machine_widths(before)
    new = machine_widths(after) if after.ok else {}
    wanted = set(old) | set(new)
    if keys and all(line is not None for line, _ in keys):
        wanted &= keys
    rows = []
    for key in sorted(wanted, key=lambda k: (k[0] is None, k[0] or 0, k[1])):
        rows.append(
            {
                "source_line": key[0],
                "op": key[1],
                "before": min(old[key]) if old.get(key) else None,
                "after": min(new[key]) if new.get(key) else None,
            }
        )
    return rows


def vectorization(
    comp: LaunchedKernel, with_what_if: bool = True
) -> tuple[list[Diagnosis], WhatIf | None]:
    """The narrow accesses and, when asked, the what-if recompile: computed once per compilation (the
    report and the findings both read them; a what-if is a compile)."""
    diagnoses = comp.analyses.get("why_not_vectorized", lambda: why_not_vectorized(comp))
    if not with_what_if:
        return diagnoses, comp.analyses.peek("what_if")
    return diagnoses, comp.analyses.get(
        "what_if", lambda: what_if(comp, diagnoses) if diagnoses else None
    )
