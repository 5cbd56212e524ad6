"""Read a kernel file and find the @triton.jit functions defined in it."""

from __future__ import annotations

import ast
import functools
import importlib.machinery
import io
import os
import sys
import tokenize
from dataclasses import dataclass
from types import CodeType

from irscope.base.errors import IrscopeError
from irscope.base.model import Kernel
from irscope.base.paths import check_kernel_path, package_module
from irscope.engine.capture.notebook import NotebookScript, notebook_script
from irscope.engine.inductor.kernels import inductor_kernel_in, inductor_kernel_of
from irscope.engine.inductor.provenance import describe_kernel
from irscope.engine.triton_compat import unwrap_kernel
from irscope.engine.triton_compat.gluon import language_of


@dataclass
class UserFile:
    path: str  # absolute
    shown: str  # as the user typed it, for messages
    text: str
    code: CodeType
    def_lines: dict[str, int]  # top-level function name -> line of its `def`
    # the dotted name it runs as (`python -m NAME` semantics): a module of a package, or `-m NAME`
    module: str | None = None
    root: str | None = (
        None  # what goes first on sys.path for the run: the package's root, or the cwd
    )
    command: tuple[str, ...] | None = None  # `-m MODULE ARGS...`: what the user gave, MODULE first
    notebook: NotebookScript | None = None  # a Jupyter notebook: the script its code cells make

    @property
    def package(self) -> str | None:
        """`__package__` of the run (relative imports start there); None for a plain script."""
        if self.module is None:
            return None
        if os.path.basename(self.path) == "__init__.py":
            return self.module
        return self.module.rpartition(".")[0]


def read_user_file(path: str) -> UserFile:
    """Check that `path` is a readable Python file and compile it; one-line errors otherwise. A file inside
    a package (an `__init__.py` beside it) will run as its module, with the package's root on sys.path."""
    user_file = _read(path, path)
    found = package_module(user_file.path)
    if found is not None:
        user_file.root, user_file.module = found
    return user_file


def read_module(name: str, args: list[str] | tuple[str, ...] = ()) -> UserFile:
    """The file `python -m NAME` would run (a package's `__main__.py`), found on sys.path with the current
    folder first, as python -m looks, without importing anything (a package's `__init__` runs later,
    under capture, as the run imports it)."""
    shown = " ".join(["-m", name, *args])
    if not all(part.isidentifier() for part in name.split(".")):
        raise IrscopeError(
            f"-m {name}: not a module name; give a dotted Python name, e.g. -m pytest tests/test_x.py"
        )
    search = [os.getcwd(), *sys.path]
    spec = None
    parts = name.split(".")
    for depth, part in enumerate(parts):
        spec = importlib.machinery.PathFinder.find_spec(part, search)
        if spec is None:
            found = ".".join(parts[: depth + 1])
            raise IrscopeError(
                f"-m {name}: no module named {found} on this Python's path; install it in the "
                f"environment irscope runs in ({sys.executable}), or run irscope from the folder that holds it"
            )
        search = list(spec.submodule_search_locations or [])
        if depth < len(parts) - 1 and not search:
            raise IrscopeError(f"-m {name}: {'.'.join(parts[: depth + 1])} is not a package")
    module = name
    if spec.submodule_search_locations:  # a package runs its __main__, as python -m does
        main = importlib.machinery.PathFinder.find_spec("__main__", search)
        if main is None or not main.origin:
            raise IrscopeError(
                f"-m {name}: {name} is a package and cannot be run (it has no __main__.py)"
            )
        spec, module = main, f"{name}.__main__"
    if not spec.origin or not spec.origin.endswith(".py") or not os.path.isfile(spec.origin):
        raise IrscopeError(
            f"-m {name}: irscope runs Python source, and {name} is {spec.origin or 'not a file'}"
        )
    user_file = _read(spec.origin, shown)
    user_file.module, user_file.root, user_file.command = module, os.getcwd(), (name, *args)
    return user_file


