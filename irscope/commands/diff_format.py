"""`irscope diff` as text: the summary table, each memory access on both sides, then source line by line."""

from __future__ import annotations

from typing import Any

_WIDTH = 28  # one side's column in the table


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def _access(side: dict[str, Any] | None) -> str:
    if side is None:
        return "(none)"
    widths = "/".join(map(str, side["widths"])) or "?"
    text = f"{side['instructions']} × {widths} B"
    if side["sectors_per_request"] is not None:
        text += f", {side['sectors_per_request']} sect/req"
    return text


def format_diff(doc: dict[str, Any], all_lines: bool = False) -> str:
    left, right = doc["left"], doc["right"]
    out = [
        f"{doc['kernel']}  ({doc['file']})",
        f"  {'':<22}{'left: ' + left['spec']:<{_WIDTH}}  {'right: ' + right['spec']}",
    ]

    def row(label: str, a: Any, b: Any) -> None:
        mark = "  " if a == b else " *"
        out.append(f"{mark}{label:<22}{_cell(a):<{_WIDTH}}  {_cell(b)}")

    grid = lambda s: "×".join(map(str, s["grid"])) if s["grid"] else None  # noqa: E731
    row("target", left["target"], right["target"])
    row("grid", grid(left), grid(right))
    row(
        "warps / stages",
        f"{left['num_warps']} / {left['num_stages']}",
        f"{right['num_warps']} / {right['num_stages']}",
    )
    row("registers", left["registers"], right["registers"])
    row("spills", left["spills"], right["spills"])
    row("shared memory (B)", left["shared_bytes"], right["shared_bytes"])
    row("occupancy", _occupancy(left), _occupancy(right))
    for side, name in ((left, "left"), (right, "right")):
        if side["error"]:
            out.append(f"  {name} did not compile: {side['error']}")
    if doc["changes"]:
        out.append("  inputs that differ: " + "; ".join(doc["changes"]))
    if doc["accesses"]:
        out.append(
            "  memory accesses (global, per thread: instructions × bytes each, sectors per request; "
            "* = changed):"
        )
        for a in doc["accesses"]:
            mark = " *" if a["changed"] else "  "
            label = f"line {a['source_line']} {a['kind']} {','.join(a['pointers'])}"
            out.append(f"{mark}  {label:<24}{_access(a['left']):<{_WIDTH}}  {_access(a['right'])}")
            if a["changed"]:
                for side, name in ((a["left"], "left"), (a["right"], "right")):
                    for why in (side or {}).get("why_not_vectorized") or []:
                        out.append(f"        {name} not vectorized: {why}")
    for side, name in ((left, "left"), (right, "right")):
        if side.get("coalescing_error"):
            out.append(f"  {name}: sectors per request not measured: {side['coalescing_error']}")
    if doc["stage"]:
        changed = sum(1 for r in doc["lines"] if r["changed"])
        if not changed:
            out.append(
                f"{doc['stage']}: every source line became the same instructions on both sides "
                f"(register numbers and debug locations aside)"
            )
        out.append(
            f"{doc['stage']} by source line ({changed} of {len(doc['lines'])} lines changed; "
            f"'-' only left, '+' only right{'' if all_lines else '; unchanged lines folded, --all shows them'}):"
        )
        for r in doc["lines"]:
            if not r["changed"] and not all_lines:
                continue
            where = (
                f"{r['source_line']:>4} | {r['source']}"
                if r["source_line"]
                else "   - | (no source line: header, layouts, directives)"
            )
            out.append(f"{'*' if r['changed'] else ' '} {where}")
            for side, name in (("left", "L"), ("right", "R")):
                for ins in r[side]:
                    if all_lines or ins["mark"] != " ":
                        out.append(f"    {name} {ins['mark']} {ins['line']:>5}  {ins['text']}")
                same = sum(1 for ins in r[side] if ins["mark"] == " ")
                if same and not all_lines:
                    out.append(f"    {name}   ({same} unchanged)")
    return "\n".join(out)


def _occupancy(side: dict) -> str | None:
    occ = side.get("occupancy")
    return f"{round(occ['occupancy'] * 100)}% ({occ['limited_by']})" if occ else None
