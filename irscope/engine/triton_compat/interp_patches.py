"""What Triton's interpreter lacks and real kernels use: libdevice, and float arguments as fp32 scalars.

- libdevice. A compiled kernel gets `tl.extra.libdevice.erf` from the backend's module (CUDA's or HIP's);
  in the interpreter the stub module's functions return None, and the backends' functions are builtins
  that nobody gives the interpreter's semantic (and whose `extern_elementwise` the interpreter refuses).
  Here the backends' functions get the interpreter's semantic, the stub's functions (and the same
  functions imported by name: `from triton.language.extra.libdevice import tanh`) become the backend's,
  and the interpreter's builder computes each libdevice symbol with NumPy (libdevice_numpy.py). Triton's
  own dispatch still picks the symbol from the argument types, so a call the compiler rejects fails here too.
- Float arguments. A compiled kernel receives a Python float as an fp32 scalar (`p.to(tl.float16)`,
  `x * p` promoting to fp32); Triton's interpreter passes the Python float itself, on which `.to()` fails
  and arithmetic follows Python's rules. Here it becomes the fp32 scalar the GPU gets.
- Builtins of triton.language imported by name (`from triton.language.math import rsqrt`) get the
  interpreter's semantic too (Triton patches only the attributes of the modules the kernel names).
- A bf16 constant (`tl.full(shape, 2.0, tl.bfloat16)`): Triton 3.6's interpreter builder has no `get_bf16`
  and fails the program; here it is the fp32 constant rounded to bf16, as later releases make it.

`patch(fn, scope)` makes every change on the scope of Triton's own `_patch_lang`, so that its `restore()`
undoes them all, in order.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from typing import Any, Callable

import numpy as np
import triton.language as tl
import triton.runtime.interpreter as _interp
from triton.runtime.jit import mangle_type

_LIBDEVICE_MODULES = ("triton.language.extra.cuda.libdevice", "triton.language.extra.hip.libdevice")
# Modules of builtins that Triton's interpreter never gives its semantic (kernels call them as
# `tl.extra.cuda.gdc_wait()` or import them by name).
_EXTRA_MODULES = _LIBDEVICE_MODULES + (
    "triton.language.extra.cuda",
    "triton.language.extra.cuda.gdc",
    "triton.language.extra.cuda.utils",
    "triton.language.extra.hip",
    "triton.language.extra.hip.utils",
)
_STUB_MODULE = "triton.language.extra.libdevice"
# Grid dependency control (programmatic dependent launch) orders a kernel after the one before it; in the
# interpreter every earlier launch has finished before a later one starts, so both are no-ops, exactly.
_NO_OPS = ("gdc_wait", "gdc_launch_dependents")
_TRITON_IMPLICIT_CVT = _interp._implicit_cvt


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _modules(names) -> list:
    """Each module both as imported and as reached by attributes from `triton`: they can differ (Triton's
    `language/extra/__init__.py` executes its backend packages itself), and kernels use either."""
    found: dict[int, Any] = {}
    for name in names:
        imported = _import(name)
        reached: Any = importlib.import_module("triton")
        for part in name.split(".")[1:]:
            reached = getattr(reached, part, None)
        for module in (imported, reached):
            if inspect.ismodule(module):
                found.setdefault(id(module), module)
    return list(found.values())


def _with_semantic(member: Callable) -> Callable:
    """A builtin called the way Triton's interpreter calls the ones it patches."""

    def call(*args, **kwargs):
        kwargs.pop("_semantic", None)
        return member(*args, **kwargs, _semantic=_interp.interpreter_semantic)

    call.__name__ = getattr(member, "__name__", "builtin")
    return call


def _no_op(*_args, **_kwargs) -> None:
    return None


