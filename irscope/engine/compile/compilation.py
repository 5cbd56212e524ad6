"""Specialize a launch exactly as the JIT would, compile it offline for a target, expose its stages."""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from irscope.analysis.layouts.owners import LinearLayout
from irscope.analysis.recording.trace import Recording
from irscope.base.compiled import AnalysisCache
from irscope.base.errors import IrscopeError, LaunchRejected
from irscope.base.model import CompileFailure, Kernel, Launch, Resources, stages_for
from irscope.base.names import absent_stage
from irscope.engine.compile import ahead
from irscope.engine.inductor.specialize import inductor_specialization
from irscope.engine.recording import record_program
from irscope.engine.toolchain import (
    amdgcn_resources,
    cubin_resources,
    disassemble,
    instruction_encodings,
)
from irscope.engine.triton_compat import (
    Specialized,
    Target,
    attrs_by_param,
    compilation_error_site,
    compile_specialized,
    compiled_asm,
    compiled_metadata,
    constexpr_param_names,
    constexprs_by_param,
    is_compilation_error,
    new_cache_warning,
    remember_triton_key,
    specialize,
)
from irscope.engine.triton_compat.compile_errors import missing_extern_lib, not_implemented_builtin
from irscope.engine.triton_compat.driver import gpu_target_of
from irscope.engine.triton_compat.jit import (
    bind_arguments,
    descriptor_param_values,
    kernel_param_names,
)
from irscope.engine.triton_compat.kernel_prints import stderr_captured
from irscope.engine.triton_compat.layouts import linear_layouts_by_line
from irscope.ir.sourcemap import SourceMap

# Triton 3.9 warns about a default that changes in 3.10 on every compile; it is not the user's business here.
warnings.filterwarnings("ignore", message=".*TRITON_DEFAULT_FP_FUSION.*")

_compile_lock = threading.Lock()


