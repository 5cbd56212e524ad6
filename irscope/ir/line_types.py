"""What a line of a stage is and which source lines it came from: the types the location readers
(`locations`), the MLIR reading (`mlir`) and the source map share."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class LineKind(str, enum.Enum):
    """What an IR line is. Coverage counts INSTRUCTION lines only. The values are stable strings."""

    INSTRUCTION = "instruction"
    LABEL = "label"
    DIRECTIVE = "directive"
    DEBUG = "debug"
    COMMENT = "comment"
    BLANK = "blank"


@dataclass(frozen=True)
class SourceLoc:
    file: str  # absolute path (for frames in the user's file: the user's file as irscope opened it)
    line: int  # 1-based
    column: int  # 1-based; 0 where the stage records none (SASS)


@dataclass(frozen=True)
class IRLine:
    kind: LineKind
    loc: SourceLoc | None  # the innermost frame that lies in the user's file (None: unmapped)
    frames: tuple[SourceLoc, ...]  # every frame in the user's file, innermost first
    inferred: bool = (
        False  # the compiler gave this line no location; irscope inferred it (see parsers)
    )


# A raw chain: every frame the compiler recorded, innermost first, library frames included.
Chain = tuple[SourceLoc, ...]


@dataclass
class Parsed:
    kinds: list[LineKind]
    chains: list[Chain | None]
    inferred: set[int] = field(default_factory=set)  # indices whose chain irscope inferred
    extra: dict = field(default_factory=dict)  # dialect-specific facts other stages may use


def infer_gaps(kinds: list[LineKind], chains: list[Chain | None], prefer_next: bool) -> set[int]:
    """Give instructions that the compiler left without a location (LLVM phis; `.loc f 0 c` runs of
    hoisted or merged machine code) the location of a located instruction of the same basic block:
    the next one when `prefer_next`, else the previous one, else the other side; a block with none takes
    the previous located instruction before it. Returns the indices filled in (they are marked inferred)."""
    inferred: set[int] = set()
    waiting: list[int] = []
    before_block: Chain | None = None  # last located instruction before the current block
    in_block: Chain | None = None  # last located instruction in the current block

    def flush(fill: Chain | None) -> None:
        if fill is not None:
            for w in waiting:
                chains[w] = fill
                inferred.add(w)
        waiting.clear()

    for index, kind in enumerate(kinds):
        if kind is LineKind.INSTRUCTION:
            chain = chains[index]
            if chain is None:
                waiting.append(index)
                continue
            if waiting:
                flush(chain if (prefer_next or in_block is None) else in_block)
            in_block = chain
        elif kind is LineKind.LABEL:
            flush(in_block if in_block is not None else before_block)
            if in_block is not None:
                before_block = in_block
            in_block = None
    flush(in_block if in_block is not None else before_block)
    return inferred
