"""What the Findings view does to the panes: Enter puts every pane on a finding's source line, and the
source pane's gutter marks the lines that have findings.

The source pane's cursor goes to the line, and the linker (`LinkedPanes.link_from`, called by the
view's cursor move) lights up and reveals that line's IR in every other pane, as a cursor move by hand
does. With no pane on the source, the active pane's cursor goes to the line's first IR line instead.
The panes do the moving (`LinkedPanes.go_to_source_line`, `mark_findings`); here is what a finding
asks of them.
"""

from __future__ import annotations

import os

from irscope.findings.model import SEVERITIES


def jump_to_finding(linked, finding) -> bool:
    """Put every pane of `linked` (the main screen's LinkedPanes) on `finding`'s source line; False (and a
    note on screen) when there is none."""
    shown = linked.shown
    if shown is None:
        return False
    line = finding.source_line
    if not line:
        linked.notify(
            f"{finding.rule} is about the whole kernel: it has no line to show", timeout=3
        )
        return False
    kernel_file = shown.comp.kernel.file
    if (
        finding.file
        and kernel_file
        and os.path.abspath(finding.file) != os.path.abspath(kernel_file)
    ):
        linked.notify(
            f"line {line} is in {os.path.basename(finding.file)}, which the source pane does not show",
            severity="warning",
            timeout=4,
        )
        return False
    return linked.go_to_source_line(line)


def gutter_marks(shown, findings) -> dict[int, str]:
    """The source pane's gutter: the severest finding's glyph on each line of the kernel's file that has
    one (by line index)."""
    rank = {s: n for n, s in enumerate(SEVERITIES)}
    kernel_file = os.path.abspath(shown.comp.kernel.file) if shown.comp.kernel.file else None
    marks: dict[int, str] = {}
    for f in findings or []:
        if not f.source_line or (f.file and kernel_file and os.path.abspath(f.file) != kernel_file):
            continue
        index = f.source_line - 1
        if index not in marks or rank[f.severity] < rank[marks[index]]:
            marks[index] = f.severity
    return marks
