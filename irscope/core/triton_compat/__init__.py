"""Every use of Triton's internals lives here.

irscope compiles a kernel *exactly* as Triton's JIT would, which means borrowing pieces of Triton
that are not public API: the driver registry, ``JITFunction.run``'s argument binder, the autotuner's
config list, the interpreter. When a new Triton release moves one of them, this module is the only
one to change. Supported: Triton 3.6 through the newest (3.9 when this was written).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

# irscope runs the user's file with real JIT functions (we need them to compile), and runs their
# launches through the interpreter by hand when there is no GPU. Triton reads this at decoration time.
os.environ["TRITON_INTERPRET"] = "0"

import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler.errors import CompilationError  # noqa: E402
from triton.runtime.autotuner import Autotuner, Heuristics  # noqa: E402
from triton.runtime.driver import driver as _driver_registry  # noqa: E402
import triton.runtime.interpreter as _interpreter_module  # noqa: E402
from triton.runtime.interpreter import InterpretedFunction  # noqa: E402
from triton.runtime.jit import JITFunction  # noqa: E402

from . import caches, interp_patches  # noqa: E402
from .autotune import as_launched, config_index, configs_tried  # noqa: E402
from .caches import (check_caches, irscope_cache_dir, new_cache_warning, remember_triton_key,  # noqa: E402,F401
                     triton_cache_dir, triton_install_key)

TRITON_VERSION = triton.__version__
# The JIT's own launch path and the methods a capture patches, kept before any patch.
_JIT_RUN = JITFunction.run
_JIT_CALL = JITFunction.__call__
_AUTOTUNER_RUN = Autotuner.run
_AUTOTUNER_BENCH = Autotuner._bench
# The virtual GPU (core/virtual_gpu.py) makes torch.cuda.is_available() true while a file runs.
_TORCH_HAS_GPU = torch.cuda.is_available

__all__ = [
    "TRITON_VERSION", "CompilationError", "JITFunction", "Target", "capture_patches", "compile_specialized",
    "find_tool", "local_gpu_target", "specialize", "triton_cache_dir", "unwrap_kernel", "install_cpu_driver",
    "check_caches", "irscope_cache_dir",
]


# --------------------------------------------------------------------------------------------
# Targets


from ..target import Target  # noqa: E402,F401 - defined apart so that front ends can hold one


def target_from_gpu_target(gpu_target: GPUTarget) -> Target:
    if gpu_target.backend == "cuda":
        return Target(f"sm_{gpu_target.arch}")
    return Target(str(gpu_target.arch))


def local_gpu_target() -> Target | None:
    """The target of the GPU in this machine, or None when there is none (or it is hidden)."""
    try:
        if not _TORCH_HAS_GPU():
            return None
        return target_from_gpu_target(_driver_registry.default.get_current_target())
    except Exception:  # no driver, no device, a broken install: all mean "no local GPU"
        return None


# --------------------------------------------------------------------------------------------
# A driver for machines with no GPU


class _CpuDriver:
    """Stands in for Triton's GPU driver where there is none.

    Tutorial-style files ask the driver for the torch device (`get_active_torch_device`); Triton's
    own JIT asks it for the current target. Both get a CPU answer, so the file runs unchanged on CPU
    tensors and the compile targets whatever irscope was told to.
    """

    def __init__(self, target: Target):
        self.target = target

    def get_active_torch_device(self):
        return torch.device("cpu")

    def get_current_target(self) -> GPUTarget:
        return self.target.gpu_target()

    def get_current_device(self):
        # JITFunction caches its binder per device: one "device" per target keeps them apart.
        return f"irscope:{self.target.name}"

    def get_current_stream(self, device=None):
        return 0

    def set_current_device(self, device):
        pass

    def get_device_interface(self):
        return torch.cpu

    def is_active(self) -> bool:
        return True

    def get_benchmarker(self):
        raise RuntimeError("irscope: no GPU here, so nothing can be benchmarked")

    class utils:
        """A CompiledKernel "loaded" on the virtual GPU (triton_compat/virtual_device.py) unloads itself when it
        is collected, which may be after the file's run, when this driver is the active one."""

        @staticmethod
        def unload_module(module) -> None:
            pass


_driver_lock = threading.RLock()

# Triton's interpreter keeps its state in module globals (the builder's grid index, the patched
# triton.language), so only one program runs at a time in this process, and no compile runs meanwhile.
interpreter_lock = threading.RLock()