@dataclass
class Compilation:
    """One kernel, compiled for one target with one launch's specialization."""

    kernel: Kernel
    launch: Launch
    target: Target
    spec: Specialized
    source_text: str
    asm: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    failure: CompileFailure | None = None
    _sass: str | None = None
    _resources: Resources | None = None
    _tools_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # the encodings' own nvdisasm run goes beside the SASS text's, once however many threads ask
    _encodings_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _source_map: Any = None
    _sass_controls: dict[int, tuple[int, int]] | None = None
    analyses: AnalysisCache = field(default_factory=AnalysisCache, repr=False, compare=False)
    # each grid the file's launches of this specialization ran with, in launch order, and how many ran
    # with it (workspace.compile); {} for one compiled from -D/--arg alone (its launch's grid is the one)
    grid_launches: dict[tuple[int, ...], int] = field(default_factory=dict)
    # the first launch with each of those grids (the roofline of each grid is made from its addresses)
    first_launch_by_grid: dict[tuple[int, ...], Launch] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def stage_names(self) -> tuple[str, ...]:
        return stages_for(self.target, self.kernel.language)

    def stage(self, name: str) -> str:
        """The text of one stage. SASS is disassembled on first use (and cached on disk)."""
        absent = absent_stage(name, self.kernel.language)
        if absent is not None:
            raise IrscopeError(
                f"{self.kernel.name} is a {self.kernel.language.capitalize()} kernel, so it has no {name}: "
                f"{absent}; choose one of: {', '.join(self.stage_names)}"
            )
        if name not in self.stage_names:
            other = "AMD" if self.target.is_nvidia else "NVIDIA"
            raise IrscopeError(
                f"stage '{name}' does not exist for target {self.target} (it is an {other} stage); "
                f"choose one of: {', '.join(self.stage_names)}"
            )
        if name == "source":
            return self.source_text
        if self.failure is not None:
            raise IrscopeError(
                f"{self.kernel.name} did not compile, so it has no {name}: {self.failure.message}"
            )
        if name == "sass":
            with self._tools_lock:
                if self._sass is None:
                    ahead.wait(
                        ahead.compilation_key(self.kernel.jit, self.target, self.spec),
                        ahead.DISASSEMBLED,
                    )
                    self._sass = disassemble(self.asm["cubin"])
                    ahead.note_done(
                        self.source_text,
                        self.kernel.jit,
                        self.target,
                        self.spec,
                        ahead.DISASSEMBLED,
                    )
            return self._sass
        return self.asm[name]

    def prefetch_sass(self) -> threading.Thread | None:
        """Start disassembling in the background (nvdisasm needs ~0.4 s of CPU even for a tiny kernel),
        so that several compilations disassemble side by side and a viewer can show the IR meanwhile."""
        if self.failure is not None or not self.target.is_nvidia or self._sass is not None:
            return None
        thread = threading.Thread(
            target=self.stage, args=("sass",), daemon=True, name="irscope-nvdisasm"
        )
        thread.start()
        return thread

    @property
    def source_map(self):
        """Every line of every stage linked to the user's source line, both ways (built lazily)."""
        if self._source_map is None:
            self._source_map = SourceMap.of(self)
        return self._source_map

    # What analyses ask of the launch behind a compilation: only the engine can answer these (they need
    # Triton or the interpreter); analyses call them on the compiled kernel they are given.

    def launch_values(self, launch: Launch | None = None) -> dict[str, Any]:
        """The launch's arguments by parameter name, as the JIT binds them ({} where they do not bind)."""
        launch = launch or self.launch
        try:
            return bind_arguments(self.kernel.jit, launch.args, launch.kwargs)
        except Exception:  # noqa: BLE001 - arguments that do not bind: every parameter unknown
            return {}

    def runtime_values(self, launch: Launch | None = None) -> list[Any]:
        """What the compiled kernel's runtime parameters receive, in order: a host tensor descriptor is
        several (the TMA descriptor, its shape, its strides); constexprs and folded constants are none."""
        bound = self.launch_values(launch)
        values: list[Any] = []
        for name, kind in self.signature.items():
            if kind == "constexpr" or self.specialization.get(name) == "constant":
                continue
            value = bound.get(name)
            expanded = descriptor_param_values(value)
            values.extend(expanded if expanded is not None else [value])
        return values

    def record_program(
        self,
        program_id: tuple[int, ...],
        *,
        launch: Launch | None = None,
        with_locals: bool = False,
    ) -> Recording:
        """One program of the launch (default: this compilation's), run in Triton's interpreter and recorded."""
        return record_program(launch or self.launch, program_id, with_locals=with_locals)

    @property
    def param_names(self) -> list[str]:
        """The kernel's parameters, in order (constexprs included)."""
        return kernel_param_names(self.kernel.jit)

    def recompiled(self, *, args: tuple, kwargs: dict, origin: str) -> Compilation:
        """The same kernel for the same target, compiled for a launch with other arguments (a what-if)."""
        launch = dataclasses.replace(self.launch, args=args, kwargs=kwargs, origin=origin)
        return compile_launch(launch, self.target, self.source_text)

    def triton_layouts(self) -> dict[int, LinearLayout]:
        """Triton's own linear layouts of the TTGIR's load and store pointers, by TTGIR line."""
        return linear_layouts_by_line(self.stage("ttgir"))

    @property
    def sass_controls(self) -> dict[int, tuple[int, int]]:
        """The cubin's instruction encodings (the SASS control fields explain reads), once per compilation;
        empty where there is no cubin or nvdisasm fails (explain then goes without control fields)."""
        with self._encodings_lock:
            if self._sass_controls is None:
                try:
                    self._sass_controls = (
                        instruction_encodings(self.asm["cubin"])
                        if self.ok and "cubin" in self.asm
                        else {}
                    )
                except Exception:  # noqa: BLE001 - nvdisasm missing or failing
                    self._sass_controls = {}
        return self._sass_controls

    @property
    def resources(self) -> Resources:
        if self._resources is None:
            if self.failure is not None:
                self._resources = Resources()
            elif self.target.is_nvidia:
                self._resources = cubin_resources(
                    self.asm["cubin"], self.metadata.get("shared"), gpu_target_of(self.target).arch
                )
            else:
                self._resources = amdgcn_resources(self.asm["amdgcn"], self.metadata.get("shared"))
        return self._resources

    @property
    def signature(self) -> dict[str, str]:
        return dict(self.spec.signature)

    @property
    def constexprs(self) -> dict[str, Any]:
        return constexprs_by_param(self.kernel.jit, self.spec.constexprs)

    @property
    def specialization(self) -> dict[str, str]:
        """Per parameter, the JIT's specialization in Triton's letters: D = divisible by 16,
        S = pointer range fits 32 bits (AMD buffer ops), constant = folded into the code."""
        return specialization_letters(self.kernel.jit, self.spec)

    @property
    def num_warps(self) -> int:
        return self.spec.options.num_warps

    @property
    def block_warps(self) -> int:
        """Warps per block as launched: with warp specialization the compiler adds its partitions' warps to
        num_warps (tutorial 09's WARP_SPECIALIZE launch: 4 asked, 12 run; `.reqntid 384`), and the GPU's
        occupancy counts them all. Its metadata says so; num_warps where it does not."""
        compiled = self.metadata.get("num_warps") if self.metadata else None
        return compiled if isinstance(compiled, int) and compiled > 0 else self.num_warps

    @property
    def num_stages(self) -> int:
        return self.spec.options.num_stages