def _read(path: str, shown: str) -> UserFile:
    check_kernel_path(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise IrscopeError(
            f"{shown}: cannot read it ({exc.strerror}); check its permissions"
        ) from None
    if b"\0" in raw[:8192]:
        raise IrscopeError(
            f"{shown} is not a Python file (it holds binary data); give a .py file with kernels"
        )
    absolute = os.path.abspath(path)
    notebook = notebook_script(absolute, raw, shown) if path.endswith(".ipynb") else None
    text = notebook.text if notebook is not None else _decoded(raw, shown)
    try:
        tree = ast.parse(text, filename=absolute)
        # dont_inherit: not this module's `from __future__ import annotations`, which would make every annotation
        # in the file a string (a Gluon aggregate's field types then failed its isinstance checks)
        code = compile(tree, absolute, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = shown
        if exc.lineno:
            where = (
                f"{shown} {notebook.position(exc.lineno)}" if notebook else f"{shown}:{exc.lineno}"
            )
        kind = (
            "is not valid Python" if not path.endswith((".py", ".ipynb")) else "has a syntax error"
        )
        raise IrscopeError(f"{where}: {kind}: {exc.msg}; fix the file and try again") from None
    def_lines = {
        node.name: node.lineno for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
    }
    return UserFile(absolute, shown, text, code, def_lines, notebook=notebook)


def _decoded(raw: bytes, shown: str) -> str:
    """The file's text as Python reads it: UTF-8 unless a PEP 263 coding line says otherwise, a UTF-8 byte
    order mark dropped (Triton reads the source the same way, through linecache)."""
    not_text = (
        f"{shown} is not a Python file (not UTF-8 text, and no coding line names another encoding); "
        f"give a .py file with kernels"
    )
    try:
        encoding, _lines = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        if str(exc.msg).startswith("unknown encoding"):
            raise IrscopeError(
                f"{shown}: its coding line names an {exc.msg}; fix the coding line "
                f"(e.g. # -*- coding: utf-8 -*-) or save the file as UTF-8"
            ) from None
        # not UTF-8 in its first lines, or a BOM with another coding
        raise IrscopeError(not_text) from None
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError:
        if encoding in ("utf-8", "utf-8-sig"):
            raise IrscopeError(not_text) from None
        raise IrscopeError(
            f"{shown} is not {encoding} text, as its coding line says; fix the coding line or "
            f"save the file in that encoding"
        ) from None


def find_kernels(namespace: dict, user_file: UserFile) -> list[Kernel]:
    """Every @triton.jit function defined in the file (autotune/heuristics wrappers peeled off).

    Kernels imported from elsewhere are left out here; those the file launches join through
    `kernels_of_launches`."""
    found = _kernels_in(namespace, user_file.path, user_file.def_lines)
    # a wrapper's kernels: strings it loaded through async_compile
    for value in list(namespace.values()):
        kernel = inductor_kernel_in(value)
        if kernel is not None and kernel.wrapper == user_file.path and kernel.name not in found:
            found[kernel.name] = _inductor_kernel(kernel, user_file.text)
    return sorted(
        found.values(),
        key=lambda k: (
            k.file != user_file.path,
            (k.inductor_info or {}).get("wrapper_line") or k.line,
        ),
    )


def _inductor_kernel(kernel, wrapper_text: str = "") -> Kernel:
    jit = kernel.fn
    path = os.path.abspath(jit.fn.__code__.co_filename)
    line = _def_lines(path).get(kernel.name, jit.fn.__code__.co_firstlineno)
    return Kernel(
        kernel.name,
        path,
        line,
        jit,
        list(kernel.configs) or None,
        [],
        module=getattr(jit.fn, "__module__", None) or "",
        inductor=kernel,
        inductor_info=describe_kernel(kernel, wrapper_text),
    )


def _kernels_in(namespace: dict, path: str, def_lines: dict[str, int]) -> dict[str, Kernel]:
    kernels: dict[str, Kernel] = {}
    for value in list(namespace.values()):
        inductor = inductor_kernel_in(value)
        if inductor is not None:
            if os.path.abspath(inductor.fn.fn.__code__.co_filename) == path:
                kernel = _inductor_kernel(inductor)
                kernels[kernel.name] = kernel
            continue
        try:
            unwrapped = unwrap_kernel(value)
        except Exception:  # noqa: BLE001 - an odd object in a module (a lazy proxy) is no kernel
            continue
        if unwrapped is None:
            continue
        jit = unwrapped.jit
        if os.path.abspath(jit.fn.__code__.co_filename) != path:
            continue
        name = jit.fn.__name__
        line = def_lines.get(name, jit.fn.__code__.co_firstlineno)
        known = kernels.get(name)
        if known is None or (unwrapped.autotune_configs and not known.autotune_configs):
            kernels[name] = Kernel(
                name,
                path,
                line,
                jit,
                unwrapped.autotune_configs,
                unwrapped.heuristics,
                module=getattr(jit.fn, "__module__", None) or "",
                language=language_of(jit),
            )
    return kernels


def kernels_of_launches(launched: list, known: list[Kernel]) -> list[Kernel]:
    """The kernels the file launched that it does not define: a sibling module's, an installed library's.

    Each is found the way the file's own are, in its own module (so an autotuner's configs and a
    heuristic's names come along); a kernel its module does not expose (made in a closure) stands alone,
    with the configs its launch carried. `launched` holds (jit, autotune_configs) pairs in launch order."""
    have = {id(k.jit) for k in known}
    found: list[Kernel] = []
    modules: dict[str, dict[str, Kernel]] = {}
    for jit, configs in launched:
        if id(jit) in have:
            continue
        have.add(id(jit))
        inductor = inductor_kernel_of(jit)
        if inductor is not None:
            found.append(
                _inductor_kernel(
                    inductor, kernel_file_text(inductor.wrapper) if inductor.wrapper else ""
                )
            )
            continue
        path = os.path.abspath(jit.fn.__code__.co_filename)
        module_name = getattr(jit.fn, "__module__", None) or ""
        if path not in modules:
            module = sys.modules.get(module_name)
            namespace = vars(module) if module is not None and os.path.exists(path) else {}
            modules[path] = _kernels_in(namespace, path, _def_lines(path))
        kernel = modules[path].get(jit.fn.__name__)
        if kernel is None or kernel.jit is not jit:
            line = _def_lines(path).get(jit.fn.__name__, jit.fn.__code__.co_firstlineno)
            kernel = Kernel(
                jit.fn.__name__,
                path,
                line,
                jit,
                configs,
                [],
                module=module_name,
                language=language_of(jit),
            )
        found.append(kernel)
    return found


def kernels_beside_launched(kernels: list[Kernel]) -> list[Kernel]:
    """The other kernels of the modules that define `kernels` (a library module's kernels that a test
    session did not launch), found in each module as it is now, in the order of their lines."""
    have = {id(k.jit) for k in kernels}
    out: list[Kernel] = []
    for path, module_name in dict.fromkeys(
        (k.file, k.module) for k in kernels if k.inductor is None
    ):
        module = sys.modules.get(module_name)
        if module is None or getattr(module, "__file__", None) is None:
            continue
        if os.path.abspath(module.__file__) != path:
            continue
        found = _kernels_in(vars(module), path, _def_lines(path)).values()
        out += sorted((k for k in found if id(k.jit) not in have), key=lambda k: k.line)
    return out


@functools.lru_cache(maxsize=64)
def _def_lines(path: str) -> dict[str, int]:
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return {}
    return {node.name: node.lineno for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


@functools.lru_cache(maxsize=64)
def kernel_file_text(path: str) -> str:
    """The text of the file a kernel is defined in ("" when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8-sig", "replace")
    except OSError:
        return ""
