"""The source map: every line of every stage linked to the user's kernel line it came from, and back.

Each stage's parser (irscope/core/stages/) gives raw location chains with every frame the compiler
recorded. Here they are cut down to the frames in the user's file: library code inlined from Triton
(`tl.sum`, `tl.cdiv`, …) keeps only its call site in the user's code, while a `@triton.jit` helper
defined in the user's file keeps its own line (`loc`) and its call site (`frames`).

Which paths are "the user's file": the file irscope opened, and any recorded path with the same base
name outside Triton's own package. Triton's cache key holds the function's source and line numbers but
not its path, so a cached compile may record an identical copy of the file elsewhere; frames in it are
reported under the path irscope opened.
"""

from __future__ import annotations

import os
from typing import Callable

from .stages.amdgcn import parse_amdgcn
from .stages.base import Chain, IRLine, LineKind, Parsed, SourceLoc
from .stages.llvm import parse_llvm
from .stages.mlir import parse_mlir
from .ir.ptx import memory_direction
from .stages.ptx import parse_ptx
from .ir import sass as ir_sass
from .stages.sass import parse_sass

__all__ = ["SourceMap", "LineKind", "SourceLoc", "IRLine", "PARSERS", "parse_stage"]

PARSERS: dict[str, Callable[[str], Parsed]] = {
    "ttir": parse_mlir,
    "ttgir": parse_mlir,
    "llir": parse_llvm,
    "ptx": parse_ptx,
    "sass": parse_sass,
    "amdgcn": parse_amdgcn,
}


def consecutive_runs(ascending) -> list[tuple[int, int]]:
    """Ascending integers as runs of consecutive ones, each a [start, end) pair: 3 4 5 9 -> (3, 6) (9, 10)."""
    runs: list[tuple[int, int]] = []
    for n in ascending:
        if runs and runs[-1][1] == n:
            runs[-1] = (runs[-1][0], n + 1)
        else:
            runs.append((n, n + 1))
    return runs


def parse_stage(stage: str, text: str) -> Parsed:
    if stage == "source":
        return _parse_source(text)
    return PARSERS[stage](text)


def _parse_source(text: str) -> Parsed:
    kinds = []
    for line in text.splitlines():
        s = line.strip()
        kinds.append(LineKind.BLANK if not s else LineKind.COMMENT if s.startswith("#") else LineKind.INSTRUCTION)
    return Parsed(kinds, [None] * len(kinds))


