"""triton.language patched for Triton's interpreter: once per launch and module, not once per call.

Triton's interpreter patches triton.language for a launch (every builtin of tl, tl.core, tl.tensor and
tl.math wrapped with its semantic, found with inspect.getmembers), and again at every call of a
@triton.jit function inside the launch (InterpretedFunction.__call__), patching the modules that the
called function's module sees. Triton never undoes a call's patch, which breaks every later compile in the
process; irscope used to undo it as the call returned, so a kernel that calls tl.max or a helper of its
own in a loop patched and unpatched the language at every call: 41 times for one launch of
kernels/attention.py, a quarter of its run in the interpreter, on every reopen of the file.

Here a call's patch is kept until its launch ends, and a later call from a module patched already in this
launch patches nothing: the language is then as that call's own patch would leave it (the builtins it
would wrap are wrapped already; what it sets, it would set to stand-ins that do the same). The launch's
restore() undoes the kept patches, newest first, and then its own, so that after a launch triton.language
is exactly as it was. A @triton.jit function called from Python outside any launch is patched for the call
alone, as before. All of it runs under driver.interpreter_lock (capture_patches and run_one_program hold
it), so one launch at a time changes this module's state.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Callable, Iterator

import triton
import triton.language as tl
import triton.runtime.interpreter as _interpreter_module
from triton.runtime.interpreter import InterpretedFunction
from triton.runtime.jit import JITFunction

from irscope.engine.triton_compat import interp_loops, interp_patches

_TRITON_PATCH_LANG = _interpreter_module._patch_lang
interp_loops.install()  # loop counters as the compiled kernel has them
_interpreted: dict[Callable, InterpretedFunction] = {}

# While a launch runs: the patches of calls inside it, kept until it ends (None outside a launch), and
# what those patches and the launch's own covered, each key with the globals it names (kept alive by it).
_kept: list | None = None
_covered: dict[tuple, dict] = {}


def interpreter_for(jit: JITFunction) -> InterpretedFunction:
    fn = _interpreted.get(jit.fn)
    if fn is None:
        fn = InterpretedFunction(
            jit.fn,
            do_not_specialize=jit.do_not_specialize,
            do_not_specialize_on_alignment=jit.do_not_specialize_on_alignment,
        )
        _interpreted[jit.fn] = fn
    return fn


def _patch_lang(fn):
    """Triton's patch of triton.language for the interpreter, plus fixes. Triton before 3.7 turns an
    interpreter scalar (a 1-element array) into a Python int with int(), which NumPy 2.4+ refuses for
    arrays that are not 0-d, so every `range(0, tl.cdiv(...))` loop failed. Newer Tritons squeeze first;
    this does the same on every version. And interp_patches.py adds libdevice and fp32 float arguments.
    Undone with the rest by the returned scope's restore()."""
    scope = _TRITON_PATCH_LANG(fn)
    scope.set_attr(
        triton.language.tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0])
    )
    interp_patches.patch(fn, scope)
    return scope


def _coverage(fn) -> tuple:
    """What a patch for `fn` depends on: its module's globals (interp_patches rewrites names in them) and
    the triton.language modules among them, as Triton's _patch_lang picks them (rewriting a function adds
    names to its globals, so the same module may see more of them at a later call)."""
    names = fn.__globals__
    return (id(names),) + tuple(
        id(value) for value in names.values() if value is tl or value is tl.core
    )


def _overflow_checks_off():
    """Turn off the interpreter's integer-overflow check for a launch, when its result would be dropped;
    returns the options to put back. With `sanitize_overflow` on, every 32-bit add, subtract and multiply is
    redone in 64 bits and compared against the type's range, and the check ends in `device_assert`, which
    does nothing unless the interpreter's own `debug` option is set (Triton never sets it; a compiled kernel
    checks only when compiled with debug). The results are the same without it; the interpreter runs a
    third faster on integer-heavy kernels (tutorial 09's persistent matmul: 57 s to 38 s for `report`)."""
    builder = _interpreter_module.interpreter_builder
    before = getattr(builder, "options", None)
    if getattr(before, "sanitize_overflow", False) and not getattr(before, "debug", True):
        builder.options = dataclasses.replace(before, sanitize_overflow=False)
    return before


class _LaunchPatch:
    """The patch of one launch (what GridExecutor and run_one_program hold), under which calls keep theirs."""

    def __init__(self, fn) -> None:
        global _kept, _covered
        own = _patch_lang(fn)
        self._options = _overflow_checks_off()
        # a launch inside a launch (a grid function that launches) nests
        self._outer = (
            _kept,
            _covered,
        )
        self._own = own
        _kept, _covered = [], {_coverage(fn): fn.__globals__}

    def restore(self) -> None:
        global _kept, _covered
        kept = _kept or []
        _kept, _covered = self._outer
        while kept:
            kept.pop().restore()
        self._own.restore()
        if self._options is not None:
            _interpreter_module.interpreter_builder.options = self._options


def launch_patch(fn) -> _LaunchPatch:
    """Patch triton.language for a launch of `fn`; restore() undoes it and every call's patch within."""
    return _LaunchPatch(fn)


@contextlib.contextmanager
def grid_executor_patches_once() -> Iterator[None]:
    """Triton's GridExecutor (a whole launch in the interpreter) looks `_patch_lang` up in its module."""
    _interpreter_module._patch_lang = launch_patch
    try:
        yield
    finally:
        _interpreter_module._patch_lang = _TRITON_PATCH_LANG


def call_interpreted(self, *args, **kwargs):
    # A @triton.jit function (the user's helper, or one of triton.language's own, like tl.max) called from
    # a kernel running in the interpreter, or from Python. Triton's InterpretedFunction.__call__ would patch
    # triton.language and never undo it, which breaks every later compile in this process.
    if _kept is None:  # called from Python, outside any launch: patched for this call alone
        scope = _patch_lang(self.fn)
        try:
            return interpreter_for(self).rewrite()(*args, **kwargs)
        finally:
            scope.restore()
    key = _coverage(self.fn)
    if key not in _covered:
        _kept.append(_patch_lang(self.fn))
        _covered[key] = self.fn.__globals__
    return interpreter_for(self).rewrite()(*args, **kwargs)


def restore_interpreter_module() -> None:
    """Triton's own `_patch_lang` back in its module (a process forked in the middle of a capture)."""
    _interpreter_module._patch_lang = _TRITON_PATCH_LANG
