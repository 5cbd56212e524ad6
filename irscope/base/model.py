"""The nouns of irscope: kernels found in a file, launches of them, and their compilations."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irscope.base.names import (  # noqa: F401
    ALL_STAGES,
    AMD_STAGES,
    DEFAULT_TARGET,
    IR_STAGES,
    NVIDIA_STAGES,
    TARGETS,
    stages_of,
)
from irscope.base.target import Target

if TYPE_CHECKING:
    from irscope.engine.triton_compat import JITFunction


def stages_for(target: Target, language: str = "triton") -> tuple[str, ...]:
    """The stages a compilation for `target` has; a Gluon kernel's lack TTIR (names.ABSENT_STAGES)."""
    return stages_of(target.is_nvidia, language)


@dataclass
class Kernel:
    """A @triton.jit function the user's file defines or launches (then it may live in any module)."""

    name: str
    file: str
    line: int  # the line of its `def`
    jit: "JITFunction"
    autotune_configs: list[Any] | None = None  # triton.Config objects
    heuristics: list[str] = field(default_factory=list)
    module: str = ""  # the module that defines it ("__main__" for the opened file)
    inductor: Any = None  # an Inductor kernel (engine/inductor/kernels.py): its decorator's configs and triton_meta
    inductor_info: dict | None = (
        None  # plain data: kernel_kind, aten_ops, source_nodes, generated_for, ...
    )
    language: str = (
        "triton"  # "gluon" for a @gluon.jit kernel (its layouts written by hand, no TTIR)
    )

    @property
    def qualified_name(self) -> str:
        """`module:name`, as --kernel takes it when a name alone is ambiguous."""
        return f"{self.module}:{self.name}" if self.module else self.name

    @property
    def is_autotuned(self) -> bool:
        return bool(self.autotune_configs)


@dataclass(frozen=True)
class StrayAccess:
    """The first access of a launch that reached outside the memory the launch may touch."""

    kind: str  # "load", "store" or "atomic"
    path: str | None  # the kernel's (or its helper's) file and line of the access
    line: int | None
    program: tuple[int, ...]
    lanes: int  # the access's lanes outside, of `of`
    of: int
    # where the first such address lies: "at byte 4096 of `out`, which holds 4096 bytes"
    where: str
    accesses: int  # how many accesses of the launch reached outside, this one included
    home: str | None = None  # the argument the access is of (the one its first active lane lies in)
    outside_home: int = 0  # its lanes outside that argument, those inside another tensor included

    def describe(self) -> str:
        at = f"line {self.line}" if self.line is not None else "a line irscope could not tell"
        if self.path and self.line is not None:
            at = f"line {self.line} of {os.path.basename(self.path)}"
        program = ", ".join(map(str, self.program))
        return (
            f"{self.kind} at {at}, program ({program}): {self.lanes} of {self.of} lanes outside every "
            f"tensor, the first {self.where}{self.beyond_home()}{self.others()}"
        )

    def others(self) -> str:
        """The launch's other accesses that reached outside, in words ("" when this was the only one)."""
        count = self.accesses - 1
        return (
            f"; {count} more access{'es' if count > 1 else ''} of the launch likewise"
            if count
            else ""
        )

    def beyond_home(self) -> str:
        """The lanes past the access's own tensor that landed inside another one (not flagged: by its address
        alone such a lane cannot be told from a legitimate access to that tensor)."""
        if self.home is None or self.outside_home <= self.lanes:
            return ""
        return (
            f"; {self.outside_home} lanes in all lie outside `{self.home}`, "
            f"{self.outside_home - self.lanes} of them inside another tensor"
        )


@dataclass
class Launch:
    """One launch of a kernel: the arguments the JIT saw, and where they came from."""

    kernel: Kernel
    args: tuple
    kwargs: dict
    grid: tuple[int, ...] | None
    origin: str  # "captured" (the file's own launch) or "given" (-D / --arg on the command line)
    autotune_index: int | None = None
    autotune_count: int | None = None
    interp_error: str | None = (
        None  # why Triton's interpreter could not run it (it is compiled all the same)
    )
    # argument -> the stand-in irscope chose (no launch)
    guesses: dict[str, str] = field(default_factory=dict)
    autotune_first: bool = (
        False  # the first config the autotuner would try for this launch, after its pruning
    )
    warmup: bool = (
        False  # compiled by `f.warmup(...)`, not run: its grid is not the one the kernel runs with
    )
    programs: tuple[int, int] | None = None  # (run, in the grid) when the interpreter cut it short
    autotune_tried: tuple[
        int, ...
    ] = ()  # the configs its autotuner would try for this launch, in its order
    explored: bool = (
        False  # made only by irscope's exploration of a benchmark sweep: named, compiled on request
    )
    # the first load/store of the interpreted launch that reached outside its tensors (engine/.../bounds.py)
    out_of_bounds: StrayAccess | None = None
    # on a GPU: the file had dropped its tensors and irscope let go of them for the file's memory; host stand-ins
    # reading zeros stand in their place (engine/capture/held_memory.py)
    inputs_released: bool = False
    # on a GPU: the grids later launches of its specialization ran with, which the capture did not keep, and how
    # many ran with each (engine/capture/run.py)
    repeat_grids: dict[tuple[int, ...], int] = field(default_factory=dict)
    # an autotuned launch whose tuning key was settled by an earlier launch with another value of a constexpr
    # the key leaves out: a GPU compiles the one config its timing chose then, which no run without timing can
    # know, so each config it may be is named and none compiled until asked for
    choice_by_timing: bool = False

    def named_only(self, config: int | None = None) -> bool:
        """Named when the file opens, compiled only on request (workspace.Named); a config only timing
        picks is compiled when its number is asked for (`config`)."""
        return self.explored or (self.choice_by_timing and config is None)

    @property
    def named_why(self) -> str:
        """Why it is named, not compiled: "sweep" (a benchmark sweep's later point) or "timing"."""
        return "sweep" if self.explored else "timing"


@dataclass
class Resources:
    """Per-thread resources of the compiled kernel, as the hardware will see them."""

    registers: int | None = None  # NVIDIA: REG from the cubin; AMD: VGPRs
    spills: int | None = None  # NVIDIA: 4-byte words of local memory (the driver's n_spills)
    local_bytes: int | None = None
    shared_bytes: int | None = None
    sgprs: int | None = None  # AMD only
    vgpr_spills: int | None = None  # AMD only
    sgpr_spills: int | None = None  # AMD only


@dataclass
class CompileFailure:
    message: str
    file: str | None
    line: int | None
    source_line: str | None
