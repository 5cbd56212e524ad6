"""Plain-text views of a recording, for `irscope step` and for tests and docs."""

from __future__ import annotations

import numpy as np

from irscope.analysis.recording.trace import Recording, Step
from irscope.analysis.recording.values import Value


def program_text(pid: tuple[int, ...]) -> str:
    return ",".join(str(p) for p in pid)


def where_text(rec: Recording, step: Step, shown_file: str) -> str:
    what = {
        "line": "stopped before",
        "return": "finished after",
        "exception": "stopped by an exception at",
    }
    return (
        f"{rec.kernel} program ({program_text(rec.program_id)}) of grid ({program_text(rec.grid)}): "
        f"{what.get(step.event, 'at')} {shown_file}:{step.line} in {step.function}"
    )


def values_text(value: Value, full: bool = False) -> str:
    """A Value's numbers as numpy prints them (a summary unless `full`), on the lines after its summary."""
    if value.data is None or not value.is_block:
        return ""
    data = value.data.astype(np.int8) if value.is_mask else value.data
    threshold = max(data.size + 1, 1000) if full else 64
    return np.array2string(
        data,
        threshold=threshold,
        edgeitems=4,
        max_line_width=100,
        separator=" ",
        precision=6,
        suppress_small=False,
    )


def stop_text(
    rec: Recording,
    step: Step,
    names: list[str] | None,
    source_lines: list[str],
    shown_file: str,
    full: bool = False,
) -> str:
    """Where the program stopped, the source line, and the named locals (all of them when `names` is None)."""
    out = [where_text(rec, step, shown_file)]
    if 1 <= step.line <= len(source_lines):
        out.append(f"{step.line:>6} | {source_lines[step.line - 1].rstrip()}")
    if len(step.stack) > 1:
        out.append("  call stack: " + " -> ".join(f"{f.function}:{f.line}" for f in step.stack))
    if step.message:
        out.append(f"  {step.message}")
    for index in step.accesses:
        access = rec.accesses[index]
        out.append(f"  {'this line: ' if step.event == 'line' else ''}{access.summary()}")
    chosen = list(step.locals) if names is None else names
    for name in chosen:
        value = step.locals[name]
        kind = "mask" if value.is_mask else value.kind
        out.append(f"{name} = {value.summary()}  ({kind})")
        numbers = values_text(value, full)
        if numbers:
            out.append(numbers)
    return "\n".join(out)
