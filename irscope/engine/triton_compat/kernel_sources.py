"""Everything a kernel's compile reads besides its arguments, gathered to be written into a reproducer.

Triton builds a kernel from the source text `inspect` gives for its function (decorators included), the file
name and line numbers of its code object (every `loc` in the IR, the `.file` and `.loc` lines of the PTX), its
module and qualified name (the names of the functions it calls in the IR), and the globals it reads: other
`@triton.jit` functions, `tl.constexpr` values, modules. `kernel_sources` collects those, for the kernel and
for each JIT function it calls that is not Triton's own (the user's, a library's, an Inductor module's), so
that a script can define them again with the same text at the same lines of the same file name, and the
compile is the same byte for byte. Aggregate classes (Gluon's `MMAImpl`, given to a kernel as a constexpr or
read as a global) are written whole, at their own lines; a module of the user's that a kernel reads by name
(another tutorial imported by file name) is made again with what the kernel reads of it.

What cannot be written down (a global that is neither a constant, a JIT function, an aggregate class, a module
nor an object of Triton's or torch's) is refused with the name and its type.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import triton.language as tl
from triton.runtime.jit import JITCallable, JITFunction

from irscope.base.errors import IrscopeError

# modules a reproducer may import: it needs torch and Triton, and nothing else beyond Python's own
_IMPORTABLE_ROOTS = ("triton", "torch", "math", "numpy", "typing")


@dataclass
class Function:
    """One JIT function as the reproducer defines it again."""

    module: str  # fn.__module__ (the namespace it is defined in)
    qualname: str
    file: str  # the code object's file name: every location in the IR names it
    first_line: int  # co_firstlineno: the first decorator's line when decorated
    lines: list[str]  # the source lines inspect gives (decorators included), as in the file
    def_index: int  # which of `lines` holds `def`
    # (module, name): where the functions that call it find it (a helper imported under another name too)
    bound_as: list[tuple[str, str]]
    # do_not_specialize, debug, noinline, ... as the decorator was given them
    jit_options: dict[str, Any]
    jit_class: (
        str  # the expression of its JIT class (JITFunction; Gluon's for a @gluon.jit function)
    )


@dataclass
class Class:
    """One aggregate class (`@gluon.aggregate`, `tl.core._aggregate`) as the reproducer defines it again: its
    whole text, decorators and JIT methods included, run at its own lines of its own file. A class made inside
    a function (a factory binding constexprs, as Gluon tutorial 07's grouped tile scheduler) is run inside a
    function of the factory's name, given the values its methods hold from it."""

    module: str
    qualname: str
    file: str
    first_line: int  # its first decorator's line
    lines: list[str]
    bound_as: list[tuple[str, str]]
    name: str = ""  # its `__name__`, which a factory may have changed (the constexpr's name in the cache key)
    # made inside a function: that function's name, and the expressions of the values its methods read from it
    factory: str = ""
    closure: dict[str, str] = field(default_factory=dict)


@dataclass
class KernelSources:
    functions: list[Function] = field(
        default_factory=list
    )  # the kernel last: helpers are defined first
    classes: list[Class] = field(default_factory=list)  # in the order their files define them
    # module -> global name -> the Python expression that gives its value again
    globals: dict[str, dict[str, str]] = field(default_factory=dict)
    imports: set[str] = field(default_factory=set)  # modules the expressions need


def _jit_options(jit: JITFunction) -> dict[str, Any]:
    out = {}
    for name in ("do_not_specialize", "do_not_specialize_on_alignment", "debug", "noinline"):
        value = getattr(jit, name, None)
        if value:
            out[name] = list(value) if isinstance(value, (tuple, list)) else value
    return out


def _names_read(source: str) -> list[str]:
    """The free names the function reads: loaded names that are neither its parameters nor assigned in it."""
    tree = ast.parse(textwrap.dedent(source))
    func = next(
        node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    bound = {a.arg for a in func.args.args + func.args.kwonlyargs + func.args.posonlyargs}
    bound.update(
        node.id
        for node in ast.walk(func)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
    )
    # decorators are Triton's to read, not the compile's
    skip = {id(n) for dec in func.decorator_list for n in ast.walk(dec)}
    # defaults and annotations are evaluated where the function is defined, so a parameter's default may read
    # a global of the parameter's own name (jvp-flash-attention's `MASK_CONST: tl.constexpr = MASK_CONST`)
    arguments = func.args
    outer = [
        *arguments.defaults,
        *(d for d in arguments.kw_defaults if d is not None),
        func.returns,
    ]
    outer += [a.annotation for a in arguments.args + arguments.kwonlyargs + arguments.posonlyargs]
    outer_names = {
        id(n)
        for expr in outer
        if expr is not None
        for n in ast.walk(expr)
        if isinstance(n, ast.Name)
    }
    loaded = [
        node.id
        for node in ast.walk(func)
        if isinstance(node, ast.Name)
        and isinstance(node.ctx, ast.Load)
        and id(node) not in skip
        and (id(node) in outer_names or node.id not in bound)
    ]
    return list(dict.fromkeys(loaded))


def is_triton_own(value: Any) -> bool:
    """Whether `value` (a function, a class, an object of a class) is defined in Triton's own package."""
    module = getattr(value, "__module__", None) or ""
    return module == "triton" or module.startswith("triton.")


def expression(
    name: str, value: Any, imports: set[str], item: Callable[[str, Any], str] | None = None
) -> str:
    """A Python expression that gives `value` again in a script that imports `imports`, or IrscopeError.
    `item(name, value)` writes what a dict, tuple, list or Triton dataclass holds (default: this function; a
    reproducer's arguments hold tensors too)."""
    if item is None:

        def item(inner_name: str, inner: Any) -> str:
            return expression(inner_name, inner, imports)

    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return (
            repr(value)
            if value == value and abs(value) != float("inf")
            else f"float({str(value)!r})"
        )
    if isinstance(value, tl.constexpr):
        inner = item(name, value.value)
        imports.add("triton.language")
        return f"triton.language.constexpr({inner})"
    if isinstance(value, tl.dtype):
        imports.add("triton.language")
        return f"triton.language.dtype({value.name!r})"
    if isinstance(value, torch.dtype):
        imports.add("torch")
        return str(value)
    if isinstance(value, types.ModuleType):
        root = value.__name__.split(".")[0]
        if root not in _IMPORTABLE_ROOTS:
            raise IrscopeError(
                f"the kernel reads the module {value.__name__} as `{name}`, which a reproducer of torch "
                f"and Triton alone cannot import"
            )
        imports.add(value.__name__)
        return value.__name__
    if isinstance(value, dict):  # tutorial 07's extern_libs={"libdevice": path}
        pairs = (f"{item(name, k)}: {item(f'{name}[{k!r}]', v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    if isinstance(value, (tuple, list)):
        items = [item(f"{name}[{i}]", v) for i, v in enumerate(value)]
        text = ", ".join(items)
        return (
            f"({text},)"
            if isinstance(value, tuple) and len(items) == 1
            else (f"({text})" if isinstance(value, tuple) else f"[{text}]")
        )
    if (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and is_triton_own(type(value))
    ):
        # Gluon's layouts, host tensor descriptors (Triton's, Gluon's): made again from their fields
        fields = ", ".join(
            f"{f.name}={item(f'{name}.{f.name}', getattr(value, f.name))}"
            for f in dataclasses.fields(value)
            if f.init
        )
        return f"{expression(name, type(value), imports)}({fields})"
    owner = getattr(value, "__module__", None) or ""
    attribute = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if owner.split(".")[0] in _IMPORTABLE_ROOTS and attribute and "<" not in attribute:
        try:
            found = importlib.import_module(owner)
            for part in attribute.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError):
            found = None
        if found is value:
            imports.add(owner)
            return f"{owner}.{attribute}"
    raise IrscopeError(
        f"the kernel reads the global `{name}` ({type(value).__name__}), which irscope cannot write into "
        f"a reproducer"
    )


def _function(jit: JITFunction, bound_as: tuple[str, str], imports: set[str]) -> Function:
    fn = jit.fn
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise IrscopeError(
            f"the source of {fn.__qualname__} ({fn.__code__.co_filename}) cannot be read back, so a "
            f"reproducer cannot define it again: code generated in memory or from a file since removed"
        ) from None
    def_index = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
    return Function(
        fn.__module__,
        fn.__qualname__,
        fn.__code__.co_filename,
        first,
        list(lines),
        def_index,
        [bound_as],
        _jit_options(jit),
        expression(type(jit).__name__, type(jit), imports),
    )


def is_aggregate_class(value: Any) -> bool:
    """A class made by Triton's `aggregate` decorator in the user's code (Gluon's MMA wrappers passed to a
    kernel as a constexpr)."""
    return (
        isinstance(value, type)
        and getattr(value, "__triton_aggregate__", False)
        and not is_triton_own(value)
    )


def _jit_methods(cls: type) -> list[JITCallable]:
    return [member for member in vars(cls).values() if isinstance(member, JITCallable)]


def _class(cls: type, bound_as: tuple[str, str], imports: set[str]) -> Class:
    """Where an aggregate class is written, found from its JIT methods' file: `inspect` cannot look up a class
    of a file run as `__main__` once the run is over. A class made inside a function takes the values its
    methods read from that function with it."""
    methods = _jit_methods(cls)
    statement = cls.__qualname__.rsplit(".", 1)[-1]
    factory = cls.__qualname__[: -len(statement)].removesuffix(".").removesuffix(".<locals>")
    if not methods or not (factory == "" or factory.isidentifier()) or "." in statement:
        raise IrscopeError(
            f"the kernel reads the class {cls.__qualname__}, made inside a class or a nested function or "
            f"without JIT methods, which irscope cannot write into a reproducer yet"
        )
    file = methods[0].fn.__code__.co_filename
    line = methods[0].fn.__code__.co_firstlineno
    text = "".join(linecache.getlines(file))
    node = next(
        (
            node
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.ClassDef)
            and node.name == statement
            and node.lineno <= line <= (node.end_lineno or 0)
        ),
        None,
    )
    if node is None or (factory == "") != (node.col_offset == 0):
        raise IrscopeError(f"the class {cls.__qualname__} is not where its methods' file says")
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    lines = text.splitlines(keepends=True)[first - 1 : node.end_lineno]
    closure: dict[str, str] = {}
    for method in methods:
        fn = method.fn
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            if name == statement or name in closure:
                continue
            value = cell.cell_contents
            closure[name] = (
                f"_namespace({cls.__module__!r})[{name!r}]"  # defined again by the reproducer
                if isinstance(value, JITCallable) or is_aggregate_class(value)
                else expression(name, value, imports)
            )
    return Class(
        cls.__module__,
        cls.__qualname__,
        file,
        first,
        lines,
        [bound_as],
        cls.__name__,
        factory,
        closure,
    )


def _class_names_read(lines: list[str]) -> list[str]:
    """The names a class's definition reads as it runs: its decorators, bases, annotations and the decorators of
    its methods (a method's body is read by the JIT when it compiles, as any function's)."""
    tree = ast.parse(textwrap.dedent("".join(lines)))
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    roots: list[ast.AST] = [*cls.decorator_list, *cls.bases]
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots += statement.decorator_list
        else:
            roots.append(statement)
    names = (
        node.id
        for root in roots
        for node in ast.walk(root)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    )
    return list(dict.fromkeys(names))


def _attributes_read(source: str, name: str) -> list[str]:
    """The attributes the function reads off the global `name` (`t5.pick_wgmma_layout`)."""
    tree = ast.parse(textwrap.dedent(source))
    return list(
        dict.fromkeys(
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == name
        )
    )


def _user_module(value: Any) -> bool:
    """A module of the user's own (another tutorial file imported by name), which a reproducer defines again."""
    return (
        isinstance(value, types.ModuleType)
        and value.__name__.split(".")[0] not in _IMPORTABLE_ROOTS
        and getattr(value, "__file__", None) is not None
    )


def kernel_sources(kernel: JITFunction, constexprs: tuple[Any, ...] = ()) -> KernelSources:
    """The kernel and every JIT function it reaches that is not Triton's own, with the globals they read; the
    aggregate classes it reads or is given among `constexprs` (the launch's values), written whole; the user's
    modules it reads attributes of, made again with what it reads of them."""
    out = KernelSources()
    order: list[JITFunction] = []
    found: dict[int, Function] = {}
    classes: dict[int, Class] = {}
    # (JIT function, where it is bound, whether it is written on its own: not a class's method)
    pending: list[tuple[JITCallable, tuple[str, str], bool]] = [
        (kernel, (kernel.fn.__module__, kernel.fn.__name__), True)
    ]

    def take_class(cls: type, bound_as: tuple[str, str]) -> None:
        if id(cls) in classes:
            if bound_as not in classes[id(cls)].bound_as:
                classes[id(cls)].bound_as.append(bound_as)
            return
        written = classes[id(cls)] = _class(cls, bound_as, out.imports)
        names = out.globals.setdefault(written.module, {})
        module_globals = _jit_methods(cls)[0].fn.__globals__
        for name in _class_names_read(written.lines):
            if (
                name in module_globals
                and name not in names
                and name != written.qualname.rsplit(".", 1)[-1]
            ):
                take_global(name, module_globals[name], written.module)
        for method in _jit_methods(cls):
            pending.append(
                (method, (written.module, f"{cls.__name__}.{method.fn.__name__}"), False)
            )

    def take_global(name: str, value: Any, module: str, source: str = "") -> None:
        names = out.globals.setdefault(module, {})
        if isinstance(value, JITCallable) and not is_triton_own(value.fn):
            pending.append((value, (module, name), True))
        elif is_aggregate_class(value):
            take_class(value, (module, name))
        elif _user_module(value):
            names[name] = f"_module({value.__name__!r})"
            for attribute in _attributes_read(source, name):
                if hasattr(value, attribute):
                    take_global(attribute, getattr(value, attribute), value.__name__)
        elif name not in names:
            names[name] = expression(name, value, out.imports)

    for value in constexprs:
        if is_aggregate_class(value):
            take_class(value, (value.__module__, value.__name__))
    while pending:
        jit, bound_as, own = pending.pop()
        if id(jit) in found:
            if own and bound_as not in found[id(jit)].bound_as:
                found[id(jit)].bound_as.append(bound_as)
            continue
        function = _function(jit, bound_as, out.imports)
        found[id(jit)] = function
        if own:
            order.append(jit)
        fn = jit.fn
        closure = dict(
            zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ()))
        )
        source = "".join(function.lines)
        for name in _names_read(source):
            if name in closure:
                value = closure[name]
            elif name in fn.__globals__:
                value = fn.__globals__[name]
            else:  # a builtin, or a name the kernel's code never reaches
                continue
            # a JIT function or a constexpr function (Gluon's layout helpers): its source written again
            take_global(name, value, function.module, source)
    # helpers first (each is looked up when the kernel compiles, but defined in an order that reads well)
    out.functions = [found[id(jit)] for jit in reversed(order) if jit is not kernel]
    out.functions.append(found[id(kernel)])  # last, whatever was reached first
    out.classes = sorted(classes.values(), key=lambda c: (c.file, c.first_line))
    for written in [*out.functions, *out.classes]:
        for module, name in written.bound_as:
            out.globals.get(module, {}).pop(name, None)
    return out