class _Index:
    """Read once, at import, while nothing is patched: the builtins and stubs a kernel may reach, each with
    what the interpreter should call instead."""

    def __init__(self) -> None:
        self.libdevice = _modules(_LIBDEVICE_MODULES)
        replacement: dict[int, Callable] = {}  # id(original) -> its stand-in
        self.module_patches: list[tuple[Any, str, Callable]] = []  # (module, attribute, stand-in)
        self.by_id: dict[
            int, tuple[Any, Any, str, Callable]
        ] = {}  # for names imported into a kernel's module
        for module in _modules(_EXTRA_MODULES):
            for name, member in inspect.getmembers(module, tl.core.is_builtin):
                stand_in = replacement.setdefault(
                    id(member), _no_op if name in _NO_OPS else _with_semantic(member)
                )
                self.module_patches.append((module, name, stand_in))
                self.by_id[id(member)] = (member, module, name, stand_in)
        # each stub as the libdevice function of its name: CUDA's, else HIP's
        for stub in _modules([_STUB_MODULE]):
            for name, member in inspect.getmembers(stub, inspect.isfunction):
                backend = next(
                    (
                        getattr(m, name)
                        for m in self.libdevice
                        if tl.core.is_builtin(getattr(m, name, None))
                    ),
                    None,
                )
                if member.__module__ == _STUB_MODULE and backend is not None:
                    self.module_patches.append((stub, name, replacement[id(backend)]))
                    self.by_id[id(member)] = (member, stub, name, replacement[id(backend)])
        for module in (tl, tl.core, tl.math):
            for name, member in inspect.getmembers(module, tl.core.is_builtin):
                if id(member) not in self.by_id:
                    self.by_id[id(member)] = (member, module, name, _with_semantic(member))
        self._symbols: dict[str, str] | None = None

    def symbol_names(self) -> dict[str, str]:
        """Each libdevice symbol (`__nv_erff`, `__ocml_erf_f32`) to the Python function that emits it."""
        if self._symbols is None:
            names: dict[str, str] = {}
            for module in self.libdevice:
                for node in ast.parse(inspect.getsource(module)).body:
                    if isinstance(node, ast.FunctionDef):
                        for leaf in ast.walk(node):
                            value = getattr(leaf, "value", None)
                            if (
                                isinstance(leaf, ast.Constant)
                                and isinstance(value, str)
                                and value.startswith("__")
                            ):
                                names.setdefault(value, node.name)
            self._symbols = names
        return self._symbols


_index = _Index()


class _Namespace:
    """A dict seen as an object, so that a kernel's globals are patched (and restored) by the same scope."""

    def __init__(self, mapping: dict) -> None:
        object.__setattr__(self, "_mapping", mapping)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._mapping[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self._mapping[name] = value

    def __delattr__(self, name: str) -> None:
        self._mapping.pop(name, None)


def _extern_elementwise(_builder, _lib_name, _lib_path, symbol, args, ret_type, _is_pure):
    # deferred: most kernels call no libdevice function at all, and its table is large
    from irscope.engine.triton_compat.libdevice_numpy import IMPLEMENTATIONS

    name = _index.symbol_names().get(symbol, symbol)
    compute = IMPLEMENTATIONS.get(name)
    if compute is None:
        raise NotImplementedError(
            f"libdevice.{name} ({symbol}) has no NumPy equivalent in irscope's interpreter, so "
            f"this launch cannot run on the CPU; it is still captured and compiled"
        )
    scalar = ret_type.scalar
    out = _interp._get_np_dtype(scalar)
    datas = [handle.data for handle in args]
    with np.errstate(all="ignore"):
        result = np.asarray(compute(out, *datas))
        result = np.broadcast_to(result, np.broadcast_shapes(*(d.shape for d in datas))).astype(out)
    return _interp.TensorHandle(result, scalar)


def _implicit_cvt(arg):
    """Triton's conversion of a launch argument, with a Python float as the fp32 scalar the GPU receives."""
    if isinstance(arg, float):
        ty = tl.str_to_ty(mangle_type(arg), None)
        with np.errstate(over="ignore"):
            data = np.array([arg], dtype=_interp._get_np_dtype(ty))
        return tl.tensor(_interp.TensorHandle(data, ty), ty)
    return _TRITON_IMPLICIT_CVT(arg)


def _get_bf16(builder, value):
    """A bf16 constant: the fp32 one rounded to bf16 (Triton 3.6's builder lacks it)."""
    return builder.create_fp_trunc(builder.get_fp32(value), tl.bfloat16)


def patch(fn, scope) -> None:
    """Complete the interpreter for running `fn`, on Triton's patch scope (call after Triton's own patch)."""
    builder_type = type(_interp.interpreter_builder)
    scope.set_attr(builder_type, "create_extern_elementwise", _extern_elementwise)
    if not hasattr(builder_type, "get_bf16"):
        scope.set_attr(builder_type, "get_bf16", _get_bf16)
    scope.set_attr(_interp, "_implicit_cvt", _implicit_cvt)
    first = _index.module_patches[0] if _index.module_patches else None
    # else a caller's scope has them
    if first is not None and getattr(first[0], first[1]) is not first[2]:
        for module, name, stand_in in _index.module_patches:
            scope.set_attr(module, name, stand_in)
    namespace = fn.__globals__
    view = _Namespace(namespace)
    for key, value in list(namespace.items()):
        found = _index.by_id.get(id(value))
        if found is None or found[0] is not value:
            continue
        _original, module, name, stand_in = found
        # Triton's own stand-in, where it made one (tl.reduce, tl.range ...)
        current = getattr(module, name)
        scope.set_attr(view, key, current if current is not value else stand_in)
