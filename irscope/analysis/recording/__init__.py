"""A recording of one program of a captured launch: what it holds (`trace`), its values, moving through it
(`stepper`) and text views of it. The recording itself is made in the worker, by Triton's interpreter
(`engine.recording`); the stepper and the coalescing analysis read it:

    from irscope.engine.recording import record_program   # the worker's side: it runs the interpreter
    rec = record_program(launch, program_id=(1, 0, 0), with_locals=False)   # launch: model.Launch
    for a in rec.accesses:          # every load/store/atomic executed, in order
        a.line, a.kind, a.param     # source line, "load"|"store"|"atomic", pointer argument's name
        a.offsets, a.byte_offsets   # int64 arrays shaped like the access (element / byte offsets
                                    #   from the argument tensor's first element)
        a.mask, a.elem_bytes        # bool array or None (all lanes on); bytes per element
    rec.steps                       # with_locals=True: every executed line with its locals (Value)
    rec.error, rec.tensors          # one-line kernel error or None; the copies the program wrote

Recording leaves the launch's tensors as they were. with_locals=False does no line tracing.
"""

from irscope.analysis.recording.trace import (
    FrameRef,
    MemoryAccess,
    OutOfBoundsAccess,
    Recording,
    Step,
    launch_grid,
    normalize_program_id,
)
from irscope.analysis.recording.values import Value

__all__ = [
    "FrameRef",
    "MemoryAccess",
    "OutOfBoundsAccess",
    "Recording",
    "Step",
    "Value",
    "launch_grid",
    "normalize_program_id",
]
