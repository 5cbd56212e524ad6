"""`MemoryOp`, one load, store or atomic instruction line of a stage, and the words for its kind and space.

Kept apart from the parsers that make them (`memory_asm`, `memory_ir`) and from the per-compilation
entry points (`memory`), which both need it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

LOAD, STORE, ATOMIC = "load", "store", "atomic"
GLOBAL, SHARED, LOCAL, GENERIC, CONSTANT, TENSOR = (
    "global",
    "shared",
    "local",
    "generic",
    "constant",
    "tensor",
)


@dataclass(frozen=True)
class MemoryOp:
    stage: str  # "ttir", "ttgir", "ptx", "sass", "amdgcn"
    line: int  # 0-based index in comp.stage(stage).splitlines()
    opcode: str  # the mnemonic as written: "ld.global.v4.b32", "LDG.E.128", "tt.load"
    op: str  # "load" | "store" | "atomic"
    space: str  # "global" | "shared" | "local" | "generic" | "constant" | "tensor"
    width_bytes: int | None  # bytes per thread per instruction (None where the stage does not say)
    masked: bool  # predicated / guarded by a mask: some lanes may not access
    elem_type: str | None = None  # "f32", "b32", "f16", ...
    vector: int = 1  # elements (registers) moved per thread
    predicate: str | None = None  # "%p1", "!%p2", "!P0" ...
    other: str | None = None  # TTIR/TTGIR: the value given to masked-off lanes
    cache: tuple[str, ...] = ()  # cache, eviction and ordering modifiers
    copy_to: str | None = None  # async copies: the space the data lands in ("shared")
    source_line: int | None = None  # 1-based line of the user's file (from the source map)

    def to_json(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            f"{self.stage}_line": self.line + 1,
            "source_line": self.source_line,
            "op": self.op,
            "space": self.space,
            "width_bytes": self.width_bytes,
            "masked": self.masked,
            "opcode": self.opcode,
        }

    def replace(self, **changes: Any) -> "MemoryOp":
        return dataclasses.replace(self, **changes)
