"""What the cursor is on, as info panels and other plug-ins see it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from irscope.engine.compile.compilation import Compilation


@dataclass(frozen=True)
class CursorContext:
    comp: "Compilation"          # the compilation being shown
    stage: str                   # the stage of the pane under the cursor: "source", "ttir", ..., "sass", "amdgcn"
    index: int                   # 0-based line index in comp.stage(stage).splitlines()
    source_line: int | None      # 1-based user-file line linked to it (via comp.source_map)