@contextlib.contextmanager
def _active_driver(driver) -> Iterator[None]:
    with _driver_lock:
        previous = _driver_registry._active
        _driver_registry.set_active(driver)
        try:
            yield
        finally:
            _driver_registry._active = previous


def install_cpu_driver(target: Target) -> None:
    """Make `triton.runtime.driver.active` answer on a machine with no GPU."""
    _driver_registry.set_active(_CpuDriver(target))


# --------------------------------------------------------------------------------------------
# Kernels in a user's module


@dataclass
class UnwrappedKernel:
    jit: JITFunction
    autotune_configs: list[Any] | None  # triton.Config objects, when @triton.autotune wraps it
    heuristics: list[str]               # names of values @triton.heuristics fills in


def unwrap_kernel(obj: Any) -> UnwrappedKernel | None:
    """Peel @triton.autotune / @triton.heuristics off a module attribute; None if it is no kernel."""
    configs = None
    heuristics: list[str] = []
    seen = 0
    while seen < 16:
        seen += 1
        if isinstance(obj, JITFunction):
            return UnwrappedKernel(obj, configs, heuristics)
        if isinstance(obj, InterpretedFunction):
            # The file forced TRITON_INTERPRET=1 itself: rebuild the JIT function it would have been.
            return UnwrappedKernel(JITFunction(obj.fn, **_jit_kwargs(obj.kwargs)), configs, heuristics)
        if isinstance(obj, Autotuner):
            configs = list(obj.configs)
            obj = obj.fn
        elif isinstance(obj, Heuristics):
            heuristics.extend(obj.values.keys())
            obj = obj.fn
        else:
            return None
    return None


def _jit_kwargs(kwargs: dict) -> dict:
    allowed = {"version", "do_not_specialize", "do_not_specialize_on_alignment", "debug", "noinline", "repr",
               "launch_metadata"}
    return {k: v for k, v in kwargs.items() if k in allowed}






def config_kwargs(config) -> dict:
    """A triton.Config as the keyword arguments the autotuner would launch with."""
    return dict(config.all_kwargs())




# --------------------------------------------------------------------------------------------
# Capturing launches


@dataclass
class RawLaunch:
    jit: JITFunction
    args: tuple
    kwargs: dict
    grid: Any
    autotune_index: int | None
    autotune_count: int | None
    autotune_configs: list[Any] | None = None  # the autotuner's triton.Config list, when one launched it
    interp_error: str | None = None  # why Triton's interpreter could not run this launch (it is kept anyway)
    autotune_first: bool = False  # the first config the autotuner would try for this launch (what runs here)


class _CaptureState(threading.local):
    autotune: tuple[int, int] | None = None  # (config index, number of configs)
    first: bool = False  # the config being recorded is the first the autotuner would try
    configs: list[Any] | None = None
    execute: bool = True
    record: bool = True
    recorded: list[RawLaunch] | None = None  # an autotuned launch's per-config records, for a failure to land on


_state = _CaptureState()
_interpreted: dict[Callable, InterpretedFunction] = {}


def _interpreter_for(jit: JITFunction) -> InterpretedFunction:
    fn = _interpreted.get(jit.fn)
    if fn is None:
        fn = InterpretedFunction(jit.fn, do_not_specialize=jit.do_not_specialize,
                                 do_not_specialize_on_alignment=jit.do_not_specialize_on_alignment)
        _interpreted[jit.fn] = fn
    return fn


_TRITON_PATCH_LANG = _interpreter_module._patch_lang


def _patch_lang(fn):
    """Triton's patch of triton.language for the interpreter, plus fixes. Triton before 3.7 turns an
    interpreter scalar (a 1-element array) into a Python int with int(), which NumPy 2.4+ refuses for
    arrays that are not 0-d, so every `range(0, tl.cdiv(...))` loop failed. Newer Tritons squeeze first;
    this does the same on every version. And interp_patches.py adds libdevice and fp32 float arguments.
    Undone with the rest by the returned scope's restore()."""
    scope = _TRITON_PATCH_LANG(fn)
    scope.set_attr(triton.language.tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))
    interp_patches.patch(fn, scope)
    return scope


