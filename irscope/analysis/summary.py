"""The analyses' part of `irscope report`: memory ops, per-line totals, occupancy, launch statistics,
vectorization."""

from __future__ import annotations

from collections import Counter
from typing import Any

from irscope.analysis.launch_stats import launch_stats
from irscope.analysis.memory.ops import memory_ops, primary_stage, totals_by_source_line
from irscope.analysis.occupancy import occupancy
from irscope.analysis.roofline import human_bytes
from irscope.analysis.vectorize.what_if import vectorization
from irscope.base.compiled import LaunchedKernel


def analysis_entry(comp: LaunchedKernel, with_what_if: bool = True) -> dict[str, Any]:
    """Fields added to a report entry of a compiled kernel (stable names)."""
    stage = primary_stage(comp)
    ops = memory_ops(comp, [stage])
    occ = occupancy(comp)
    diagnoses, result = vectorization(comp, with_what_if)
    entry: dict[str, Any] = {
        "memory_ops": [op.to_json() for op in ops],
        "memory_by_line": [row.to_json() for row in totals_by_source_line(ops)],
        "occupancy": occ.to_json() if occ else None,
        "launch_stats": [stats.to_json() for stats in launch_stats(comp, occ)],
        "vectorization": [d.to_json() for d in diagnoses],
        "what_if": None,
    }
    if with_what_if and result is not None:
        entry["what_if"] = result.to_json()
    return entry


def format_analysis(k: dict[str, Any]) -> list[str]:
    """Text lines for one kernel entry of the report."""
    out = []
    ops = k.get("memory_ops") or []
    if ops:
        stage = ops[0]["stage"]
        counts = Counter((o["op"], o["space"], o["width_bytes"], o["masked"]) for o in ops)
        parts = [
            f"{n} {op}{'s' if n > 1 else ''} {space} {width if width is not None else '?'} B"
            f"{' masked' if masked else ''}"
            for (op, space, width, masked), n in sorted(counts.items(), key=str)
        ]
        out.append(f"  memory     ({stage}) " + ", ".join(parts))
        for row in k.get("memory_by_line") or []:
            where = f"line {row['source_line']}" if row["source_line"] is not None else "unmapped"
            kinds = ", ".join(
                f"{row[key]} {label}"
                for key, label in (("loads", "ld"), ("stores", "st"), ("atomics", "atom"))
                if row[key]
            )
            widths = "/".join(str(w) for w in row["widths"])
            out.append(
                f"    {where:<10} {kinds}, {widths} B per thread, {'/'.join(row['spaces'])}"
                + (f", {row['masked']} masked" if row["masked"] else "")
            )
    if k.get("occupancy"):
        out.append(f"  occupancy  {k['occupancy']['text']}")
    for stats in k.get("launch_stats") or []:
        grid = " x ".join(map(str, stats["grid"]))
        out.append(f"  launch     grid {grid}: {stats['text']}")
    roofs = k.get("rooflines") or []
    if roofs and roofs[0].get("error"):
        out.append(f"  roofline   not predicted: {roofs[0]['error']}")
    elif roofs:
        first = roofs[0]
        many = len(roofs) > 1
        for label, text in zip(("traffic", "roofline", "time"), first.get("text") or []):
            grid = f"grid {' x '.join(map(str, first['grid']))}: " if many else ""
            out.append(f"  {label:<10} {grid}{text}")
        for roof in roofs[1:]:
            if roof.get("error"):
                continue  # a grid whose programs could not be recorded: its launch line says the rest
            grid = " x ".join(map(str, roof["grid"]))
            out.append(
                f"  {'':<10} grid {grid}: reads {human_bytes(roof['dram_read_bytes'])}, writes "
                f"{human_bytes(roof['dram_write_bytes'])}, predicted "
                f"{roof['seconds']['estimate'] * 1e6:.3g} us ({roof['bound']}-bound)"
            )
    reasons: list[tuple[str, str]] = []  # each distinct reason is told once, accesses refer to it
    accesses = []
    for d in k.get("vectorization") or []:
        numbers = []
        for r in d["reasons"]:
            if (r["why"], r["fix"]) not in reasons:
                reasons.append((r["why"], r["fix"]))
            numbers.append(str(reasons.index((r["why"], r["fix"])) + 1))
        where = f"line {d['source_line']} " if d["source_line"] is not None else ""
        accesses.append(
            f"{where}{d['op']} {d['pointer'] or '?'} {d['width_bytes']} B [{','.join(numbers)}]"
        )
    if accesses:
        out.append("  not vectorized: " + "; ".join(accesses))
        for number, (why, fix) in enumerate(reasons, start=1):
            out.append(f"    {number}. {why}")
            out.append(f"       fix: {fix}")
    w = k.get("what_if")
    if w:
        out.append("  what if " + "; ".join(w["changes"]) + ":")
        for r in w["rows"]:
            where = f"line {r['source_line']}" if r["source_line"] is not None else "kernel"
            before = "?" if r["before"] is None else f"{r['before']} B"
            after = "?" if r["after"] is None else f"{r['after']} B"
            same = r["before"] is not None and r["before"] == r["after"]
            out.append(
                f"    {where} {r['op']}: {before} -> {after}"
                + ("  (no change: that is not what limits this access)" if same else "")
            )
        for d in w.get("remaining") or []:
            where = f"line {d['source_line']}" if d["source_line"] is not None else "kernel"
            for r in d["reasons"]:
                out.append(f"    still {d['width_bytes']} B at {where}: {r['why']}")
                out.append(f"      fix: {r['fix']}")
    return out
