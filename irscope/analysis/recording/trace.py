"""What a recording of one program holds: its steps, its memory accesses, the regions it touched.

Plain data (NumPy, no torch, no Triton), so that a front end can hold a recording the worker made."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from irscope.analysis.recording.values import Region, Value
from irscope.base.errors import IrscopeError

if TYPE_CHECKING:
    from irscope.base.model import Launch


@dataclass
class MemoryAccess:
    """One executed load, store or atomic: which argument it touches and where.

    `offsets` are element offsets from the argument tensor's first element (int64, shaped like the
    access: the tl.load's pointer block); `byte_offsets` the same in bytes; `mask` is None when every
    lane is on. Masked-off lanes keep whatever offset the kernel computed (possibly out of range).
    """

    line: int
    kind: str  # "load" | "store" | "atomic"
    param: str | None  # the pointer argument it points into
    offsets: np.ndarray
    byte_offsets: np.ndarray
    mask: np.ndarray | None
    elem_bytes: int
    dtype: str = ""
    function: str = ""  # the kernel or @triton.jit helper the line is in
    step: int | None = None  # index into Recording.steps (None when recorded without locals)
    last_line: int = 0  # the last line of the call that made it (a call written over several lines)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.offsets.shape)

    @property
    def active(self) -> np.ndarray:
        return np.ones(self.offsets.shape, dtype=bool) if self.mask is None else self.mask

    def summary(self) -> str:
        on = int(self.active.sum())
        active = self.offsets[self.active]
        span = f"[{int(active.min())} .. {int(active.max())}]" if active.size else "[]"
        return f"{self.kind} {self.param or '?'} + {span}, {on}/{self.offsets.size} lanes on"


@dataclass(frozen=True)
class FrameRef:
    function: str
    line: int


@dataclass
class Step:
    """The program stopped before running `line` (event "line"), after the last line of a function
    (event "return"), or where an exception stopped it (event "exception")."""

    index: int
    function: str
    line: int
    event: str
    stack: tuple[FrameRef, ...]
    locals: dict[str, Value]
    accesses: list[int] = field(default_factory=list)  # MemoryAccess indices this line executed
    message: str = ""

    @property
    def depth(self) -> int:
        return len(self.stack)


@dataclass
class Recording:
    kernel: str
    file: str
    program_id: tuple[int, int, int]
    grid: tuple[int, int, int]
    steps: list[Step]
    accesses: list[MemoryAccess]
    regions: dict[str, Region]
    tensors: dict[str, Any]  # the copies the program ran on, as it left them (worker side); empty
    # where it ran on the launch's own memory and what it wrote was put back (a forked copy of the worker)
    error: str | None = None  # one line, when the kernel raised
    error_line: int | None = None
    seconds: float = 0.0
    # the steps that called breakpoint() (in order)
    debugger_steps: list[int] = field(default_factory=list)
    # floating-point arithmetic run: (dtype, kind, elements, flops) -> ops (the interpreter's FlopHook: kind
    # "elementwise", "tensor" or "reduce", whose flops field holds its outputs)
    arithmetic: dict[tuple[str, str, int, int], int] = field(default_factory=dict)

    @property
    def lines(self) -> list[int]:
        return sorted({s.line for s in self.steps})

    @property
    def debugger_lines(self) -> list[int]:
        """The lines that called breakpoint() or pdb.set_trace(), each once, in the order first reached."""
        return list(dict.fromkeys(self.steps[i].line for i in self.debugger_steps))


class OutOfBoundsAccess(Exception):
    """A load or store of the kernel would touch memory no argument tensor owns."""


def normalize_program_id(
    program_id: int | tuple[int, ...] | list[int], grid: tuple[int, int, int]
) -> tuple[int, int, int]:
    pid = (program_id,) if isinstance(program_id, int) else tuple(int(p) for p in program_id)
    if not 1 <= len(pid) <= 3:
        raise IrscopeError(f"program id {program_id!r}: give 1 to 3 numbers, like 1 or 1,0")
    pid = pid + (0,) * (3 - len(pid))
    if any(not 0 <= p < g for p, g in zip(pid, grid)):
        shown = ",".join(str(g) for g in grid)
        raise IrscopeError(
            f"program {','.join(map(str, pid))} is outside the launch's grid ({shown}); "
            f"choose each number below the grid's size"
        )
    return pid  # type: ignore[return-value]


def launch_grid(launch: Launch) -> tuple[int, int, int]:
    grid = tuple(launch.grid or (1,))
    return tuple(grid + (1,) * (3 - len(grid)))[:3]  # type: ignore[return-value]
