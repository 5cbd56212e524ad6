"""`irscope export FILE -o kernel.html`: compile the file's launch and write the page (page.py)."""

from __future__ import annotations

import os

from irscope import __version__
from irscope.base.errors import IrscopeError, KernelCompileError
from irscope.commands.export.page import build_page
from irscope.engine.report import compilation_entry


def check_output(path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise IrscopeError(
            f"-o {path}: the folder {folder} does not exist; create it or write the page elsewhere"
        )
    if os.path.isdir(path):
        raise IrscopeError(f"-o {path} is a folder; give a file name, like -o kernel.html")


def run(ws, args) -> int:
    import importlib.metadata

    kernel = ws.kernel(args.kernel)
    comp = ws.compilation_at(kernel, args.config, args.launch)
    if comp.failure is not None:
        f = comp.failure
        raise KernelCompileError(
            f.message + "; fix the kernel and run again",
            ws.shown_path(f.file),
            f.line,
            f.source_line,
        )
    comp.prefetch_sass()
    versions = {"irscope": __version__, "Triton": importlib.metadata.version("triton")}
    page = build_page(comp, compilation_entry(ws, comp), versions, ws.device)
    try:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(page)
    except OSError as err:
        raise IrscopeError(
            f"-o {args.output}: cannot write it ({err.strerror}); choose another path"
        ) from None
    print(
        f"wrote {args.output} ({len(page) // 1024} KB): {kernel.name}, {', '.join(comp.stage_names)}"
    )
    return 0
