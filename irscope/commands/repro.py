"""`irscope repro FILE -o repro.py`: one launch of one kernel as a script that needs torch and Triton alone.

The script defines the kernel and every JIT helper it calls that is not Triton's own again, each from its
source text as written (decorators included), at its own lines of its own file name (`linecache` holds the
text, so Triton reads what it read from the file), in a namespace named as its module was; Triton's compile
then sees what it saw at the launch: the same source, locations and names. Each argument is made again with
its shape, dtype, strides, storage offset and storage size (so a pointer's alignment, which the JIT
specializes on, is the same), integer and boolean tensors of up to `_VALUES_KEPT` elements with their values
(indices must stay inside what they index), others drawn on the device after `torch.manual_seed(0)`;
scalars, constexprs and the launch options (num_warps, num_stages, an autotune config's values) as the JIT got
them, with the launch's grid.
Its `__main__` launches once and prints a checksum of each tensor.

`--check` opens the written script the way irscope opens any file and compares every stage with the
original's, byte for byte: what the reproducer is for is that it compiles to the same code.
"""

from __future__ import annotations

import linecache
import sys
import textwrap
from typing import Any

import torch

from irscope.base.errors import IrscopeError
from irscope.base.paths import check_output_path
from irscope.engine.session import open_file
from irscope.engine.triton_compat.caches import fresh_triton_cache
from irscope.engine.triton_compat.kernel_sources import (
    KernelSources,
    expression,
    is_aggregate_class,
    kernel_sources,
)

# What Inductor's CachingAutotuner gives triton.compile beside the constexprs (_create_compile_options)
_INDUCTOR_COMPILE_OPTIONS = (
    "num_warps",
    "num_stages",
    "debug",
    "sanitize_overflow",
    "enable_fp_fusion",
    "launch_cooperative_grid",
    "launch_pdl",
)
_VALUES_KEPT = 1 << 16  # integer tensors up to this many elements keep their values
STAGES_COMPARED = ("ttir", "ttgir", "llir", "ptx", "sass", "amdgcn")


# What every reproducer defines before its kernel: the stand-in for decorators, the source text put where
# `inspect` reads it, the namespaces of the modules, one JIT function defined again, a tensor laid out again.
_SCRIPT_HELPERS = r'''def _as_written(fn):
    """Stands where the decorators were: Triton reads them from the source text, not from here."""
    return fn


def _keep_sources():
    """Put each file's text where `inspect` looks for it, so that the JIT reads it as it did."""
    for file, pieces in _SOURCES.items():
        lines = []
        for first, text in pieces:
            piece = text.splitlines(keepends=True)
            lines += ["\n"] * (first - 1 - len(lines))
            # a statement at column 0 after the piece ends its block where the file's next one did
            if piece and piece[-1].endswith("\n"):
                piece.append("pass\n")
            lines[first - 1 :] = piece
        linecache.cache[file] = (sum(map(len, lines)), None, lines, file)


def _module(module):
    """A module of the kernel's, made again: the globals its JIT functions read, and what a kernel that
    reads it by name (`t5.pick_wgmma_layout`) finds in it."""
    if module not in _MODULES:
        _MODULES[module] = types.ModuleType(module)
        _MODULES[module]._as_written = _as_written
    return _MODULES[module]


def _namespace(module):
    """The globals of a module as its JIT functions read them."""
    return vars(_module(module))


def _define_class(module, file, first, name, code, found_as):
    """Run an aggregate class's definition (its decorators and JIT methods with it) at its own lines of its
    own file, in its module's namespace, and put it where it is looked up."""
    namespace = _namespace(module)
    exec(compile("\n" * (first - 1) + code, file, "exec"), namespace)
    for caller, alias in found_as:
        _namespace(caller)[alias] = namespace[name]
    return namespace[name]


def _define_local_class(module, file, first, factory, code, closure, name, found_as):
    """Run an aggregate class made inside a function in a function of that function's name (its methods keep
    their qualified names), its lines where they were, given the values its methods read from it; then name
    it as the original was named, and put it where it is looked up."""
    namespace = _namespace(module)
    kept = namespace.pop(factory, None)
    exec(compile("\n" * (first - 2) + code, file, "exec"), namespace)
    made = namespace.pop(factory)(**closure)
    if kept is not None:
        namespace[factory] = kept
    made.__name__ = name
    for caller, alias in found_as:
        _namespace(caller)[alias] = made
    return made


def _define(module, file, first, qualname, code, jit_class, options, found_as):
    """Compile one JIT function at its own lines of its own file, in its module's namespace, named as
    it was (a kernel made inside a function keeps its qualified name), and put it where its callers
    look it up: (module, name) pairs."""
    namespace = _namespace(module)
    exec(compile("\n" * (first - 1) + code, file, "exec"), namespace)
    name = qualname.rsplit(".", 1)[-1]
    namespace[name].__qualname__ = qualname
    jit = namespace[name] = jit_class(namespace[name], **options)
    for caller, alias in found_as:
        _namespace(caller)[alias] = jit
    return jit


def _inductors_ptxas():
    """Compile with the ptxas Inductor uses: torch's own, where the torch wheel ships one and no TRITON_PTXAS_PATH
    is set (torch/_inductor/runtime/compile_tasks.py). A CUDA 13 torch's writes PTX 9.0, Triton's own 8.7."""
    ptxas = os.path.join(os.path.dirname(os.path.abspath(torch.__file__)), "bin", "ptxas")
    if "TRITON_PTXAS_PATH" not in os.environ and os.path.isfile(ptxas) and os.access(ptxas, os.X_OK):
        os.environ["TRITON_PTXAS_PATH"] = ptxas


class _Pointer:
    """A typed pointer into a tensor: what a library's buffer object gives the JIT (its data_ptr and dtype)."""

    def __init__(self, tensor, offset, dtype):
        self.tensor, self.offset, self.dtype = tensor, offset, dtype

    def data_ptr(self):
        return self.tensor.data_ptr() + self.offset


def _scratch(size, alignment, stream):
    """Global scratch memory for a kernel that asks for it at launch (a tensor descriptor made in the kernel)."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def _tensor(shape, stride, offset, storage, dtype, values=None):
    """A tensor laid out as the launch's was: same storage size and offset, so the same alignment. Floats are
    drawn on the device from torch's seed, in their own type: no copy of a GPU-sized input in host memory."""
    if values is not None:
        flat = torch.tensor(values, device="cpu").to(dtype).to("cuda")
    elif dtype.is_floating_point:
        try:
            flat = torch.randn(storage, dtype=dtype, device="cuda")
        except (RuntimeError, TypeError):  # a type randn does not draw (the 8-bit floats): through fp32
            flat = torch.randn(storage, device="cuda").to(dtype)
    else:
        flat = torch.zeros(storage, dtype=dtype, device="cuda")
    return flat.as_strided(shape, stride, offset)


_MODULES = {}
torch.manual_seed(0)
_keep_sources()'''