def specialization_letters(jit, spec: Specialized) -> dict[str, str]:
    """Per parameter, the JIT's specialization in Triton's letters (Compilation.specialization); from the
    specialization alone, so a specialization named and not compiled (workspace.Named) says it too."""
    attrs = attrs_by_param(jit, spec.attrs)
    out = {}
    for name, kind in spec.signature.items():
        if kind == "constexpr":
            continue
        letters = ""
        for attr, _value in attrs.get(name, []):
            letters += {"tt.divisibility": "D", "tt.pointer_range": "S"}.get(attr, "")
        out[name] = letters
    declared = set(constexpr_param_names(jit))
    for name in constexprs_by_param(jit, spec.constexprs):
        if name not in declared:
            out[name] = (
                "constant"  # an int equal to 1 (or None), folded into the code like a constexpr
            )
    return out


# Each compilation holds its launch's tensors: keep the newest few (a TUI's edits and target changes add
# one each), not every one the process ever made. Triton's disk cache makes an evicted one cheap again.
_MEMO_SIZE = 48
_memo: OrderedDict[tuple, Compilation] = OrderedDict()


def compile_launch(
    launch: Launch, target: Target, source_text: str, *, given: str | None = None
) -> Compilation:
    """Compile one launch for one target. The same specialization is compiled once per process,
    and Triton's on-disk cache (TRITON_CACHE_DIR) makes a reopen cheap. `given`: see check_launch."""
    jit = launch.kernel.jit
    spec = check_launch(launch, target, given=given)
    key = ahead.compilation_key(jit, target, spec)
    if key in _memo:
        _memo.move_to_end(key)
        return _memo[key]
    comp = Compilation(launch.kernel, launch, target, spec, source_text)
    # a child compiling it ahead (engine/compile/ahead.py) leaves a cache hit
    ahead.wait(key, ahead.COMPILED)
    remember_triton_key()
    with _compile_lock, stderr_captured() as stderr:
        try:
            compiled = compile_specialized(jit, spec, target)
        except Exception as exc:  # a compile error is a result to show, not a crash
            missing = missing_extern_lib(exc, spec.options, target)
            comp.failure = (
                CompileFailure(missing, launch.kernel.file, None, None)
                if missing
                else _describe_failure(
                    exc,
                    stderr(),
                    launch.kernel,
                    source_text,
                    constexprs_by_param(jit, spec.constexprs),
                )
            )
        else:
            comp.asm = compiled_asm(compiled)
            comp.metadata = compiled_metadata(compiled)
            ahead.note_done(source_text, jit, target, spec, ahead.COMPILED)
    # the cache filled up during this compile, which went on without it
    cache_failed = new_cache_warning()
    if cache_failed:
        print(f"irscope: warning: {cache_failed}", file=sys.stderr)
    _memo[key] = comp
    while len(_memo) > _MEMO_SIZE:
        _memo.popitem(last=False)
    return comp


