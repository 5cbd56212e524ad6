"""Specialization (Triton's own binder) and compilation for a target; what a compile error says."""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from typing import Any, Iterator

import triton
from triton.compiler.errors import CompilationError
from triton.runtime.jit import JITFunction

from irscope.base.target import Target
from irscope.engine.triton_compat import caches
from irscope.engine.triton_compat.debugger_calls import debugger_calls_left_out
from irscope.engine.triton_compat.driver import (
    CpuDriver,
    active_driver,
    gpu_target_of,
    interpreter_lock,
)
from irscope.engine.triton_compat.gluon import ast_source_class
from irscope.engine.triton_compat.install_key import remember_triton_key
from irscope.engine.triton_compat.jit import kernel_param_names
from irscope.engine.triton_compat.kernel_prints import kernel_prints
from irscope.engine.triton_compat.originals import JIT_RUN


@dataclass
class Specialized:
    """What JITFunction.run hands to its compiler for one launch on one target."""

    signature: dict[str, str]
    constexprs: dict
    attrs: dict
    options: Any  # the backend's options dataclass

    def cache_key(self) -> str:
        return repr(
            (
                sorted(self.signature.items()),
                sorted(self.constexprs.items(), key=repr),
                sorted(self.attrs.items(), key=repr),
                sorted(self.options.__dict__.items(), key=repr),
            )
        )


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

    with active_driver(CpuDriver(target)), _jit_compile_redirected(jit, take):
        JIT_RUN(jit, *args, grid=(1,), warmup=True, **dict(kwargs))
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
        # never while a recording has triton.language patched
        with (
            interpreter_lock,
            kernel_prints(),
        ):
            return triton_compile(jit, spec, target, source_class)

    return caches.compile_with_cache(
        compile_source, jit.fn.__code__.co_filename, ast_source_class(jit)
    )


def triton_compile(jit: JITFunction, spec: Specialized, target: Target, source_class=None):
    """triton.compile of the kernel's source (the class the JIT would use, ASTSource or GluonASTSource, unless
    another is given). Every compile irscope makes comes here (the report's, a what-if's, a diff's, a
    compile-ahead child's, the pass dumps'): a debugger call in the kernel or a helper is left out of it
    (debugger_calls.py)."""
    src = (source_class or ast_source_class(jit))(jit, spec.signature, spec.constexprs, spec.attrs)
    with debugger_calls_left_out():
        return triton.compile(src, target=gpu_target_of(target), options=spec.options.__dict__)


def prepare_compiler(target: Target) -> None:
    """What the first compile for `target` does before it looks at any kernel: import Triton's compiler and
    the backend, read the toolchain's version (ptxas --version, memoized by Triton), Triton's install hash.
    Done before a fork (engine/compile/ahead.py), so that the child does not repeat it; never touches a kernel."""
    from triton.compiler import compiler as compiler_module

    remember_triton_key()
    compiler_module.make_backend(gpu_target_of(target)).hash()


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
    while isinstance(inner.__cause__, CompilationError) or isinstance(
        inner.__context__, CompilationError
    ):
        inner = (
            inner.__cause__ if isinstance(inner.__cause__, CompilationError) else inner.__context__
        )
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
        return (
            f"{code} is false for this launch"
            if code
            else "a tl.static_assert is false for this launch"
        )
    return f"{type(inner).__name__} at {code}" if code else type(inner).__name__