class SourceMap:
    """Both directions between the user's file and each stage of one compilation. Stages are parsed
    on first use and cached; `get_text(stage)` supplies a stage's text."""

    def __init__(self, stages: tuple[str, ...], get_text: Callable[[str], str], user_file: str) -> None:
        self.stages = tuple(stages)
        self._get_text = get_text
        self.user_file = user_file
        self._user_base = os.path.basename(user_file)
        self._user_paths: dict[str, bool] = {}
        self._lines: dict[str, list[IRLine]] = {}
        self._parsed: dict[str, Parsed] = {}
        self._inverse: dict[str, dict[int, list[int]]] = {}

    @classmethod
    def of(cls, comp) -> "SourceMap":
        """The source map of a compile.Compilation (a failed one has only its source)."""
        stages = comp.stage_names if comp.ok else ("source",)
        return cls(stages, comp.stage, comp.kernel.file)

    # --- the user's file -------------------------------------------------------------------------

    def is_user_file(self, path: str) -> bool:
        got = self._user_paths.get(path)
        if got is None:
            if path == self.user_file or os.path.normpath(path) == os.path.normpath(self.user_file):
                got = True
            else:
                norm = path.replace("\\", "/")
                got = (os.path.basename(norm) == self._user_base
                       and "/triton/language/" not in norm and "/site-packages/triton/" not in norm)
            self._user_paths[path] = got
        return got

    def _user_frames(self, chain: Chain | None, memo: dict) -> tuple[SourceLoc, ...]:
        if chain is None:
            return ()
        got = memo.get(chain)
        if got is None:
            frames: list[SourceLoc] = []
            for loc in chain:
                if loc.line > 0 and self.is_user_file(loc.file):
                    user_loc = loc if loc.file == self.user_file else SourceLoc(self.user_file, loc.line, loc.column)
                    if not frames or frames[-1].line != user_loc.line or frames[-1].column != user_loc.column:
                        frames.append(user_loc)
            got = tuple(frames)
            memo[chain] = got
        return got

    # --- building ----------------------------------------------------------------------------------

    def _check(self, stage: str) -> None:
        if stage not in self.stages:
            raise KeyError(f"stage '{stage}' is not in this compilation; choose one of: {', '.join(self.stages)}")

    def parsed(self, stage: str) -> Parsed:
        self._check(stage)
        got = self._parsed.get(stage)
        if got is None:
            got = parse_stage(stage, self._get_text(stage))
            self._parsed[stage] = got
        return got

    def lines(self, stage: str) -> list[IRLine]:
        """One IRLine per line of the stage's text (`text.splitlines()`)."""
        got = self._lines.get(stage)
        if got is not None:
            return got
        if stage == "source":
            got = self._source_lines()
        else:
            parsed = self.parsed(stage)
            if stage == "sass" and "ptx" in self.stages:
                self._undo_asm_line_shift(parsed)
                self._restore_inlining_from_ptx(parsed)
            memo: dict = {}
            irline_memo: dict = {}
            inferred = parsed.inferred
            got = []
            for index, (kind, chain) in enumerate(zip(parsed.kinds, parsed.chains)):
                frames = self._user_frames(chain, memo)
                was_inferred = index in inferred if inferred else False
                key = (kind, frames, was_inferred)
                line = irline_memo.get(key)
                if line is None:
                    line = IRLine(kind, frames[0] if frames else None, frames, was_inferred)
                    irline_memo[key] = line
                got.append(line)
        self._lines[stage] = got
        return got

    def _source_lines(self) -> list[IRLine]:
        parsed = self.parsed("source")
        out = []
        for index, kind in enumerate(parsed.kinds):
            loc = SourceLoc(self.user_file, index + 1, 0)
            out.append(IRLine(kind, loc, (loc,)))
        return out

    def _undo_asm_line_shift(self, sass: Parsed) -> None:
        """ptxas saw the shifted `.loc` lines of inline asm blocks (see stages/ptx.py) and wrote them into
        the cubin's line table; SASS has no columns to tell them apart. Two repairs, both from the PTX:
        a SASS memory instruction takes the true line of the PTX memory instruction(s) that ptxas saw at
        its line; any other instruction whose line is only ever a shifted line in the PTX goes back to its
        asm block's true line. Repaired lines are marked inferred."""
        ptx = self.parsed("ptx")
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
        text_lines = self._get_text("sass").splitlines()
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
            memory_key = (key[0], key[1], memory_direction(op)) if op in ir_sass.GLOBAL_OR_SHARED else None
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

    def _restore_inlining_from_ptx(self, sass: Parsed) -> None:
        """When the PTX carries its inlining only in comments (older LLVM, Triton 3.6), ptxas never saw it
        and the SASS line table has bare rows: `standard.py:263` with no call site, a user helper's line
        with no caller. Each such row takes the call sites the PTX records for the same file and line;
        where the PTX inlines that line at several places, the one whose outermost line matches the
        previous SASS row naming one of the candidate call sites is taken (else the first) and the line is
        marked inferred."""
        if any(chain is not None and len(chain) > 1 for chain in sass.chains):
            return  # the line table has its own inlining (newer Triton)
        ptx = self.parsed("ptx")
        direct: set[tuple[str, int]] = set()
        callers: dict[tuple[str, int], list[Chain]] = {}
        for kind, chain in zip(ptx.kinds, ptx.chains):
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
                if chain[-1].line in call_sites:  # rows elsewhere (a line 31 scheduled in between) don't count
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

    # --- queries -----------------------------------------------------------------------------------

    def source_line(self, stage: str, index: int) -> int | None:
        """The user-file line (1-based) of IR line `index` (0-based), or None."""
        loc = self.lines(stage)[index].loc
        return loc.line if loc is not None else None

    def source_lines(self, stage: str, index: int) -> tuple[int, ...]:
        """Every user-file line in the chain of IR line `index`, innermost first."""
        return tuple(f.line for f in self.lines(stage)[index].frames)

    def _inverse_index(self, stage: str) -> dict[int, list[int]]:
        got = self._inverse.get(stage)
        if got is None:
            got = {}
            for index, line in enumerate(self.lines(stage)):
                seen = None
                for frame in line.frames:
                    if frame.line != seen:
                        got.setdefault(frame.line, []).append(index)
                        seen = frame.line
            for indices in got.values():  # a chain may name the same line twice (recursion-free, rare)
                if any(b <= a for a, b in zip(indices, indices[1:])):
                    indices[:] = sorted(set(indices))
            self._inverse[stage] = got
        return got

    def ir_lines(self, stage: str, source_line: int) -> list[int]:
        """0-based indices of the IR lines whose chain contains `source_line`."""
        return list(self._inverse_index(stage).get(source_line, ()))

    def blocks(self, stage: str, source_line: int) -> list[tuple[int, int]]:
        """`ir_lines` as contiguous [start, end) runs."""
        return consecutive_runs(self._inverse_index(stage).get(source_line, ()))

    def instruction_lines(self, stage: str) -> int:
        return sum(1 for line in self.lines(stage) if line.kind is LineKind.INSTRUCTION)

    def mapped_fraction(self, stage: str) -> float:
        """Mapped instruction lines ÷ instruction lines (1.0 for a stage with no instructions)."""
        total = mapped = 0
        for line in self.lines(stage):
            if line.kind is LineKind.INSTRUCTION:
                total += 1
                if line.loc is not None:
                    mapped += 1
        return mapped / total if total else 1.0

    def recorded_fraction(self, stage: str) -> float:
        """Like mapped_fraction, counting only locations the compiler recorded (not inferred ones)."""
        total = mapped = 0
        for line in self.lines(stage):
            if line.kind is LineKind.INSTRUCTION:
                total += 1
                if line.loc is not None and not line.inferred:
                    mapped += 1
        return mapped / total if total else 1.0