def check_launch(launch: Launch, target: Target, *, given: str | None = None) -> Specialized:
    """The JIT's own checks of a launch's arguments and launch options (-D FOO=1, num_warps=3): its
    specialization, or LaunchRejected with advice that names who chose the values. `given` is the
    -D/--arg the user passed ("" for none); None when the caller does not know (then the launch's origin
    decides)."""
    # Inductor's own specialization, from its decorator (core/inductor)
    if launch.kernel.inductor is not None:
        try:
            return inductor_specialization(
                launch.kernel.inductor, launch.autotune_index or 0, target, given=launch.kwargs
            )
        except IrscopeError:
            raise
        except Exception as exc:
            raise LaunchRejected(
                f"Inductor's compile options for {launch.kernel.name} could not be built: "
                f"{_one_line(exc)}; the file may come from another PyTorch version than the "
                f"installed one",
                _one_line(exc),
            ) from None
    try:
        return specialize(launch.kernel.jit, launch.args, launch.kwargs, target)
    except Exception as exc:
        reason = _one_line(exc)
        raise LaunchRejected(_rejection_message(launch, reason, given), reason) from None


def _rejection_message(launch: Launch, reason: str, given: str | None) -> str:
    name, file = launch.kernel.name, os.path.basename(launch.kernel.file)
    head = f"Triton's JIT rejects this launch of {name}: {reason}; "
    if given:
        return head + (
            f"check the -D/--arg values you passed ({given}); a -D names a kernel parameter or a "
            f"launch option (num_warps, num_stages, ...)"
        )
    if given is None and launch.origin == "captured":
        return (
            head
            + "check the -D/--arg values and the file's own launch (launch options: num_warps, num_stages, ...)"
        )
    if launch.origin == "captured":
        return head + (
            f"the values come from {file}'s own launch (no -D/--arg was given): fix that launch, "
            f"or override a value with -D NAME=VALUE"
        )
    return head + (
        f"{file} does not launch {name}, so its arguments come from -D/--arg and stand-ins: "
        f"give them with -D NAME=VALUE / --arg NAME=TYPE"
    )


def _one_line(exc: Exception) -> str:
    """`Type: first line of the message` (a KeyError's message without the quotes str() adds)."""
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    first = text.strip().splitlines()
    return f"{type(exc).__name__}: {first[0]}" if first else type(exc).__name__


def _values_named(statement: str, constexprs: dict) -> str:
    """ " (BLOCK = 256, …)": the launch's constexpr values that a failed static_assert names."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", statement))
    named = [f"{k} = {v}" for k, v in constexprs.items() if isinstance(k, str) and k in words]
    return f" ({', '.join(named)})" if named else ""


_MLIR_DIAG = re.compile(
    r"^(?P<file>[^:\n]+\.py):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.*)$", re.MULTILINE
)


def _describe_failure(
    exc: Exception, stderr: str, kernel: Kernel, source_text: str, constexprs: dict | None = None
) -> CompileFailure:
    lines = source_text.splitlines()

    def source_line(n: int | None) -> str | None:
        return lines[n - 1].strip() if n and 0 < n <= len(lines) else None

    if is_compilation_error(exc):
        src, rel_line, message = compilation_error_site(exc)
        message += not_implemented_builtin(exc)
        if message.endswith(" is false for this launch"):
            message += _values_named(message, constexprs or {})
        line = None
        if rel_line is not None:
            line = _def_line_of_source(src, kernel, source_text) + rel_line - 1
        if (source_line(line) or "").startswith(("breakpoint(", "pdb.set_trace(")):
            message += (
                "; a debugger call runs only in Triton's interpreter (TRITON_INTERPRET=1), the GPU "
                "compiler cannot compile it: remove it to see what the kernel becomes"
            )
        return CompileFailure(message, kernel.file, line, source_line(line))
    diag = _MLIR_DIAG.search(stderr)
    if diag:
        line = int(diag.group("line"))
        return CompileFailure(
            diag.group("msg").strip(), diag.group("file"), line, source_line(line)
        )
    return CompileFailure(_one_line(exc), kernel.file, None, None)


def _def_line_of_source(src: str | None, kernel: Kernel, source_text: str) -> int:
    """Where the function whose source is `src` starts its `def` in the file (the kernel or a helper)."""
    if src:
        first = src.splitlines()[0].strip()
        for number, text in enumerate(source_text.splitlines(), start=1):
            if text.strip() == first:
                return number
    return kernel.line
