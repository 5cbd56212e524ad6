"""What a front end holds of an opened file: plain-data views of its kernels, launches and compilations.

The worker builds them from the real objects (`snapshot`); the front end reads them without torch or
Triton. A view answers what the TUI draws from (stage texts, names, resources, specialization) and hands
what needs the launch's tensors, Triton or the interpreter back to the worker through `call`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from irscope.base.compiled import AnalysisCache
from irscope.base.errors import IrscopeError
from irscope.base.model import CompileFailure, Resources, stages_for
from irscope.base.names import absent_stage
from irscope.base.target import Target
from irscope.ir.sourcemap import SourceMap


@dataclass
class KernelInfo:
    name: str
    file: str
    line: int
    module: str = ""
    autotune_configs: list[str] = field(default_factory=list)  # each triton.Config, as text
    heuristics: list[str] = field(default_factory=list)
    shown: str = ""  # the kernel's file as the user would write it (the opened file: as typed)
    inductor: dict | None = (
        None  # an Inductor kernel's kernel_kind, aten_ops, source_nodes, generated_for, ...
    )
    language: str = "triton"  # "gluon" for a @gluon.jit kernel (base/model.Kernel.language)
    cell: str | None = None  # a notebook's kernel: `cell 3, line 2` (its def line)
    # a notebook's kernel: each line of its source as `cell:line` (`3:2`), "" for a line of no cell's
    line_labels: tuple[str, ...] = ()

    @property
    def inductor_ops(self) -> str:
        """`fuses aten.gelu, aten.sum` for an Inductor kernel ("" otherwise): the picker, header and Info say it."""
        if not self.inductor:
            return ""
        ops = ", ".join(self.inductor.get("aten_ops") or []) or "ops not written"
        return f"{self.inductor.get('kernel_kind')}: {ops}"

    @property
    def generated_for_cpu(self) -> bool:
        return bool(self.inductor) and self.inductor.get("generated_for") == "cpu"

    @property
    def qualified_name(self) -> str:
        return f"{self.module}:{self.name}" if self.module else self.name

    @property
    def is_autotuned(self) -> bool:
        return bool(self.autotune_configs)


@dataclass
class LaunchInfo:
    grid: tuple[int, ...] | None
    origin: str
    autotune_index: int | None = None
    autotune_count: int | None = None
    interp_error: str | None = None
    guesses: dict[str, str] = field(default_factory=dict)
    autotune_tried: tuple[
        int, ...
    ] = ()  # the configs its autotuner would try for this launch, in its order
    out_of_bounds: str | None = (
        None  # its interpreted run's first access outside its tensors, in words
    )
    # on a GPU, its tensors were let go of for the file's memory: stepping it reads zeros
    inputs_released: bool = False


@dataclass
class WorkspaceInfo:
    """The opened file as a whole: where its kernels ran and what the run said."""

    path: str
    device: str
    run_warning: str | None = None
    notes: list[str] = field(default_factory=list)
    # the file's kernels the run did not launch (base/missing.py)
    missing: list[dict] = field(default_factory=list)
    # specializations only a benchmark sweep's exploration reached, not compiled (workspace.Named), each a dict:
    # index (the worker's handle: op_compile_named), name, label, line, grid, constexprs, spec, warps, number,
    # compiled (the front end sets it once it has compiled one)
    named: list[dict] = field(default_factory=list)
    # the opened file and the local modules its run imported: what the TUI watches for saves
    sources: list[str] = field(default_factory=list)


@dataclass
class CompilationView:
    """One compilation as the front end sees it. `texts` and `resources` arrive with `prepare`."""

    key: int  # the worker's handle for the real compilation (unique across workers)
    label: str  # the kernel's name as the picker shows it (module added when ambiguous)
    kernel: KernelInfo
    launch: LaunchInfo
    target: Target
    failure: CompileFailure | None
    source_text: str = field(repr=False)
    signature: dict[str, str]
    constexprs: dict[str, Any]  # values as Python literals (anything else as its repr)
    specialization: dict[str, str]
    num_warps: int
    num_stages: int
    block_warps: int = 0  # warps per block as launched (warp specialization's partitions included)
    # each grid its launches ran with, and how many did (Compilation.grid_launches)
    grid_launches: dict[tuple[int, ...], int] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict, repr=False)
    resources: Resources | None = None
    # the cubin's instruction encodings, for SASS explanations
    sass_controls: dict | None = field(default=None, repr=False)
    # stages whose text is still being made (prepare's first answer leaves SASS to nvdisasm): their texts
    # say so, and a second `prepare` brings them
    pending: tuple[str, ...] = ()
    analyses: AnalysisCache = field(default_factory=AnalysisCache, repr=False, compare=False)
    _call: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    _source_map: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.block_warps = self.block_warps or self.num_warps

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_call"] = state["_source_map"] = None
        state["analyses"] = AnalysisCache()  # results stay with the side that computed them
        return state

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def stage_names(self) -> tuple[str, ...]:
        return stages_for(self.target, self.kernel.language)

    def stage(self, name: str) -> str:
        if name == "source":
            return self.source_text
        absent = absent_stage(name, self.kernel.language)
        if absent is not None:
            raise IrscopeError(
                f"{self.kernel.name} is a {self.kernel.language.capitalize()} kernel, so it has no {name}: "
                f"{absent}; choose one of: {', '.join(self.stage_names)}"
            )
        if name not in self.stage_names:
            raise IrscopeError(
                f"stage '{name}' does not exist for target {self.target}; "
                f"choose one of: {', '.join(self.stage_names)}"
            )
        if self.failure is not None:
            raise IrscopeError(
                f"{self.kernel.name} did not compile, so it has no {name}: {self.failure.message}"
            )
        if name not in self.texts:
            raise IrscopeError(f"{name} of {self.kernel.name} is not loaded yet")
        return self.texts[name]

    @property
    def source_map(self):
        if self._source_map is None:
            self._source_map = SourceMap.of(self)
        return self._source_map

    def call(self, op: str, *args: Any) -> Any:
        """Run an analysis that needs the worker (the launch's tensors, Triton, the interpreter)."""
        if self._call is None:
            raise IrscopeError(f"{self.kernel.name}: this view is not connected to a worker")
        return self._call(op, self.key, *args)


def literal(value: Any) -> Any:
    """A value a front end can hold: Python literals as they are, anything else (a dtype) as text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)) and all(literal(v) is v for v in value):
        return value
    return repr(value)