@contextlib.contextmanager
def _grid_executor_uses_fixed_patch() -> Iterator[None]:
    """Triton's GridExecutor (a whole launch in the interpreter) looks `_patch_lang` up in its module."""
    _interpreter_module._patch_lang = _patch_lang
    try:
        yield
    finally:
        _interpreter_module._patch_lang = _TRITON_PATCH_LANG


def _call_interpreted(self, *args, **kwargs):
    # A @triton.jit function (the user's helper, or one of triton.language's own, like tl.max)
    # called from a kernel running in the interpreter. Triton's InterpretedFunction.__call__ would
    # patch triton.language for the interpreter and never undo it, which breaks every later compile
    # in this process; here the patch is undone when the call returns.
    scope = _patch_lang(self.fn)
    try:
        return _interpreter_for(self).rewrite()(*args, **kwargs)
    finally:
        scope.restore()


@contextlib.contextmanager
def capture_patches(record: Callable[[RawLaunch], None], use_interpreter: bool,
                    returned: Callable[[], None] | None = None) -> Iterator[None]:
    """Record every kernel launch while the user's file runs (see _capture_patches). `returned` hears
    each time a launch the file made has run and returns to it (compiled and run on a GPU, or run in the
    interpreter), raised or not.

    One patcher of JITFunction and triton.language at a time: a recording in another thread (the
    stepper) patches and restores the same attributes."""
    with interpreter_lock, _capture_patches(record, use_interpreter, returned or (lambda: None)):
        yield


@contextlib.contextmanager
def _capture_patches(record: Callable[[RawLaunch], None], use_interpreter: bool,
                     returned: Callable[[], None]) -> Iterator[None]:
    """Record every kernel launch while the user's file runs.

    With `use_interpreter`, launches (and calls of @triton.jit helpers inside them) run in Triton's
    interpreter on CPU tensors; otherwise they run for real on the GPU. An autotuned launch is
    recorded once per config the autotuner would try (after its pruning: autotune.py) and executed with
    the first of them, so no benchmarking is needed.
    """
    original_run = JITFunction.run
    original_call = JITFunction.__call__
    original_autotune_run = Autotuner.run

    def run(self, *args, grid, warmup, **kwargs):
        index, count = _state.autotune or (None, None)
        raw = None
        if _state.record:
            raw = RawLaunch(self, tuple(map(as_launched, args)), {k: as_launched(v) for k, v in kwargs.items()},
                            grid, index, count, _state.configs, autotune_first=_state.first and index is not None)
            if _state.recorded is not None:
                _state.recorded.append(raw)
            record(raw)
        if not _state.execute:
            return None
        try:
            return execute(self, args, kwargs, grid, warmup, raw)
        finally:
            returned()

    def execute(self, args, kwargs, grid, warmup, raw):
        if not use_interpreter:
            return original_run(self, *args, grid=grid, warmup=warmup, **kwargs)
        if warmup:
            return compile_for_active_target(self, args, kwargs)
        try:
            with _grid_executor_uses_fixed_patch():
                _interpreter_for(self).run(*args, grid=grid, warmup=warmup, **kwargs)
            # A real launch returns the compiled kernel, and files print its `.asm["ptx"]`; compiling it
            # on every launch would slow the run down, so it is compiled when first looked at.
            return CompiledWhenUsed(lambda: compile_for_active_target(self, args, kwargs))
        except Exception as exc:  # noqa: BLE001 - the interpreter's gap or the kernel's bug: the launch is kept
            # The launch was recorded before it ran, so it is compiled and shown all the same; the file's
            # run goes on (its outputs are left unwritten), and the failure is said where it matters.
            failed = raw or (_state.recorded[0] if _state.recorded else None)
            if failed is None:
                raise
            failed.interp_error = interpreter_failure(exc, self)
            return None

    call = _call_interpreted
    def autotune_run(self, *args, **kwargs):
        grid = kwargs.pop("grid")
        warmup = kwargs.pop("warmup", False)
        outer = (_state.autotune, _state.execute, _state.record, _state.configs, _state.recorded, _state.first)
        count = len(self.configs)
        tried = configs_tried(self, args, {**kwargs, "grid": grid, "warmup": warmup})  # what a GPU would try
        try:
            # First record every config the autotuner would try, without running it, so that a failure
            # while running one cannot lose the others; then run the first of them, unrecorded.
            _state.configs, _state.recorded = list(self.configs), []
            for index, config in enumerate(self.configs):
                if index not in tried:
                    continue
                _state.autotune, _state.execute, _state.record = (index, count), False, outer[2]
                _state.first = index == tried[0]
                if config.pre_hook is not None and outer[2]:  # as the autotuner does before benchmarking it
                    config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **config_kwargs(config)})
                self.fn.run(*args, grid=grid, warmup=warmup, **kwargs, **config_kwargs(config))
            if not outer[1] or not tried:
                return None
            config = self.configs[tried[0]]
            self.best_config = config  # what the autotuner leaves behind for callers that read it
            merged = {**kwargs, **config_kwargs(config)}
            _state.autotune, _state.execute, _state.record = (tried[0], count), True, False
            if config.pre_hook is not None:
                config.pre_hook({**dict(zip(self.arg_names, args)), **merged})
            return self.fn.run(*args, grid=grid, warmup=warmup, **merged)
        finally:
            _state.autotune, _state.execute, _state.record, _state.configs, _state.recorded, _state.first = outer

    original_bench = Autotuner._bench

    def bench(self, *args, config, **meta):
        # An autotuner with a run of its own benchmarks a config (autotune.py): recorded as that config
        outer = (_state.autotune, _state.execute, _state.configs, _state.recorded, _state.first)
        index = config_index(self.configs, config)
        try:
            _state.configs, _state.recorded, _state.first = list(self.configs), None, False
            _state.autotune = (index, len(self.configs)) if index is not None else None
            if not use_interpreter:
                return original_bench(self, *args, config=config, **meta)  # a real GPU times it
            _state.execute = False
            current = dict(meta, **config.all_kwargs())
            if config.pre_hook is not None:
                config.pre_hook({**(self.nargs or {}), **current})
            self.fn.run(*args, **current)
            return [math.nan] * 3  # _bench's quantiles (0.5, 0.2, 0.8): nothing was timed
        finally:
            _state.autotune, _state.execute, _state.configs, _state.recorded, _state.first = outer

    JITFunction.run = run
    if use_interpreter:
        JITFunction.__call__ = call
    Autotuner.run = autotune_run
    Autotuner._bench = bench
    interpret_knob = _force_jit_decorator()
    try:
        yield
    finally:
        JITFunction.run = original_run
        JITFunction.__call__ = original_call
        Autotuner.run = original_autotune_run
        Autotuner._bench = original_bench
        interpret_knob()


