"""Locations in PTX: the `.file` table and `.loc f l c[, function_name F, inlined_at f2 l2 c2]`.
An instruction inherits the last `.loc`; `.loc f 0 c` means "no location".

Older LLVM (Triton 3.6) writes no `inlined_at` into `.loc`; the inlining chain appears only in the
trailing comment, `// standard.py:263:15 @[ standard.py:293:36 @[ layernorm.py:26:18 ] ]`, with base names
that irscope resolves through the `.file` table. The same chain is then read from the comment.

Inline assembly: LLVM's asm printer emits one `.loc` per line of a multi-line `asm` string, counting the
line number up from the call's line (so a 4-line Triton load at line 26 shows `.loc 1 26 9`, `.loc 1 27 9`
... `.loc 1 29 9`). Those extra `.loc`s are not source positions; inside a `// begin inline asm` block
irscope keeps the block's first `.loc` and restores it after `// end inline asm`. They are recorded in
`extra["asm_shifted"]` so the SASS map (ptxas saw the shifted lines too) can undo them.
"""

from __future__ import annotations

from irscope.ir import ptx as ir
from irscope.ir.line_types import Chain, LineKind, Parsed, SourceLoc, infer_gaps

Key = tuple[int, int, int]


def paths_by_base_name(files: dict[int, str]) -> dict[str, str]:
    """File base name -> path (the lowest `.file` number wins): comments name files by base name only."""
    out: dict[str, str] = {}
    for _number, path in sorted(files.items()):
        out.setdefault(path.replace("\\", "/").rsplit("/", 1)[-1], path)
    return out


def chain_with_comment_frames(
    first: SourceLoc, comment: str, paths_by_base: dict[str, str]
) -> Chain:
    """`first`, then the inlined-at frames LLVM writes in a `.loc`'s comment, `@[ b.py:3:4 @[ k.py:9:1 ] ]`
    (PTX under Triton 3.6, AMDGCN always); frames at line 0 carry no position and are left out."""
    frames = [first]
    for base, line, col in ir.comment_frames(comment):
        if line > 0:
            frames.append(SourceLoc(paths_by_base.get(base, base), line, col))
    return tuple(frames)


def parse_ptx(text: str) -> Parsed:
    lines = text.splitlines()
    files = ir.file_table(text)
    by_base = paths_by_base_name(files)
    parent: dict[Key, Key] = {}  # an inlined position -> where it was inlined, as last seen
    chain_memo: dict[tuple, Chain | None] = {}

    def chain_of(key: Key, inlined_at: Key | None) -> Chain | None:
        memo_key = (key, inlined_at, parent.get(inlined_at) if inlined_at else None)
        got = chain_memo.get(memo_key, False)
        if got is not False:
            return got
        frames = []
        cur: Key | None = key
        outer = inlined_at
        seen = 0
        while cur is not None and seen < 64:
            f, line, col = cur
            if line > 0:
                frames.append(SourceLoc(files.get(f, str(f)), line, col))
            cur, outer = outer, (parent.get(outer) if outer else None)
            seen += 1
        result = tuple(frames) if frames and key[1] > 0 else None
        chain_memo[memo_key] = result
        return result

    def comment_chain(key: Key, text: str) -> Chain | None:
        """The chain of a `.loc` whose inlining is written only in its comment (older LLVM)."""
        memo_key = (key, text[text.index("@[") :])
        got = chain_memo.get(memo_key, False)
        if got is not False:
            return got
        result = None
        if key[1] > 0:
            result = chain_with_comment_frames(
                SourceLoc(files.get(key[0], str(key[0])), key[1], key[2]), text, by_base
            )
        chain_memo[memo_key] = result
        return result

    kinds: list[LineKind] = []
    chains: list[Chain | None] = []
    current: Chain | None = None
    in_asm = False
    asm_loc: Chain | None = None
    asm_first_key: Key | None = None
    asm_count = 0
    shifted: list[
        tuple[str, int, int, bool]
    ] = []  # (file, shifted line, true line, is the block's last .loc)
    last_shift_index = -1
    in_debug_section = False
    raw_line: tuple[str, int] | None = (
        None  # the last .loc as ptxas reads it (shifted lines included)
    )
    memory_ops: list[tuple[str, int, int, str]] = []  # (file, line ptxas saw, true line, direction)
    INSTR, DBG = LineKind.INSTRUCTION, LineKind.DEBUG
    for line in lines:
        s = line.strip()
        if not s:
            kinds.append(LineKind.BLANK)
            chains.append(None)
            continue
        first = s[0]
        if in_debug_section:
            kinds.append(DBG)
            chains.append(None)
            if first == "}":
                in_debug_section = False
            continue
        if first == "/" and s.startswith("//"):
            if s.startswith("// begin inline asm"):
                in_asm, asm_loc, asm_first_key, asm_count = True, None, None, 0
            elif s.startswith("// end inline asm"):
                in_asm = False
                if asm_loc is not None:
                    current = asm_loc
                if last_shift_index >= 0:
                    f, shifted_line, true_line, _ = shifted[last_shift_index]
                    shifted[last_shift_index] = (f, shifted_line, true_line, True)
                last_shift_index = -1
            kinds.append(LineKind.COMMENT)
            chains.append(None)
            continue
        if first == ".":
            if s.startswith(".loc"):
                loc = ir.read_loc(s)
                kinds.append(DBG)
                if loc is None:
                    chains.append(None)
                    continue
                key, inl = loc
                raw_line = (files.get(key[0], str(key[0])), key[1]) if key[1] > 0 else None
                if inl is not None:
                    parent[key] = inl
                    chain = chain_of(key, inl)
                elif "@[" in s:
                    chain = comment_chain(key, s)
                else:
                    chain = chain_of(key, None)
                chains.append(chain)
                if in_asm:
                    asm_count += 1
                    if asm_count == 1:
                        asm_loc, asm_first_key = chain, key
                        current = chain
                    elif asm_first_key is not None and key[0] == asm_first_key[0] and key[1] > 0:
                        shifted.append(
                            (files.get(key[0], str(key[0])), key[1], asm_first_key[1], False)
                        )
                        last_shift_index = len(shifted) - 1
                        chains[-1] = asm_loc  # a shifted .loc is no source position of its own
                    continue
                current = chain
                continue
            if s.startswith(".section") and ".debug" in s:
                in_debug_section = True
                kinds.append(DBG)
                chains.append(None)
                continue
            if s.startswith(".file"):
                kinds.append(DBG)
                chains.append(None)
                continue
            kinds.append(LineKind.DIRECTIVE)
            chains.append(None)
            continue
        if first in "{}()":
            kinds.append(LineKind.DIRECTIVE)
            chains.append(None)
            continue
        if ir.starts_with_label(s) and not s.endswith(";"):
            kinds.append(LineKind.LABEL)
            chains.append(None)
            continue
        kinds.append(INSTR)
        chains.append(current)
        if raw_line is not None and current:
            stem = ir.memory_stem(s)
            if stem:
                memory_ops.append(
                    (raw_line[0], raw_line[1], current[0].line, ir.memory_direction(stem))
                )
    inferred = infer_gaps(kinds, chains, prefer_next=False)
    return Parsed(kinds, chains, inferred, extra={"asm_shifted": shifted, "memory_ops": memory_ops})
