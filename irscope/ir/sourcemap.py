"""The source map: every line of every stage linked to the user's kernel line it came from, and back.

Each stage's parser (irscope/ir/locations/) gives raw location chains with every frame the compiler
recorded. Here they are cut down to the frames in the user's file: library code inlined from Triton
(`tl.sum`, `tl.cdiv`, …) keeps only its call site in the user's code, while a `@triton.jit` helper
defined in the user's file keeps its own line (`loc`) and its call site (`frames`).

Which paths are "the user's file": the file irscope opened, and any recorded path with the same base
name outside Triton's own package. Triton's cache key holds the function's source and line numbers but
not its path, so a cached compile may record an identical copy of the file elsewhere; frames in it are
reported under the path irscope opened.

The SASS line table is repaired from the PTX before it is read (`sass_line_repairs`).
"""

from __future__ import annotations

import os
from typing import Callable

from irscope.base.compiled import CompiledKernel
from irscope.ir.line_types import Chain, IRLine, LineKind, Parsed, SourceLoc
from irscope.ir.locations.amdgcn import parse_amdgcn
from irscope.ir.locations.llvm import parse_llvm
from irscope.ir.locations.mlir import parse_mlir
from irscope.ir.locations.ptx import parse_ptx
from irscope.ir.locations.sass import parse_sass
from irscope.ir.locations.sass_repairs import restore_inlining_from_ptx, undo_asm_line_shift

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
        kinds.append(
            LineKind.BLANK
            if not s
            else LineKind.COMMENT
            if s.startswith("#")
            else LineKind.INSTRUCTION
        )
    return Parsed(kinds, [None] * len(kinds))


class SourceMap:
    """Both directions between the user's file and each stage of one compilation. Stages are parsed
    on first use and cached; `get_text(stage)` supplies a stage's text."""

    def __init__(
        self, stages: tuple[str, ...], get_text: Callable[[str], str], user_file: str
    ) -> None:
        self.stages = tuple(stages)
        self._get_text = get_text
        self.user_file = user_file
        self._user_base = os.path.basename(user_file)
        self._user_paths: dict[str, bool] = {}
        self._lines: dict[str, list[IRLine]] = {}
        self._parsed: dict[str, Parsed] = {}
        self._inverse: dict[str, dict[int, list[int]]] = {}

    @classmethod
    def of(cls, comp: CompiledKernel) -> "SourceMap":
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
                got = (
                    os.path.basename(norm) == self._user_base
                    and "/triton/language/" not in norm
                    and "/site-packages/triton/" not in norm
                )
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
                    user_loc = (
                        loc
                        if loc.file == self.user_file
                        else SourceLoc(self.user_file, loc.line, loc.column)
                    )
                    if (
                        not frames
                        or frames[-1].line != user_loc.line
                        or frames[-1].column != user_loc.column
                    ):
                        frames.append(user_loc)
            got = tuple(frames)
            memo[chain] = got
        return got

    # --- building ----------------------------------------------------------------------------------

    def _check(self, stage: str) -> None:
        if stage not in self.stages:
            raise KeyError(
                f"stage '{stage}' is not in this compilation; choose one of: {', '.join(self.stages)}"
            )

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
                ptx = self.parsed("ptx")
                undo_asm_line_shift(parsed, ptx, self._get_text)
                restore_inlining_from_ptx(parsed, ptx)
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
            # a chain may name the same line twice (recursion-free, rare)
            for indices in got.values():
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