def _force_jit_decorator() -> Callable[[], None]:
    """Keep `@triton.jit` making JITFunctions while the user's file runs, even when the file sets
    TRITON_INTERPRET=1 itself: an InterpretedFunction cannot be compiled, and its launches would pass the
    capture by. Without a GPU the launches run in the interpreter anyway. Returns the undo."""
    knobs = getattr(triton, "knobs", None)
    runtime = getattr(knobs, "runtime", None)
    if runtime is None or "interpret" not in vars(type(runtime)):
        return lambda: None
    runtime.interpret = False

    def undo() -> None:
        try:
            del runtime.interpret
        except AttributeError:
            pass
    return undo


def interpreter_failure(exc: BaseException, jit: JITFunction) -> str:
    """One line: what stopped the interpreter, and the kernel line where it stopped when known."""
    import traceback

    path = jit.fn.__code__.co_filename
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path:
            line = frame.lineno
    while exc.__cause__ is not None:  # the interpreter wraps the real error: InterpreterError(repr(err))
        exc = exc.__cause__
        line = next((f.lineno for f in reversed(traceback.extract_tb(exc.__traceback__)) if f.filename == path), line)
    text = str(exc).strip().splitlines()
    detail = f"{type(exc).__name__}: {text[-1]}" if text else type(exc).__name__
    return f"{detail} (at line {line})" if line else detail


class CompiledWhenUsed:
    """What a launch returns on the virtual GPU: the CompiledKernel a GPU launch would, compiled the
    first time an attribute of it is read."""

    def __init__(self, compile_it: Callable[[], Any]):
        self._compile_it = compile_it
        self._kernel = None

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if self._kernel is None:
            self._kernel = self._compile_it()
        return getattr(self._kernel, name)