def _string_block(text: str) -> str:
    """`text` as a Python literal that reads well: a triple-quoted raw string where that is exact."""
    if "'''" not in text and not text.endswith(("\\", "'")) and "\r" not in text:
        return "r'''" + text + "'''"
    return repr(text)


def _tensor_expression(value) -> str:
    dtype = str(value.dtype)
    storage_elements = value.untyped_storage().nbytes() // max(value.element_size(), 1)
    layout = f"{list(value.shape)}, {list(value.stride())}, {value.storage_offset()}, {storage_elements}, {dtype}"
    if (
        not (value.dtype.is_floating_point or value.dtype.is_complex)
        and storage_elements <= _VALUES_KEPT
    ):
        # the whole storage, viewed where it lives: a view's `.cpu()` copies only its own elements (on a GPU,
        # liger's cross entropy gets a 2-element slice of its 4 targets)
        flat = torch.as_strided(value.detach(), (storage_elements,), (1,), 0).cpu()
        values = flat.to(torch.int64).tolist() if value.dtype != torch.bool else flat.tolist()
        return f"_tensor({layout}, values={values!r})"
    return f"_tensor({layout})"


def _argument(value: Any, name: str, imports: set[str]) -> str:
    """A launch's argument as an expression: a tensor made again (`_tensor`), an aggregate class as the
    reproducer defines it again (`_define_class`), anything else as a global is written, with the tensors
    inside a tuple or a tensor descriptor made again too."""
    if isinstance(value, torch.Tensor):
        return _tensor_expression(value)
    if is_aggregate_class(value):
        return f"_namespace({value.__module__!r})[{value.__name__!r}]"
    pointer = _typed_pointer(value)
    if pointer is not None:
        return pointer
    try:
        return expression(name, value, imports, lambda n, v: _argument(v, n, imports))
    except IrscopeError as err:
        if str(err).startswith("repro:"):  # said of the item inside that could not be written
            raise
        raise IrscopeError(
            f"repro: the argument {name} is a {type(value).__name__}, which irscope cannot write into a "
            f"reproducer yet (tensors, numbers, None, dtypes and constexprs it can)"
        ) from None


