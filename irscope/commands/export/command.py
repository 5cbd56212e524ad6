"""`irscope export FILE -o kernel.html`: compile the file's launch and write the page (page.py)."""

from __future__ import annotations

from irscope import __version__
from irscope.base.errors import IrscopeError, KernelCompileError
from irscope.base.paths import check_output_path
from irscope.commands.export.page import build_page
from irscope.engine.report import compilation_entry


def check_output(path: str) -> None:
    check_output_path(path, "the page", "kernel.html")


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