def compile_for_active_target(jit: JITFunction, args: tuple, kwargs: dict):
    """`JITFunction.warmup` with no GPU: compile for the target the active driver names, exactly as the JIT
    would, and return Triton's CompiledKernel (the virtual GPU's driver "loads" it: triton_compat/virtual_device.py)."""
    target = target_from_gpu_target(_driver_registry.active.get_current_target())
    return compile_specialized(jit, specialize(jit, args, kwargs, target), target)


def restore_unpatched_triton() -> None:
    """Put back what a capture patched, for a process forked in the middle of one (core/ahead.py), whose
    capture will never get to undo its patches."""
    JITFunction.run = _JIT_RUN
    JITFunction.__call__ = _JIT_CALL
    Autotuner.run = _AUTOTUNER_RUN
    Autotuner._bench = _AUTOTUNER_BENCH
    _interpreter_module._patch_lang = _TRITON_PATCH_LANG


def bind_arguments(jit: JITFunction, args: tuple, kwargs: dict) -> dict:
    """The kernel's parameters by name, defaults applied (what a grid lambda receives as `meta`)."""
    params = set(jit.signature.parameters)
    bound = jit.signature.bind(*args, **{k: v for k, v in kwargs.items() if k in params})
    bound.apply_defaults()
    return {**kwargs, **bound.arguments}


def kernel_param_names(jit: JITFunction) -> list[str]:
    return [p.name for p in jit.params]


def constexpr_param_names(jit: JITFunction) -> list[str]:
    return [p.name for p in jit.params if p.is_constexpr]


def param_defaults(jit: JITFunction) -> dict[str, Any]:
    return {p.name: p.default for p in jit.params if p.has_default}


# --------------------------------------------------------------------------------------------
# Specialization and compilation


@dataclass
class Specialized:
    """What JITFunction.run hands to its compiler for one launch on one target."""

    signature: dict[str, str]
    constexprs: dict
    attrs: dict
    options: Any  # the backend's options dataclass

    def cache_key(self) -> str:
        return repr((sorted(self.signature.items()), sorted(self.constexprs.items(), key=repr),
                     sorted(self.attrs.items(), key=repr), sorted(self.options.__dict__.items(), key=repr)))


class _SpecializationCaptured(Exception):
    pass


def specialize(jit: JITFunction, args: tuple, kwargs: dict, target: Target) -> Specialized:
    """Run Triton's own JITFunction.run up to the point where it would compile, and take what it has.

    This is the JIT's code path itself (binder, option parsing, `_pack_args`), so the signature,
    `tt.divisibility` attributes, constants and options are the ones a real launch would produce.
    """
    captured: list[Specialized] = []

    def take(key, signature, device, constexprs, options, attrs, warmup):
        captured.append(Specialized(signature, constexprs, attrs, options))
        return None  # run() returns early when the compiler gives it nothing

    with _active_driver(_CpuDriver(target)), _jit_compile_redirected(jit, take):
        _JIT_RUN(jit, *args, grid=(1, ), warmup=True, **dict(kwargs))
    if not captured:  # pragma: no cover - only if Triton's run() changes shape
        raise RuntimeError("irscope could not read the specialization from Triton's JIT")
    return captured[0]


@contextlib.contextmanager
def _jit_compile_redirected(jit: JITFunction, take) -> Iterator[None]:
    jit._do_compile = take
    try:
        yield
    finally:
        del jit._do_compile


def compile_specialized(jit: JITFunction, spec: Specialized, target: Target):
    """triton.compile, called the way JITFunction._do_compile calls it. Uses Triton's cache, keyed by the
    file's path too where a copy of the file elsewhere left its compile there (caches.py)."""
    def compile_source(source_class):
        src = source_class(jit, spec.signature, spec.constexprs, spec.attrs)
        with interpreter_lock:  # never while a recording has triton.language patched for the interpreter
            return triton.compile(src, target=target.gpu_target(), options=spec.options.__dict__)

    return caches.compile_with_cache(compile_source, jit.fn.__code__.co_filename)


def prepare_compiler(target: Target) -> None:
    """What the first compile for `target` does before it looks at any kernel: import Triton's compiler and
    the backend, read the toolchain's version (ptxas --version, memoized by Triton), Triton's install hash.
    Done before a fork (core/ahead.py), so that the child does not repeat it; never touches a kernel."""
    from triton.compiler import compiler as compiler_module

    remember_triton_key()
    compiler_module.make_backend(target.gpu_target()).hash()


def compiled_asm(kernel) -> dict[str, Any]:
    return dict(kernel.asm)


