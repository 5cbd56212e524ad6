"""The table above `irscope diff`: what each side is, its resources, and each memory access side by side.

Built from the same analyses `irscope report` uses (memory ops, occupancy, why-not-vectorized,
coalescing), so a number here is the number the report and the TUI show for that compilation."""

from __future__ import annotations

from typing import Any

from irscope.analysis.coalescing.sectors import report_fields
from irscope.analysis.summary import analysis_entry
from irscope.engine.compile.compilation import Compilation
from irscope.engine.report import launch_fields


def side_entry(comp: Compilation, spec_text: str, interpreted: str | None = None) -> dict[str, Any]:
    """One side: what it is and what it costs. `interpreted`, when given, says why the launch cannot be
    interpreted (a front end's view of a compilation whose worker is gone): no sectors per request."""
    entry: dict[str, Any] = {
        "spec": spec_text,
        **launch_fields(comp),
        "error": comp.failure.message if comp.failure else None,
    }
    if comp.failure is None:
        analysis = analysis_entry(comp, with_what_if=False)
        entry["occupancy"] = analysis["occupancy"]
        coalescing = (
            report_fields(comp)
            if interpreted is None
            else {"coalescing_totals": {"error": interpreted}}
        )
        entry["accesses"] = _accesses(analysis, coalescing)
        entry["coalescing_error"] = (coalescing.get("coalescing_totals") or {}).get("error")
    return entry


def _accesses(analysis: dict[str, Any], coalescing: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Global loads and stores of each source line, keyed `line:kind`: instructions and bytes per thread
    per instruction (from the stage's memory ops), sectors per request (from the coalescing analysis,
    when the launch could be interpreted), and why an access is not vectorized."""
    out: dict[str, dict[str, Any]] = {}
    for op in analysis.get("memory_ops") or []:
        if op["space"] != "global" or op["op"] not in ("load", "store"):
            continue
        got = out.setdefault(
            f"{op['source_line']}:{op['op']}",
            {
                "source_line": op["source_line"],
                "kind": op["op"],
                "pointers": [],
                "instructions": 0,
                "widths": [],
                "sectors_per_request": None,
                "ideal_sectors_per_request": None,
                "why_not_vectorized": [],
            },
        )
        got["instructions"] += 1
        if op["width_bytes"] is not None and op["width_bytes"] not in got["widths"]:
            got["widths"] = sorted(got["widths"] + [op["width_bytes"]])
    for row in coalescing.get("coalescing") or []:
        got = out.get(f"{row['source_line']}:{row['kind']}")
        if got is not None and row["sectors_per_request"] is not None:
            got["pointers"].append(row["param"] or "?")
            # several accesses on one line: the worst one speaks for the line
            got["sectors_per_request"] = max(
                got["sectors_per_request"] or 0, row["sectors_per_request"]
            )
            got["ideal_sectors_per_request"] = row["ideal_sectors_per_request"]
    for d in analysis.get("vectorization") or []:
        got = out.get(f"{d['source_line']}:{d['op']}")
        if got is not None:
            if d["pointer"] and d["pointer"] not in got["pointers"]:
                got["pointers"].append(d["pointer"])
            got["why_not_vectorized"] += [
                r["why"] for r in d["reasons"] if r["why"] not in got["why_not_vectorized"]
            ]
    return out


def changes(left: dict[str, Any], right: dict[str, Any]) -> list[str]:
    """What differs in the two sides' inputs: target, arguments' specialization, constexprs, options."""
    out = []
    for key in ("target", "num_warps", "num_stages"):
        if left[key] != right[key]:
            out.append(f"{key} {left[key]} -> {right[key]}")
    for name in sorted(left["specialization"].keys() | right["specialization"].keys()):
        a, b = left["specialization"].get(name, ""), right["specialization"].get(name, "")
        if a != b:
            out.append(f"{name} specialization [{a or '-'}] -> [{b or '-'}]")
    for name in sorted(left["constexprs"].keys() | right["constexprs"].keys()):
        a, b = left["constexprs"].get(name), right["constexprs"].get(name)
        if a != b:
            out.append(f"{name} {a} -> {b}")
    return out


def access_rows(left: dict[str, Any], right: dict[str, Any]) -> list[dict[str, Any]]:
    """Each access on either side, its two sides, whether it changed, and the cause on the narrow side."""
    a, b = left.get("accesses") or {}, right.get("accesses") or {}
    rows = []
    for key in sorted(
        a.keys() | b.keys(), key=lambda k: (int(k.split(":")[0]) if k[0].isdigit() else 0, k)
    ):
        before, after = a.get(key), b.get(key)
        some = before or after
        fields = ("widths", "instructions", "sectors_per_request")
        changed = before is None or after is None or any(before[f] != after[f] for f in fields)
        pointers = sorted(
            set((before or {}).get("pointers", []) + (after or {}).get("pointers", []))
        )
        rows.append(
            {
                "source_line": some["source_line"],
                "kind": some["kind"],
                "pointers": pointers,
                "left": before,
                "right": after,
                "changed": changed,
            }
        )
    return rows
