"""What the cursor is on, as info panels and other plug-ins see it."""

from __future__ import annotations

from dataclasses import dataclass

from irscope.base.compiled import CompiledKernel


@dataclass(frozen=True)
class CursorContext:
    comp: CompiledKernel  # the compilation being shown
    stage: str  # the stage of the pane under the cursor: "source", "ttir", ..., "sass", "amdgcn"
    index: int  # 0-based line index in comp.stage(stage).splitlines()
    source_line: int | None  # 1-based user-file line linked to it (via comp.source_map)
