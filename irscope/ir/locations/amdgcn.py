"""Locations in AMDGCN assembly: `.file N "dir" "name"` and `.loc N line col [flags]`; an instruction
inherits the last `.loc`, line 0 means "no location". The directive itself carries no inlining; LLVM
writes the inlined-at chain in the comment after it: `; standard.py:43:13 @[ kernel.py:31:23 ]`
(nested `@[ … @[ … ] ]` for deeper inlining), with file base names that the `.file` table resolves.
"""

from __future__ import annotations

from irscope.ir import ptx as ir
from irscope.ir.line_types import Chain, LineKind, Parsed, SourceLoc, infer_gaps
from irscope.ir.locations.ptx import chain_with_comment_frames, paths_by_base_name


def parse_amdgcn(text: str) -> Parsed:
    lines = text.splitlines()
    files = ir.file_table(text)
    by_base = paths_by_base_name(files)
    memo: dict[str, Chain | None] = {}

    def chain_of(s: str) -> Chain | None:
        got = memo.get(s, False)
        if got is not False:
            return got
        loc = ir.read_loc(s)
        result: Chain | None = None
        if loc and loc[0][1] > 0:
            (number, line, column), _inlined = loc
            first = SourceLoc(files.get(number, str(number)), line, column)
            result = chain_with_comment_frames(first, s, by_base)
        memo[s] = result
        return result

    kinds: list[LineKind] = []
    chains: list[Chain | None] = []
    current: Chain | None = None
    section_is_debug = False
    in_metadata = False
    INSTR = LineKind.INSTRUCTION
    for line in lines:
        s = line.strip()
        if not s:
            kinds.append(LineKind.BLANK)
            chains.append(None)
            continue
        first = s[0]
        if in_metadata:
            kinds.append(LineKind.DIRECTIVE)
            chains.append(None)
            if s.startswith(".end_amdgpu_metadata"):
                in_metadata = False
            continue
        if first == ";":
            kinds.append(LineKind.COMMENT)
            chains.append(None)
            continue
        if ir.starts_with_label(s):
            kinds.append(LineKind.LABEL)
            chains.append(None)
            continue
        if first == ".":
            if s.startswith(".loc"):
                current = chain_of(s)
                kinds.append(LineKind.DEBUG)
                chains.append(current)
                continue
            if s.startswith(".section") or s.startswith(".text") or s.startswith(".data"):
                section_is_debug = ".debug" in s
            elif s.startswith(".amdgpu_metadata"):
                in_metadata = True
            debug = section_is_debug or s.startswith(".file") or s.startswith(".cfi_")
            kinds.append(LineKind.DEBUG if debug else LineKind.DIRECTIVE)
            chains.append(None)
            continue
        if section_is_debug:
            kinds.append(LineKind.DEBUG)
            chains.append(None)
            continue
        kinds.append(INSTR)
        chains.append(current)
    inferred = infer_gaps(kinds, chains, prefer_next=False)
    return Parsed(kinds, chains, inferred)