def compiled_metadata(kernel) -> dict[str, Any]:
    return dict(kernel.metadata._asdict())


def attrs_by_param(jit: JITFunction, attrs: dict) -> dict[str, list]:
    """Specialization attributes keyed by parameter name (tuple paths flattened as name[i])."""
    names = kernel_param_names(jit)
    out: dict[str, list] = {}
    for path, values in attrs.items():
        if not values:
            continue
        label = names[path[0]] + "".join(f"[{i}]" for i in path[1:])
        out[label] = [list(v) for v in values]
    return out


def constexprs_by_param(jit: JITFunction, constexprs: dict) -> dict[str, Any]:
    names = kernel_param_names(jit)
    out = {}
    for path, value in constexprs.items():
        label = names[path[0]] + "".join(f"[{i}]" for i in path[1:])
        out[label] = value
    return out


def find_tool(name: str) -> str | None:
    """ptxas, cuobjdump and nvdisasm come with Triton's NVIDIA backend."""
    bundled = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)
    if os.access(bundled, os.X_OK):
        return bundled
    return shutil.which(name)


def is_compilation_error(exc: BaseException) -> bool:
    return isinstance(exc, CompilationError)


def compilation_error_site(exc: CompilationError) -> tuple[str | None, int | None, str]:
    """(function source, line within it, message) of the innermost Triton frontend error."""
    inner = exc
    while isinstance(inner.__cause__, CompilationError) or isinstance(inner.__context__, CompilationError):
        inner = inner.__cause__ if isinstance(inner.__cause__, CompilationError) else inner.__context__
    line = getattr(getattr(inner, "node", None), "lineno", None)
    message = (getattr(inner, "error_message", None) or "").strip()
    if not message:
        message = _statement_that_failed(inner)
    return getattr(inner, "src", None), line, message


def _statement_that_failed(inner: CompilationError) -> str:
    """A message for a frontend error that carries none (`tl.static_assert(cond)` with no message; its
    text is then only the code excerpt ending in a caret line): the statement itself, which is what the
    user needs to see."""
    excerpt = [ln for ln in str(inner).splitlines() if ln.strip() and set(ln.strip()) != {"^"}]
    code = excerpt[-1].strip() if len(excerpt) > 1 else ""
    if type(inner).__name__ == "CompileTimeAssertionFailure":
        return f"{code} is false for this launch" if code else "a tl.static_assert is false for this launch"
    return f"{type(inner).__name__} at {code}" if code else type(inner).__name__


# --------------------------------------------------------------------------------------------
# Running one program of a launch in the interpreter (the stepper and the coalescing analysis)



@dataclass
class MemoryHook:
    """What one load, store or atomic of the interpreter is about to touch.

    `addresses` are raw byte addresses (uint64, the access's shape); `mask` is None when every lane is
    active. Returned before the access happens, so a hook may raise to stop an out-of-bounds access.
    """

    kind: str  # "load" | "store" | "atomic"
    addresses: Any
    mask: Any
    elem_bytes: int
    dtype: str


def interpreter_value(value) -> tuple[Any, str, bool, bool] | None:
    """An interpreter tensor as (numpy data, element dtype name, is_pointer, is_block); None otherwise.

    Pointers are raw uint64 addresses; bf16 and fp8 arrive as their integer bit patterns, as the
    interpreter stores them.
    """
    handle = getattr(value, "handle", None)
    data = getattr(handle, "data", None)
    if data is None or not hasattr(data, "dtype") or not hasattr(value, "type"):
        return None
    ty = value.type
    is_block = bool(getattr(ty, "is_block", lambda: False)())
    scalar = ty.scalar if hasattr(ty, "scalar") else ty
    is_pointer = bool(getattr(scalar, "is_ptr", lambda: False)())
    name = str(scalar.element_ty) if is_pointer else str(scalar)
    return data, name, is_pointer, is_block


