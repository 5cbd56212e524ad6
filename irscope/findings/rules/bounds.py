"""`out-of-bounds`: the interpreted launch loaded or stored outside every tensor.

The capture checks each access of a launch it runs in the interpreter (engine/triton_compat/bounds.py) and
switches the lanes outside off. On a GPU the same lanes read whatever lies there or write memory the kernel
does not own: quiet while the caching allocator's rounding hides it, a corrupted neighbour or an illegal
address error when it does not. It holds for the launch's arguments, so it is an error of this launch, said
with the line, the program and where the address fell against the nearest argument.
"""

from __future__ import annotations

import os

from irscope.base.compiled import CompiledKernel
from irscope.findings.model import Cost, Finding


def bounds_findings(comp: CompiledKernel, new) -> list[Finding]:
    stray = comp.launch.out_of_bounds
    if stray is None:
        return []
    here = stray.path is not None and os.path.realpath(stray.path) == os.path.realpath(
        comp.kernel.file
    )
    line = stray.line if here else comp.kernel.line
    at = "" if here else f" (at {os.path.basename(stray.path or '?')}:{stray.line})"
    verb = {"load": "loads", "store": "stores"}.get(stray.kind, "updates atomically")
    program = ", ".join(map(str, stray.program))
    what = (
        "read whatever lies there"
        if stray.kind == "load"
        else "write memory the kernel does not own"
    )
    return [
        new(
            "out-of-bounds",
            "error",
            line,
            f"program ({program}) of this launch {verb} {stray.lanes} of {stray.of} lanes outside every "
            f"tensor{at}, the first {stray.where}{stray.beyond_home()}{stray.others()}. On a GPU those lanes {what} "
            "(irscope switched them off to keep running)",
            "mask the access with the tensor's size (`mask=offsets < n`), or size the grid and the BLOCK so "
            "that no program reaches past the end; check the strides and the offset the pointer starts at",
            Cost(stray.lanes, "lanes_out_of_bounds", f"{stray.lanes} of {stray.of} lanes"),
            None,
        )
    ]
