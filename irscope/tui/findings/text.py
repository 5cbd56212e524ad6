"""What the Findings view says, as Rich renderables: a row per finding, the selected one's details, the
title with the counts, the empty state. Pure functions over `core.findings.model.Finding` (the worker
sends them pickled); every string a finding carries is put in a `Text`, never parsed as markup: the
messages quote layouts like `sizePerThread [1, 8]` and shapes like `[M=64, N=32]`.
"""

from __future__ import annotations

import os
from collections import Counter

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from irscope.findings.model import RULES, SEVERITIES, Finding
from irscope.tui.widgets.stage_rows import FINDING_COLOURS as COLOURS
from irscope.tui.widgets.stage_rows import FINDING_GLYPHS as GLYPHS

# Rules that say a kernel could not be looked at, rather than what was looked for.
NOT_CHECKS = frozenset({"compile-error", "open-failed"})
WIDE = 100  # from this width on, rows spell the severity out after its glyph
READABLE = 132  # the details wrap at this width at most: long lines are hard to follow


def glyph(severity: str) -> Text:
    return Text(GLYPHS.get(severity, "?"), style=f"bold {COLOURS.get(severity, 'white')}")


def short_cost(finding: Finding) -> str:
    """The cost's first clause ("32.0 sectors per request where 4.0 would do", "4 of 16 B per access"):
    the row's summary; the details show the whole text."""
    text = finding.cost.text.split(": ", 1)[0].strip()
    if text.endswith(")") and " (" in text:
        text = text[: text.index(" (")]
    return text


def counts(findings: list[Finding]) -> Text:
    """ "✗ 1 error  ▲ 2 warnings  ● 1 info", severest first; "none" for an empty list."""
    by = Counter(f.severity for f in findings)
    out = Text()
    for severity in SEVERITIES:
        n = by.get(severity)
        if not n:
            continue
        if out:
            out.append("  ")
        out.append_text(glyph(severity))
        word = severity if n == 1 or severity == "info" else severity + "s"
        out.append(f" {n} {word}")
    return out or Text("none", style="dim")


def title(
    findings: list[Finding] | None, *, failed: bool, collapsed: bool, focused: bool, width: int
) -> Text:
    """The view's border title: its name, the counts, and the keys that apply now (left out when they
    would not fit: Textual would cut the title)."""
    out = Text()  # (a style given to Text() would reach every part appended to it)
    out.append(" Findings ", style="bold reverse" if focused else "bold")
    out.append(" ")
    if failed:
        out.append("could not be computed", style="bold red")
    elif findings is None:
        out.append("analysing…", style="italic")
    else:
        out.append_text(counts(findings))
        if collapsed and findings:
            top = findings[0]
            where = _where(top) if top.source_line else top.kernel
            out.append(f" — {where} {top.rule}")
            if len(findings) > 1:
                out.append(f", {len(findings) - 1} more")
    keys = (
        "f: show"
        if collapsed
        else "↑↓ Enter: go to line  m: max  Esc: back  f: hide"
        if focused
        else "f: go to the list"
    )
    for hint in (keys, keys.split("  ")[0]):
        if out.cell_len + len(hint) + 6 <= width:
            out.append("  " + hint + " ", style="dim")
            break
    return out


def _columns(findings: list[Finding], wide: bool) -> tuple[int, int, int]:
    severity = max((len(f.severity) for f in findings), default=0) + 2 if wide else 1
    rule = max((len(f.rule) for f in findings), default=0)
    line = max((len(_where(f)) for f in findings), default=0)
    return severity, rule, line


def _where(finding: Finding) -> str:
    if not finding.source_line:
        return "kernel"
    return f"line {finding.line_label or finding.source_line}"


def row(
    finding: Finding,
    findings: list[Finding],
    *,
    selected: bool,
    width: int,
    kernel_file: str | None = None,
) -> RenderableType:
    """One finding: a marker, its severity, rule, line and cost on one line (the cost wraps beneath
    itself when narrow); the selected one also shows its details."""
    wide = width >= WIDE
    severity_width, rule_width, line_width = _columns(findings, wide)
    table = Table.grid(padding=(0, 2 if wide else 1), expand=True)
    table.add_column(width=1, no_wrap=True)
    table.add_column(width=severity_width, no_wrap=True)
    table.add_column(width=rule_width, no_wrap=True)
    table.add_column(width=line_width, no_wrap=True)
    table.add_column(ratio=1)
    mark = glyph(finding.severity)
    if wide:
        mark.append(" " + finding.severity, style=COLOURS.get(finding.severity, ""))
    table.add_row(
        Text("▶" if selected else " ", style="bold"),
        mark,
        Text(finding.rule, style="bold" if selected else ""),
        Text(_where(finding)),
        Text(short_cost(finding)),
    )
    if not selected:
        return table
    return Group(table, details(finding, kernel_file, width=min(width, READABLE)))


def details(finding: Finding, kernel_file: str | None = None, width: int | None = None) -> Table:
    """The cause, the cost, the fix and the what-if, each wrapped under its label."""
    table = Table.grid(padding=(0, 1), expand=True)
    table.width = width
    table.add_column(width=2)
    table.add_column(width=7, no_wrap=True, style="bold")
    table.add_column(ratio=1)
    if finding.source_text:
        where = Text(finding.source_text, style="italic")
        if (
            finding.file
            and kernel_file
            and os.path.abspath(finding.file) != os.path.abspath(kernel_file)
        ):
            where = Text.assemble(
                (f"{os.path.basename(finding.file)}:{finding.source_line}: ", "bold"), where
            )
        table.add_row("", Text("code"), where)
    table.add_row("", Text("cause"), Text(finding.message))
    table.add_row("", Text("cost"), Text(finding.cost.text))
    table.add_row("", Text("fix"), Text(finding.fix))
    if finding.what_if is not None:
        # says how it knows
        table.add_row("", Text("what if", style="bold #009E73"), Text(finding.what_if.text))
    table.add_row("", Text(""), Text(""))  # a blank line before the next finding
    return table


def empty(kernel: str, target: str) -> Text:
    """What the view says when the rules found nothing, and which rules ran."""
    checked = [rule for rule in RULES if rule not in NOT_CHECKS]
    out = Text()
    out.append(f"No findings for {kernel} on {target}", style="bold")
    out.append(": none of irscope's rules found something that costs this kernel time.\n")
    out.append("Checked: " + ", ".join(checked) + ".", style="dim")
    return out


def analysing() -> Text:
    return Text(
        "Analysing the launch: coalescing, vector widths, spills, occupancy, layouts, dots "
        "(a what-if may recompile)…",
        style="italic",
    )


def failure(message: str) -> Text:
    return Text(f"The findings could not be computed: {message}", style="red")


def plain(
    findings: list | None,
    failed: str,
    message: RenderableType | None,
    selected: int,
    width: int,
    kernel_file: str | None,
) -> str:
    """The view's title, its message and its rows as plain text (what the tests read)."""
    import io

    from rich.console import Console

    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(title(findings, failed=bool(failed), collapsed=False, focused=False, width=width))
    if message is not None:
        console.print(message)
    for n, finding in enumerate(findings or []):
        console.print(
            row(finding, findings, selected=n == selected, width=width, kernel_file=kernel_file)
        )
    return console.export_text()