def pointer_elem_bytes(dtype_name: str) -> int:
    bits = getattr(triton.language, dtype_name.replace("fp", "float").replace("bf16", "bfloat16")
                   .replace("i1", "int1"), None)
    width = getattr(bits, "primitive_bitwidth", 8)
    return max(1, width // 8)


def _elem_bytes_of(handle) -> tuple[int, str]:
    ty = handle.get_element_ty()
    return max(1, ty.primitive_bitwidth // 8), str(ty)


@contextlib.contextmanager
def _memory_hooks(builder, on_access: Callable[[MemoryHook], None]) -> Iterator[None]:
    """Report every load/store/atomic the interpreter's builder makes (instance attributes shadow
    the class's methods, so `create_load` → `self.create_masked_load` goes through here too)."""
    import numpy as np
    cls = type(builder)

    def lanes(mask_handle):
        if mask_handle is None:
            return None
        mask = np.asarray(mask_handle.data, dtype=bool)
        return None if mask.all() else mask

    def masked_load(ptrs, mask, other, *args, **kwargs):
        size, name = _elem_bytes_of(ptrs)
        on_access(MemoryHook("load", ptrs.data, lanes(mask), size, name))
        return cls.create_masked_load(builder, ptrs, mask, other, *args, **kwargs)

    def masked_store(ptrs, value, mask, *args, **kwargs):
        size, name = _elem_bytes_of(ptrs)
        on_access(MemoryHook("store", ptrs.data, lanes(mask), size, name))
        return cls.create_masked_store(builder, ptrs, value, mask, *args, **kwargs)

    def atomic_rmw(op, ptr, val, mask, *args, **kwargs):
        size, name = _elem_bytes_of(ptr)
        on_access(MemoryHook("atomic", ptr.data, lanes(mask), size, name))
        return cls.create_atomic_rmw(builder, op, ptr, val, mask, *args, **kwargs)

    def atomic_cas(ptr, cmp, val, *args, **kwargs):
        size, name = _elem_bytes_of(ptr)
        on_access(MemoryHook("atomic", ptr.data, None, size, name))
        return cls.create_atomic_cas(builder, ptr, cmp, val, *args, **kwargs)

    patches = {"create_masked_load": masked_load, "create_masked_store": masked_store,
               "create_atomic_rmw": atomic_rmw, "create_atomic_cas": atomic_cas}
    for name, fn in patches.items():
        setattr(builder, name, fn)
    try:
        yield
    finally:
        for name in patches:
            builder.__dict__.pop(name, None)


def jit_code_ids(jit: JITFunction) -> set[tuple[str, str]]:
    """(file, function name) of the kernel and of every @triton.jit function its module can see:
    the interpreter re-creates each function from source, so code objects are matched by these."""
    ids = {(jit.fn.__code__.co_filename, jit.fn.__name__)}
    for value in list(jit.fn.__globals__.values()):
        unwrapped = unwrap_kernel(value) if not isinstance(value, type) else None
        if unwrapped is not None:
            fn = unwrapped.jit.fn
            ids.add((fn.__code__.co_filename, fn.__name__))
    return ids


def run_one_program(jit: JITFunction, arguments: dict[str, Any], grid: tuple[int, int, int],
                    program_id: tuple[int, int, int], on_access: Callable[[MemoryHook], None] | None = None,
                    trace: Callable | None = None) -> None:
    """Run one program of a launch in Triton's interpreter, on the tensors given (they are written to).

    `arguments` maps every kernel parameter to its value (tensors on the CPU; constexprs as plain
    values). What Triton's GridExecutor does for the whole grid, done for one grid index: patch
    triton.language for the interpreter (and undo it after), turn tensors into pointers, set the grid.
    `trace` is installed with sys.settrace for the run (this thread only). Exceptions of the kernel
    propagate unchanged.
    """
    import sys

    from triton.runtime import interpreter as interp

    constexprs = set(constexpr_param_names(jit))
    with interpreter_lock:
        fn = _interpreter_for(jit).rewrite()
        scope = _patch_lang(jit.fn)
        original_call = JITFunction.__call__
        JITFunction.__call__ = _call_interpreted
        try:
            args = {name: value if name in constexprs else interp._implicit_cvt(value)
                    for name, value in arguments.items()}
            builder = interp.interpreter_builder
            builder.set_grid_dim(*grid)
            builder.set_grid_idx(*program_id)
            hooks = _memory_hooks(builder, on_access) if on_access else contextlib.nullcontext()
            with hooks:
                previous = sys.gettrace()
                if trace is not None:
                    sys.settrace(trace)
                try:
                    fn(**args)
                finally:
                    if trace is not None:
                        sys.settrace(previous)
        finally:
            JITFunction.__call__ = original_call
            scope.restore()


def reinterpreted_tensor(value) -> tuple[Any, Callable[[Any], Any]] | None:
    """A `triton.reinterpret(t, dtype)` argument as (t, a function that wraps a copy of t the same way)."""
    from triton.runtime.jit import TensorWrapper
    if isinstance(value, TensorWrapper):
        return value.base, lambda copy: TensorWrapper(copy, value.dtype)
    return None


def kernel_parameters(jit: JITFunction, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Every kernel parameter bound to the launch's value, defaults applied, launch options dropped."""
    params = [p.name for p in jit.params]
    bound = jit.signature.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in params})
    bound.apply_defaults()
    return dict(bound.arguments)


# --------------------------------------------------------------------------------------------
# Linear layouts of a TTGIR module's loads and stores (the coalescing analysis)


def ttgir_access_linear_layouts(ttgir: str) -> list[dict | None] | None:
    """Triton's own linear layout of the pointer operand of every load/store-like op, in text order.

    Each item: {"op", "shape", "reg", "lane", "warp"} (bases as lists), or None for a scalar pointer or a
    layout Triton cannot turn into a distributed linear layout. Returns None when this Triton does not
    expose the machinery to Python (gluon's `to_linear_layout` appeared in 3.5/3.6) or the module does
    not parse. Parsing a module costs about 0.2 s, so callers use this only for layouts they cannot build.
    """
    import gc
    import tempfile

    from ..analysis.layouts import ACCESS_OP_NAMES

    try:
        from triton._C.libtriton import gluon_ir, ir
        import triton._C.libtriton as libtriton
    except ImportError:
        return None
    if not hasattr(gluon_ir, "GluonOpBuilder") or not hasattr(gluon_ir.GluonOpBuilder, "to_linear_layout"):
        return None
    _silence_nanobind_leak_report()
    out: list[dict | None] = []
    try:
        context = ir.context()
        ir.load_dialects(context)
        for backend in ("nvidia", "amd"):
            loader = getattr(getattr(libtriton, backend, None), "load_dialects", None)
            if loader is not None:
                loader(context)
        from ..compile import _stderr_captured  # MLIR prints parse diagnostics on fd 2: keep them off the terminal
        with tempfile.NamedTemporaryFile("w", suffix=".ttgir") as f, _stderr_captured():
            f.write(ttgir)
            f.flush()
            module = ir.parse_mlir_module(f.name, context)
        builder = gluon_ir.GluonOpBuilder(context)

        def visit(op):
            if op.get_name() not in ACCESS_OP_NAMES:
                return
            try:
                value = op.get_operand(0)
                shape = _value_shape(value)
                layout = builder.get_gluon_layout_from_tensor(value)
                attr = layout._to_ir(builder)
                linear = builder.to_linear_layout(attr, shape)
                out.append({"op": op.get_name(), "shape": shape, "reg": [list(b) for b in linear.reg_bases],
                            "lane": [list(b) for b in linear.lane_bases], "warp": [list(b) for b in linear.warp_bases]})
            except Exception:  # a scalar pointer, or a layout with no distributed linear form
                out.append(None)

        module.walk(visit)
        del module, builder, context
        gc.collect()
    except Exception:
        return None
    return out


def _value_shape(value) -> list[int]:
    """A tensor value's shape: `value.get_shape()` where the bindings have it (3.7+); Triton 3.6's values
    only print their type, `tensor<16x128x!tt.ptr<f16>, #layout>`, so the shape is read from that."""
    if hasattr(value, "get_shape"):
        return list(value.get_shape())
    import re
    m = re.match(r"\s*tensor<((?:\d+x)+)", str(value.get_type()))
    if m is None:
        raise ValueError("not a ranked tensor")
    return [int(d) for d in m.group(1).rstrip("x").split("x")]


_leak_report_silenced = False


def _silence_nanobind_leak_report() -> None:
    """Triton's gluon bindings keep a few MLIR attributes alive until the interpreter exits, and nanobind
    then prints a "leaked instances" report on stderr. It is Triton's, harmless, and would end every
    irscope run that used them: after the program's own exit handlers, stderr goes to /dev/null."""
    global _leak_report_silenced
    if _leak_report_silenced:
        return
    _leak_report_silenced = True
    import atexit

    def silence() -> None:
        try:
            sys_stderr_fd = 2
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys_stderr_fd)
        except OSError:
            pass
    atexit.register(silence)
