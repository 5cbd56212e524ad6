"""What the Findings view does to the panes: Enter puts every pane on a finding's source line, and the
source pane's gutter marks the lines that have findings.

The source pane's cursor goes to the line, and the app's linker (`link_from`, called by the view's
cursor move) lights up and reveals that line's IR in every other pane, as a cursor move by hand does.
With no pane on the source, the active pane's cursor goes to the line's first IR line instead.
"""

from __future__ import annotations

import os

from irscope.findings.model import SEVERITIES


def jump_to_finding(app, finding) -> bool:
    """Put every pane on `finding`'s source line; False (and a note on screen) when there is none."""
    shown = app.shown
    if shown is None:
        return False
    line = finding.source_line
    if not line:
        app.notify(f"{finding.rule} is about the whole kernel: it has no line to show", timeout=3)
        return False
    kernel_file = shown.comp.kernel.file
    if (
        finding.file
        and kernel_file
        and os.path.abspath(finding.file) != os.path.abspath(kernel_file)
    ):
        app.notify(
            f"line {line} is in {os.path.basename(finding.file)}, which the source pane does not show",
            severity="warning",
            timeout=4,
        )
        return False
    count = app.visible_count(app.effective_layout())
    pane = next((p for p in app.panes[:count] if p.stage == "source"), None)
    if pane is not None:
        index = line - 1
    else:
        pane = app.panes[app.active_pane]
        hits = shown.links.ir_lines(pane.stage, line) if shown.comp.ok else []
        if not hits:
            app.notify(
                f"line {line} made no lines in this pane; 1 shows the source here", timeout=3
            )
            return False
        index = hits[0]
    app.active_pane = pane.number
    app.apply_layout()  # a maximised pane or the tabs layout: this pane is the one shown now
    pane.view.move_cursor_to_index(index, center=True, notify=True)
    app.call_after_refresh(pane.view.reveal_index, index)  # once a pane just shown knows its height
    for each in app.panes:
        app.update_pane_title(each)
    return True


def mark_gutter(app, shown, findings) -> None:
    """The source pane's gutter: the severest finding's glyph on each line of the kernel's file that has
    one (kept on `shown`, so a pane switched to the source later gets them too)."""
    rank = {s: n for n, s in enumerate(SEVERITIES)}
    kernel_file = os.path.abspath(shown.comp.kernel.file) if shown.comp.kernel.file else None
    marks: dict[int, str] = {}
    for f in findings or []:
        if not f.source_line or (f.file and kernel_file and os.path.abspath(f.file) != kernel_file):
            continue
        index = f.source_line - 1
        if index not in marks or rank[f.severity] < rank[marks[index]]:
            marks[index] = f.severity
    shown.finding_marks["source"] = marks
    if app.shown is shown:
        for pane in app.panes:
            if pane.stage == "source":
                pane.view.set_finding_marks(marks)
