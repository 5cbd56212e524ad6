"""What the stepper says: its help page, and what its panes draw as Rich `Text` (a program id, a value's
statistics, masks and the lanes of a memory access): pure functions of recorded values, apart from the
screens so they can be tested alone.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text

from irscope.analysis.recording import Value

MASK_ROW = 64  # 1-D masks: lanes per drawn row

STEPPER_HELP = """\
The stepper — one program of the kernel, run line by line in Triton's interpreter.

## What it shows
  Left: your file (▶ the line about to run, ● breakpoints) and the IR that line became.
  Right: the locals of the current function, the value of the one picked (its numbers,
  or a mask as █ on / · off lanes), and the memory the line reads or writes
  (✗ a lane that is on but outside its tensor).

## Moving through the program
  s       step: the next line, into @triton.jit helpers
  n       next: the next line of this function (helpers run through)
  o       finish: run until this function returns
  c       continue to the next breakpoint (or the end)
  b       one step back             r   restart: back to the first line
  e       the last step (the end, or where it failed)

## Breakpoints, programs, IR
  space   toggle a breakpoint on the source cursor line (Enter, or click the gutter)
  p       choose another program id within the grid
  i       cycle the IR stage shown for the current line

## Panes
  Tab / Shift+Tab   move between the source and the locals
  ↑ ↓ PgUp PgDn     move the cursor (in the locals: pick the value shown)

  esc     back to the main view (at the line the stepper stopped at)
  ?       this help                 q   quit
"""


def program_text(pid) -> str:
    return ",".join(str(p) for p in pid)


def stats_text(value: Value) -> Text:
    head = Text(f"{value.dtype}", style="bold")
    if value.is_block:
        head.append("[" + ",".join(map(str, value.shape)) + "]", style="bold")
    head.append(f"  {value.kind}")
    if value.kind == "pointer":
        head.append(f"  element offsets into {value.param or '?'}")
    st = value.stats() if value.kind in ("tensor", "scalar") and not value.is_mask else {}
    if st:
        head.append(f"  min {st['min']:.6g}  max {st['max']:.6g}  mean {st['mean']:.6g}")
        if st["nan"]:
            head.append(f"  NaN×{st['nan']}", style="bold yellow")
        if st["inf"]:
            head.append(f"  Inf×{st['inf']}", style="bold yellow")
    if value.is_mask:
        on_count = int(value.data.sum())
        head.append(f"  {on_count} of {value.data.size} lanes on")
    if not value.is_block:
        head.append(f"  = {value.summary()}")
    return head


MASKED, ACTIVE, OUTSIDE = 0, 1, 2
_LANE_GLYPHS = {MASKED: ("·", "red"), ACTIVE: ("█", "green"), OUTSIDE: ("✗", "bold white on red")}


def draw_mask(mask: np.ndarray, max_rows: int = 16) -> Text:
    """A mask as rows of cells: █ for an active lane, · for a masked-off one."""
    return draw_lanes(np.asarray(mask, dtype=np.int8), max_rows)


def draw_lanes(states: np.ndarray, max_rows: int = 16) -> Text:
    """Lanes as rows of cells (1-D: 64 a row; 2-D: a row each): █ active, · masked off, ✗ active but
    outside its tensor."""
    data = np.asarray(states, dtype=np.int8)
    rows = (
        data.reshape(-1, min(MASK_ROW, data.size))
        if data.ndim <= 1
        else data.reshape(data.shape[0], -1)
    )
    out = Text()
    for r, row in enumerate(rows[:max_rows]):
        start = r * rows.shape[1] if data.ndim <= 1 else r
        out.append(f"{start:>5} ", style="dim")
        row = row[: MASK_ROW * 2]
        edges = np.flatnonzero(np.diff(row)) + 1  # one span per run of equal lanes
        for run in np.split(row, edges):
            glyph, style = _LANE_GLYPHS[int(run[0])]
            out.append(glyph * len(run), style=style)
        out.append("\n")
    if len(rows) > max_rows:
        out.append(f"      … {len(rows) - max_rows} more rows\n", style="dim")
    out.rstrip()
    return out


def access_lanes(access, region) -> np.ndarray | None:
    """Each lane of an access as MASKED / ACTIVE / OUTSIDE (an active lane past its tensor's elements);
    None when every lane is simply active."""
    states = access.active.astype(np.int8)
    if region is not None:
        outside = (access.offsets < 0) | (access.offsets >= region.numel)
        states[outside & access.active] = OUTSIDE
    return None if (states == ACTIVE).all() else states
