"""Repairs to the SASS line table that only the PTX can make, for the source map (`sourcemap`).

ptxas writes the cubin's line table from the `.loc` lines it saw, and two things get lost on the way:
the true lines of inline asm blocks (the PTX shifts them) and, on older Triton, the inlining that the PTX
carries only in comments. Both are put back here from the parsed PTX; what is put back is marked inferred.
"""

from __future__ import annotations

import os
from typing import Callable

from irscope.ir import sass as ir_sass
from irscope.ir.line_types import Chain, LineKind, Parsed, SourceLoc
from irscope.ir.ptx import memory_direction


def undo_asm_line_shift(sass: Parsed, ptx: Parsed, get_text: Callable[[str], str]) -> None:
    """ptxas saw the shifted `.loc` lines of inline asm blocks (see stages/ptx.py) and wrote them into
    the cubin's line table; SASS has no columns to tell them apart. Two repairs, both from the PTX:
    a SASS memory instruction takes the true line of the PTX memory instruction(s) that ptxas saw at
    its line; any other instruction whose line is only ever a shifted line in the PTX goes back to its
    asm block's true line. Repaired lines are marked inferred."""
    shifted = ptx.extra.get("asm_shifted") or []
    if not shifted:
        return
    memory: dict[tuple[str, int, str], list[int]] = {}
    for path, seen_line, true_line, direction in ptx.extra.get("memory_ops") or []:
        options = memory.setdefault((os.path.basename(path), seen_line, direction), [])
        if true_line not in options:
            options.append(true_line)
    real_lines: set[tuple[str, int]] = set()
    for kind, chain in zip(ptx.kinds, ptx.chains):
        if kind is LineKind.INSTRUCTION and chain:
            for loc in chain:
                real_lines.add((os.path.basename(loc.file), loc.line))
    candidates: dict[tuple[str, int], list[int]] = {}
    for path, line, true_line, _is_last in shifted:
        key = (os.path.basename(path), line)
        if key not in real_lines and true_line not in candidates.get(key, ()):
            candidates.setdefault(key, []).append(true_line)
    text_lines = get_text("sass").splitlines()
    memo: dict = {}
    pending_debug: list[int] = []
    for index, chain in enumerate(sass.chains):
        kind = sass.kinds[index]
        if kind is LineKind.DEBUG:
            pending_debug.append(index)
            continue
        if kind is not LineKind.INSTRUCTION or not chain:
            pending_debug.clear()
            continue
        inner = chain[0]
        key = (os.path.basename(inner.file), inner.line)
        true_line = None
        instruction = ir_sass.tokenize(text_lines[index])
        op = instruction.base if instruction is not None else None
        memory_key = (
            (key[0], key[1], memory_direction(op)) if op in ir_sass.GLOBAL_OR_SHARED else None
        )
        if memory_key in memory:
            options = memory[memory_key]
            if inner.line not in options:
                true_line = options[0]
        elif key in candidates:
            true_line = candidates[key][0]
        if true_line is None:
            pending_debug.clear()
            continue
        fixed = memo.get((chain, true_line))
        if fixed is None:
            fixed = (SourceLoc(inner.file, true_line, inner.column),) + chain[1:]
            memo[(chain, true_line)] = fixed
        sass.chains[index] = fixed
        sass.inferred.add(index)
        for d in pending_debug:  # the //## comments just above describe this instruction
            sass.chains[d] = fixed
        pending_debug.clear()


def restore_inlining_from_ptx(sass: Parsed, ptx: Parsed) -> None:
    """When the PTX carries its inlining only in comments (older LLVM, Triton 3.6), ptxas never saw it
    and the SASS line table has bare rows: `standard.py:263` with no call site, a user helper's line
    with no caller. Each such row takes the call sites the PTX records for the same file and line;
    where the PTX inlines that line at several places, the one whose outermost line matches the
    previous SASS row naming one of the candidate call sites is taken (else the first) and the line is
    marked inferred."""
    if any(chain is not None and len(chain) > 1 for chain in sass.chains):
        return  # the line table has its own inlining (newer Triton)
    direct: set[tuple[str, int]] = set()
    callers: dict[tuple[str, int], list[Chain]] = {}
    for chain in ptx.chains:
        if not chain:
            continue
        key = (os.path.basename(chain[0].file), chain[0].line)
        if len(chain) == 1:
            direct.add(key)
            continue
        outer = tuple(SourceLoc(loc.file, loc.line, 0) for loc in chain[1:])
        options = callers.setdefault(key, [])
        if outer not in options:
            options.append(outer)
    if not callers:
        return
    call_sites = {o[-1].line for options in callers.values() if len(options) > 1 for o in options}
    memo: dict = {}
    previous_outer: int | None = None
    for index, chain in enumerate(sass.chains):
        if not chain:
            continue
        key = (os.path.basename(chain[0].file), chain[0].line)
        options = callers.get(key) if len(chain) == 1 else None
        if not options or key in direct:
            # rows elsewhere (a line 31 scheduled in between) don't count
            if chain[-1].line in call_sites:
                previous_outer = chain[-1].line
            continue
        outer = next((o for o in options if o[-1].line == previous_outer), options[0])
        fixed = memo.get((chain, outer))
        if fixed is None:
            fixed = chain + outer
            memo[(chain, outer)] = fixed
        sass.chains[index] = fixed
        if len(options) > 1:
            sass.inferred.add(index)
        previous_outer = outer[-1].line
