"""Locations in SASS from `nvdisasm -c -gi`: before the instructions of each line-table row it prints

    //## File "/path/standard.py", line 196 inlined at "/path/standard.py", line 216
    //## File "/path/standard.py", line 216 inlined at "/path/kernel.py", line 27
    //## File "/path/kernel.py", line 27

innermost frame first, one comment line per inlining level, ending with the outermost (non-inlined)
position. Instructions inherit the last row until the next one. SASS carries no columns (column 0).
"""

from __future__ import annotations

from irscope.ir import sass as ir
from irscope.ir.line_types import Chain, LineKind, Parsed, SourceLoc, infer_gaps


def _chain_of_run(run: list[str]) -> Chain | None:
    """Frames of one row: each comment adds its position and its caller; duplicates collapse."""
    frames: list[SourceLoc] = []
    for text in run:
        row = ir.line_table_row(text)
        if row is None:
            continue
        for position in row:
            if position is None:
                continue
            path, n = position
            if n <= 0:
                continue
            loc = SourceLoc(path, n, 0)
            if not frames or frames[-1] != loc:
                frames.append(loc)
    return tuple(frames) or None


def parse_sass(text: str) -> Parsed:
    lines = text.splitlines()
    kinds: list[LineKind] = []
    chains: list[Chain | None] = []
    current: Chain | None = None
    run: list[str] = []
    run_memo: dict[tuple[str, ...], Chain | None] = {}
    INSTR = LineKind.INSTRUCTION
    for line in lines:
        s = line.strip()
        if not s:
            kinds.append(LineKind.BLANK)
            chains.append(None)
            continue
        if s.startswith("//##"):
            if not run or "inlined at" not in run[-1]:
                # a new row starts after a complete one (a row ends with its non-inlined line)
                run = []
            run.append(s)
            key = tuple(run)
            got = run_memo.get(key, False)
            if got is False:
                got = _chain_of_run(run)
                run_memo[key] = got
            current = got
            kinds.append(LineKind.DEBUG)
            chains.append(current)
            continue
        if s.startswith("/*"):
            if ir.is_instruction(s):
                kinds.append(INSTR)
                chains.append(current)
                run = []
                continue
        if s.startswith("//"):
            kinds.append(LineKind.COMMENT)
            chains.append(None)
            continue
        if s[0] == ".":
            kinds.append(LineKind.DIRECTIVE)
            chains.append(None)
            continue
        if ir.is_label(s):
            kinds.append(LineKind.LABEL)
            chains.append(None)
            continue
        kinds.append(LineKind.DIRECTIVE)
        chains.append(None)
    inferred = infer_gaps(kinds, chains, prefer_next=False)
    return Parsed(kinds, chains, inferred)
