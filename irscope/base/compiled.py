"""The compiled kernel as every layer sees it, and the one cache its analyses keep their results in.

Two classes are compiled kernels: the worker's `engine.compile.compilation.Compilation` (the real one,
with the launch's tensors and Triton's objects behind it) and the front end's
`worker.views.CompilationView` (plain data the worker sent). The analyses, the findings, the IR
readings and the terminal UI take either, typed as `CompiledKernel`. What only the worker can answer
(the launch's argument values, a program recorded in the interpreter, Triton's own layouts, a
recompile) is `LaunchedKernel`: the analyses that need it run in the worker, on a `Compilation`.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, TypeVar

from irscope.base.model import CompileFailure, Resources
from irscope.base.target import Target

T = TypeVar("T")


class AnalysisCache:
    """One compilation's analysis results, each computed once, by name (`"coalescing"`,
    `"memory_ops:ptx"`, ...). Two threads asking at once may both compute; the later result is kept,
    and both are the same analysis of the same compilation."""

    def __init__(self) -> None:
        self._results: dict[str, Any] = {}

    def get(self, name: str, compute: Callable[[], T]) -> T:
        if name not in self._results:
            self._results[name] = compute()
        return self._results[name]

    def peek(self, name: str) -> Any | None:
        """The result if it was computed already, else None (nothing is computed)."""
        return self._results.get(name)

    def put(self, name: str, value: Any) -> None:
        """Replace a result (measured mode adds its findings to the predicted ones)."""
        self._results[name] = value


class KernelNames(Protocol):
    """What every layer reads of the kernel behind a compilation."""

    name: str
    file: str
    line: int
    module: str
    language: str  # "triton", or "gluon" for a @gluon.jit kernel


class LaunchShape(Protocol):
    """What every layer reads of the launch behind a compilation."""

    grid: tuple[int, ...] | None
    origin: str


class CompiledKernel(Protocol):
    """One kernel compiled for one target with one launch's specialization."""

    kernel: KernelNames
    launch: LaunchShape
    target: Target
    failure: CompileFailure | None
    source_text: str
    analyses: AnalysisCache
    # each grid its launches ran with, in launch order, and how many did ({} if unknown)
    grid_launches: dict[tuple[int, ...], int]

    @property
    def ok(self) -> bool: ...

    @property
    def stage_names(self) -> tuple[str, ...]: ...

    def stage(self, name: str) -> str:
        """The text of one stage ("source", "ttir", ..., "sass" or "amdgcn")."""
        ...

    @property
    def source_map(self) -> Any:
        """`ir.sourcemap.SourceMap`: every line of every stage linked to its source line, both ways."""
        ...

    @property
    def resources(self) -> Resources: ...

    @property
    def signature(self) -> dict[str, str]: ...

    @property
    def constexprs(self) -> dict[str, Any]: ...

    @property
    def specialization(self) -> dict[str, str]: ...

    @property
    def num_warps(self) -> int: ...

    @property
    def num_stages(self) -> int: ...

    @property
    def block_warps(self) -> int: ...

    @property
    def sass_controls(self) -> dict[int, tuple[int, int]] | None:
        """The cubin's instruction encodings, by instruction offset (SASS control fields)."""
        ...


class LaunchedKernel(CompiledKernel, Protocol):
    """A compiled kernel with its launch behind it: what the analyses that need the launch ask (the
    worker's `Compilation` answers; a front end asks the worker instead)."""

    asm: dict[
        str, Any
    ]  # the binary stages as Triton made them ("cubin", "hsaco"), with the text ones

    @property
    def param_names(self) -> list[str]: ...

    def launch_values(self, launch: Any = None) -> dict[str, Any]:
        """The launch's arguments by parameter name ({} where they do not bind)."""
        ...

    def runtime_values(self, launch: Any = None) -> list[Any]:
        """What the compiled kernel's runtime parameters receive, in order."""
        ...

    def record_program(
        self, program_id: tuple[int, ...], *, launch: Any = None, with_locals: bool = False
    ) -> Any:
        """One program run in Triton's interpreter: an `analysis.recording.Recording`."""
        ...

    def triton_layouts(self) -> dict[int, Any]:
        """Triton's own linear layouts of the TTGIR's loads and stores, by TTGIR line."""
        ...

    def recompiled(self, *, args: tuple, kwargs: dict, origin: str) -> LaunchedKernel:
        """The same kernel for the same target, compiled for a launch with other arguments."""
        ...
