"""The diff document (worker/diffs.py, built by engine/diff/sides.py) as rich Text: the summary table and the
two panes' rows, aligned by source line. Plain Text throughout: instructions, source lines and the
compiler's messages are never read as markup."""

from __future__ import annotations

import textwrap
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from irscope.tui.highlight import TAB_SIZE

LEFT, RIGHT, CHANGED = "red", "green", "bold yellow"


def _value(v: Any) -> str:
    return "-" if v is None else str(v)


def _occupancy(side: dict[str, Any]) -> str | None:
    occ = side.get("occupancy")
    return f"{round(occ['occupancy'] * 100)}% ({occ['limited_by']})" if occ else None


def access_text(side: dict[str, Any] | None) -> str:
    """`8 × 4 B, 15.62 sect/req`: instructions per thread × bytes each, sectors per request."""
    if side is None:
        return "(none)"
    text = f"{side['instructions']} × {'/'.join(map(str, side['widths'])) or '?'} B"
    if side["sectors_per_request"] is not None:
        text += f", {side['sectors_per_request']} sect/req"
    return text


def summary(doc: dict[str, Any], width: int) -> Group:
    """Resources side by side (a changed row starred), the inputs that differ, each global access's
    width and sectors per request, and the findings added and removed."""
    left, right = doc["left"], doc["right"]
    table = Table(box=None, padding=(0, 1), show_edge=False, expand=False)
    table.add_column("", no_wrap=True)
    table.add_column(Text("left: " + left["spec"], style=LEFT), overflow="fold")
    table.add_column(Text("right: " + right["spec"], style=RIGHT), overflow="fold")
    grid = lambda s: "×".join(map(str, s["grid"])) if s.get("grid") else None  # noqa: E731
    rows = [
        ("target", left["target"], right["target"]),
        ("grid", grid(left), grid(right)),
        (
            "warps / stages",
            f"{left['num_warps']} / {left['num_stages']}",
            f"{right['num_warps']} / {right['num_stages']}",
        ),
        ("registers", left["registers"], right["registers"]),
        ("spills", left["spills"], right["spills"]),
        ("shared memory", left["shared_bytes"], right["shared_bytes"]),
        ("occupancy", _occupancy(left), _occupancy(right)),
    ]
    for access in doc["accesses"]:
        label = f"line {access['source_line']} {access['kind']} {','.join(access['pointers'])}"
        rows.append((label, access_text(access["left"]), access_text(access["right"])))
    for label, a, b in rows:
        style = CHANGED if a != b else ""
        table.add_row(
            Text(("* " if a != b else "  ") + label, style=style), Text(_value(a)), Text(_value(b))
        )
    parts: list = [table]
    for side, name in ((left, "left"), (right, "right")):
        if side.get("error"):
            parts.append(Text(f"{name} did not compile: {side['error']}", style="bold red"))
        if side.get("coalescing_error"):
            parts.append(
                Text(f"{name}: sectors per request {side['coalescing_error']}", style="dim")
            )
    if doc["changes"]:
        parts.append(Text("inputs that differ: " + "; ".join(doc["changes"]), style="bold"))
    parts.append(findings_text(doc.get("findings") or {}))
    return Group(*parts)


def findings_text(change: dict[str, Any]) -> Text:
    if not change.get("known"):
        return Text("findings: not known for the compilation from before the reload", style="dim")
    if not change["added"] and not change["removed"]:
        return Text("findings: the same on both sides")
    text = Text("findings: ")
    for mark, style, items in (("+", RIGHT, change["added"]), ("-", LEFT, change["removed"])):
        for f in items:
            text.append(f"{mark}{f['rule']} (line {_value(f['source_line'])})  ", style=style)
    return text


def changed_rows(doc: dict[str, Any]) -> list[int]:
    """Rows of `doc["lines"]` whose instructions changed, or whose source line has an access that changed
    (width, count or sectors per request: the same PTX can touch memory differently)."""
    lines = {a["source_line"] for a in doc["accesses"] if a["changed"]}
    return [n for n, r in enumerate(doc["lines"]) if r["changed"] or r["source_line"] in lines]


def row_lines(doc: dict[str, Any], width: int, show_unchanged: bool) -> list[tuple[Text, int]]:
    """The two panes as full-width lines, each with the index of its row in `doc["lines"]`: a source
    line's header, its memory accesses with why they are not vectorized, then its instructions, the
    left side's beside the right side's ('-' only left, '+' only right)."""
    half = max(10, (width - 3) // 2)
    out: list[tuple[Text, int]] = []
    accesses: dict[int, list] = {}
    for access in doc["accesses"]:
        accesses.setdefault(access["source_line"], []).append(access)
    changed = set(changed_rows(doc))
    for n, row in enumerate(doc["lines"]):
        if n not in changed and not show_unchanged:
            continue
        number = row["source_line"]
        head = (
            f"{'*' if n in changed else ' '} {number:>4} │ {row['source'].expandtabs(TAB_SIZE)}"
            if number
            else "     - │ (no source line: header, layouts, directives)"
        )
        out.append((Text(head, style=CHANGED if n in changed else "bold"), n))
        for access in accesses.get(number, []):
            out.append((_access_line(access, half), n))
            for side, name, style in (
                (access["left"], "left", LEFT),
                (access["right"], "right", RIGHT),
            ):
                for why in (side or {}).get("why_not_vectorized") or []:
                    for k, piece in enumerate(
                        textwrap.wrap(f"{name} not vectorized: {why}", max(20, width - 10))
                    ):
                        out.append(
                            (Text(("        " if k == 0 else "          ") + piece, style=style), n)
                        )
        for k in range(max(len(row["left"]), len(row["right"]))):
            cells = [
                _cell(row[side][k] if k < len(row[side]) else None, half)
                for side in ("left", "right")
            ]
            out.append((cells[0] + Text(" │ ", style="dim") + cells[1], n))
    return out


def _access_line(access: dict[str, Any], half: int) -> Text:
    label = f"{access['kind']} {','.join(access['pointers'])}"
    text = Text(f"      {label}: ", style="bold")
    text.append(access_text(access["left"]), style=LEFT)
    text.append("  →  ")
    text.append(access_text(access["right"]), style=RIGHT)
    if access["changed"]:
        text.append("  (changed)", style=CHANGED)
    return text


def _cell(ins: dict[str, Any] | None, width: int) -> Text:
    if ins is None:
        return Text(" " * width)
    style = {"-": LEFT, "+": RIGHT}.get(ins["mark"], "")
    text = Text(f"{ins['mark']} {ins['text'].expandtabs(TAB_SIZE)}", style=style)  # (PTX has tabs)
    text.truncate(width, overflow="ellipsis", pad=True)
    return text