def _typed_pointer(value: Any) -> str | None:
    """A library's buffer object (FlagGems' StridedBuffer: a tensor read with other strides, or from an
    offset), which the JIT takes as a pointer for its `data_ptr()` and `dtype`: written as a pointer at the
    same byte offset into the tensor it points into, made again, so that its alignment is the same."""
    data_ptr, dtype = getattr(value, "data_ptr", None), getattr(value, "dtype", None)
    if not callable(data_ptr) or not isinstance(dtype, torch.dtype):
        return None
    address = data_ptr()
    for inner in vars(value).values() if hasattr(value, "__dict__") else ():
        if not isinstance(inner, torch.Tensor):
            continue
        storage = inner.untyped_storage()
        if storage.data_ptr() <= address < storage.data_ptr() + max(storage.nbytes(), 1):
            offset = address - inner.data_ptr()
            return f"_Pointer({_tensor_expression(inner)}, {offset}, {dtype})"
    return None


def _function_code(lines: list[str], def_index: int) -> str:
    """The function's code as the script compiles it: its decorators become one `@_as_written` (the text
    Triton reads is the original's, from linecache), so its code object starts on the first decorator's line
    as the original's does, and its lines stay where they were."""
    body = textwrap.dedent("".join(lines[def_index:]))
    if def_index == 0:
        return body
    return "@_as_written\n" + "\n" * (def_index - 1) + body


def render(comp, label: str, shown_file: str) -> str:
    """The reproducer of one compilation's launch (comp.launch), as a script's text."""
    launch = comp.launch
    jit = launch.kernel.jit
    arguments, given = launch.args, dict(launch.kwargs)
    sources: KernelSources = kernel_sources(jit, (*arguments, *given.values()))
    imports = set(sources.imports)
    names = [*jit.arg_names, *(str(i) for i in range(len(jit.arg_names), len(arguments)))]
    if launch.kernel.inductor is not None:
        # Inductor's launcher passes the kernel's arguments that are not constexprs, then its grid's sizes;
        # the constexprs are the compilation's (its config's and triton_meta's)
        names = [p.name for p in jit.params if not p.is_constexpr]
        arguments = arguments[: len(names)]
        given = {**dict(comp.constexprs), **given}
        # and compiles with options of its own (debug as its asserts need, no overflow check, PDL...), which a
        # JIT launch takes as keywords: without them an H200 built another cubin from the same code
        given.update(
            (key, comp.metadata[key])
            for key in _INDUCTOR_COMPILE_OPTIONS
            if key in comp.metadata and key not in given
        )
    positional = [
        f"        {_argument(value, name, imports)},  # {name}"
        for name, value in zip(names, arguments)
    ]
    keywords = [f"        {k}={_argument(v, k, imports)}," for k, v in given.items()]
    grid = tuple(launch.grid or (1,))
    said = f"{label}, written by irscope from {shown_file}".replace('"', "'").replace("\\", "/")
    out: list[str] = [
        f'"""A reproducer of one launch of {said}.',
        "",
        f"Target {comp.target}, grid {grid}, {comp.num_warps} warps, {comp.num_stages} stages. Run it with Python",
        "(torch and Triton only), or open it in irscope: it compiles to the same code as the original launch.",
        'The kernel\'s source lines are kept as written, under their own file names and line numbers."""',
        "",
        "import linecache",
        "import os",
        "import types",
        "",
        "import torch",
        "import triton",
    ]
    out += [
        f"import {m}" for m in sorted(imports - {"torch", "triton", "os", "linecache", "types"})
    ]
    out += [
        "",
        "# file name -> (first line, text) of each piece of source the kernel's compile reads",
        "_SOURCES = {",
    ]
    by_file: dict[str, list] = {}
    for f in [*sources.functions, *sources.classes]:
        by_file.setdefault(f.file, []).append(f)
    for file, functions in by_file.items():
        out.append(f"    {file!r}: [")
        for f in sorted(functions, key=lambda f: f.first_line):
            out.append(f"        ({f.first_line}, {_string_block(''.join(f.lines))}),")
        out.append("    ],")
    out += [
        "}",
        "",
        "",
        *_SCRIPT_HELPERS.splitlines(),
    ]
    for module, values in sources.globals.items():
        if values:
            for name, expression in values.items():
                out.append(f"_namespace({module!r})[{name!r}] = {expression}")
    for c in sources.classes:
        if c.factory:  # after the functions: its methods may hold one of them
            continue
        code = textwrap.dedent("".join(c.lines))
        out.append(
            f"_define_class({c.module!r}, {c.file!r}, {c.first_line}, {c.qualname!r}, "
            f"{_string_block(code)}, {c.bound_as!r})"
        )
    local_classes = [c for c in sources.classes if c.factory]
    for f in sources.functions:
        code = _function_code(f.lines, f.def_index)
        call = (
            f"_define({f.module!r}, {f.file!r}, {f.first_line}, {f.qualname!r}, "
            f"{_string_block(code)}, {f.jit_class}, {f.jit_options!r}, {f.bound_as!r})"
        )
        # the kernel comes last (kernel_sources)
        out.append(f"kernel = {call}" if f is sources.functions[-1] else call)
    for c in local_classes:
        statement = c.qualname.rsplit(".", 1)[-1]
        code = (
            f"def {c.factory}({', '.join(c.closure)}):\n"
            + textwrap.indent(textwrap.dedent("".join(c.lines)), "    ")
            + f"    return {statement}\n"
        )
        closure = "{" + ", ".join(f"{k!r}: {v}" for k, v in c.closure.items()) + "}"
        out.append(
            f"_define_local_class({c.module!r}, {c.file!r}, {c.first_line}, {c.factory!r}, "
            f"{_string_block(code)}, {closure}, {c.name!r}, {c.bound_as!r})"
        )
    out += [
        "",
        "",
        'if __name__ == "__main__":',
        "    arguments = [",
        *positional,
        "    ]",
        "    options = dict(",
        *keywords,
        "    )",
        *(["    _inductors_ptxas()"] if launch.kernel.inductor is not None else []),
        "    triton.set_allocator(_scratch)",
        f"    kernel[{grid!r}](*arguments, **options)",
        "    for value in [*arguments, *options.values()]:",
        "        value = value.tensor if isinstance(value, _Pointer) else value",
        "        if isinstance(value, torch.Tensor):",
        "            print(f'{tuple(value.shape)} {value.dtype}: checksum {value.double().sum().item():.6g}')",
        "",
    ]
    return "\n".join(out)


