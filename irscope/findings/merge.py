"""One finding per source line: the same rule at the same line of the same kernel, found in several of its
compilations (specializations, autotune configs, files that launch it), is one finding, said once, with how
many of the kernel's launches it was found in ("in 12 of 40 launches: ..."), and ranked by the worst of
them. Plain data in, plain data out (the findings as `Finding.to_json()` writes them): `irscope check`'s
front end merges the findings its workers answered, and `report` the findings of its compilations.

Each finding to merge carries, beside its own fields, `launches` (how many captured launches the
compilation it was found in stands for), `compilation` (which compilation, so that a rule found twice on
one line of one compilation, at two columns, is counted once) and `kernel_file` (the file that defines the
kernel, which a finding at a helper's line is not in). The kernel's total is given apart, by kernel
(`(file, kernel)`), summed over every compilation of it that was checked, with the finding or not.
"""

from __future__ import annotations

from typing import Any, Iterable

from irscope.findings.model import rank_key

_CARRIED = ("launches", "compilation", "kernel_file")  # what a finding to merge carries, not kept


def merge_key(f: dict[str, Any]) -> tuple:
    """What makes two findings one: the file and line, the rule, the kernel. Not the message (the worst
    one's is kept) nor the column (two accesses on one line that a rule flags are one line to fix)."""
    kernel = (f.get("kernel_file"), f.get("kernel"))
    if not f.get("source_line"):  # no line to merge on (an open-failed finding): each stands alone
        return (f.get("file"), None, f["rule"], kernel, f.get("message"))
    return (f.get("file"), f["source_line"], f["rule"], kernel)


def merged(
    findings: Iterable[dict[str, Any]], kernel_launches: dict[tuple, int]
) -> list[dict[str, Any]]:
    """The findings, one per merge_key, each the worst of its group (rank_key) with `launches`:
    {"found_in": N, "of": M, "compilations": K}; ranked. `kernel_launches`: (file, kernel) -> the
    kernel's launches in all (M); and "text", "in 12 of 40 launches" (or "in all 40 launches"), empty when
    the kernel was launched once: what a diagnostic says before the message, which is the worst one's."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for f in findings:
        groups.setdefault(merge_key(f), []).append(f)
    out = []
    for group in groups.values():
        worst = min(group, key=rank_key)
        per_compilation: dict[Any, int] = {}
        for f in group:
            per_compilation[f.get("compilation")] = int(f.get("launches") or 1)
        found_in = sum(per_compilation.values())
        kernel = (worst.get("kernel_file") or worst.get("file"), worst.get("kernel"))
        total = max(kernel_launches.get(kernel, 0), found_in)
        item = {k: v for k, v in worst.items() if k not in _CARRIED}
        share = ""
        if total > 1 and worst.get("kernel"):
            share = f"in {'all ' + str(total) if found_in == total else f'{found_in} of {total}'} launches"
        item["launches"] = {
            "found_in": found_in,
            "of": total,
            "compilations": len(per_compilation),
            "text": share,
        }
        out.append(item)
    return sorted(out, key=rank_key)