def check_output(path: str) -> None:
    check_output_path(path, "the script", "repro.py")


def compare(original, reproduced) -> list[str]:
    """Each stage both compilations have, and where they differ: one line per stage."""
    out = []
    for stage in STAGES_COMPARED:
        if stage not in original.stage_names or stage not in reproduced.stage_names:
            continue
        a, b = original.stage(stage), reproduced.stage(stage)
        if a == b:
            out.append(f"{stage}: byte-identical ({len(a.encode())} bytes)")
            continue
        a_lines, b_lines = a.splitlines(), b.splitlines()
        at = next(
            (i for i, (x, y) in enumerate(zip(a_lines, b_lines)) if x != y),
            min(len(a_lines), len(b_lines)),
        )
        out.append(
            f"{stage}: DIFFERS from line {at + 1}: original {_line_at(a_lines, at)}, "
            f"reproducer {_line_at(b_lines, at)}"
        )
    return out


def _line_at(lines: list[str], index: int, width: int = 120) -> str:
    """One stage's line, cut to `width` and quoted as Python quotes it (its control characters written out, not
    sent to the terminal); '(end of text)' past its last line."""
    if index >= len(lines):
        return "(end of text)"
    text = lines[index].strip()
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def round_trip(comp, path: str) -> list[str]:
    """Open the reproducer at `path` as irscope opens any file, compile its one launch in an empty Triton
    cache (the cache's key leaves the file name out, so a hit could hide a difference), and compare each stage
    with `comp`'s: one line per stage."""
    # the script puts its pieces of the original files in linecache: this process goes on reading the files
    saved = dict(linecache.cache)
    try:
        with fresh_triton_cache():
            again = open_file(path, target=str(comp.target), compile_ahead=False)
            reproduced = again.compile_all()
    finally:
        linecache.cache.clear()
        linecache.cache.update(saved)
    if len(reproduced) != 1:
        raise IrscopeError(f"repro --check: {path} compiled {len(reproduced)} kernels, not one")
    return compare(comp, reproduced[0])


def run(ws, args) -> int:
    kernel = ws.kernel(args.kernel)
    comp = ws.compilation_at(kernel, args.config, args.launch)
    text = render(comp, ws.kernel_label(kernel), ws.user_file.shown)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    print(
        f"irscope: wrote {args.output}: {ws.kernel_label(kernel)}, grid {comp.launch.grid}",
        file=sys.stderr,
    )
    if not args.check:
        return 0
    lines = round_trip(comp, args.output)
    for line in lines:
        print(line)
    return 0 if lines and all("byte-identical" in line for line in lines) else 1
