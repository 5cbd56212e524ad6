"""What a run did not reach: the opened file's kernels it did not launch, each with why and how to see it.

irscope shows the launches the file's own run made. A kernel the file defines but did not launch in this run
is not shown, and that is said, never left out silently: in the report, the JSON (`missing`), and the TUI's
header and picker. Why depends on how the run ended: the capture budget stopped it (the line it was on is
known), the file raised, or the run ended and simply did not call the kernel (a condition not met, or an
argument the file's command line would give). A @triton.jit helper that another kernel of the file calls is
not a launch of its own, and is not listed. A run stopped or ended by an error before it reached a kernel's
`def` has no kernel object for it: such kernels are found in the file's text (`_jit_functions`) and listed too.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass

from irscope.base.model import Kernel, Launch


@dataclass
class Missing:
    kernel: str
    line: int  # its `def`
    # how the run ended: "stopped" (by the capture budget), "raised", or "ended" by itself
    ended: str
    reason: str  # why this run did not launch it
    how: str  # what would show it
    file: str | None = None  # the file that defines it, when not the opened one (`-m MODULE`)

    def to_json(self) -> dict:
        return asdict(self)


def missing_kernels(
    kernels: list[Kernel],
    launches: list[Launch],
    path: str,
    *,
    ran: bool,
    stopped_line: int | None = None,
    stopped_cause: str = "",
    raised: str | None = None,
) -> list[Missing]:
    """The file's own kernels (defined in `path`) with no launch in this run, helpers left out.

    `ran`: the file's __main__ code ran (not --no-run). `stopped_line`/`stopped_cause`: where and why the
    capture budget stopped it; `raised`: the exception (and its line) it ended with, if it did."""
    launched = {id(launch.kernel) for launch in launches}
    own = [k for k in kernels if k.file == path and k.inductor is None]
    unlaunched = [k for k in own if id(k) not in launched]
    # the run ended before it defined these (stopped, or raised): they are only in the file's text
    undefined, called = {}, set()
    if ran and (stopped_cause or raised):
        defs, called = _jit_functions(_file_text(path))
        known = {k.name for k in own}
        undefined = {name: line for name, line in defs.items() if name not in known}
    if not (unlaunched or undefined) or not ran:
        return []
    helpers = _called_by_others(own) | called
    pick = "--kernel {name} --no-run with -D/--arg gives its arguments by hand"
    if stopped_cause:
        at = f" at line {stopped_line}" if stopped_line else ""
        ended, reason = (
            "stopped",
            f"the run was stopped{at} ({stopped_cause}) before it launched this kernel",
        )
        how = f"IRSCOPE_CAPTURE_QUIET / IRSCOPE_CAPTURE_LIMIT (seconds) let the run go on longer; or {pick}"
    elif raised:
        ended, reason = "raised", f"the file raised {raised} before it launched this kernel"
        how = f"fix that error, or give the file's arguments after `--` (irscope FILE -- ARGS); or {pick}"
    else:
        ended = "ended"
        reason = "the file's run ended without launching it (not called, or only under a condition not met)"
        how = f"give the file's arguments after `--` (irscope FILE -- ARGS) if they choose what runs; or {pick}"
    return [
        Missing(k.name, k.line, ended, reason, how.format(name=k.name))
        for k in unlaunched
        if k.name not in helpers
    ] + [
        Missing(
            name,
            line,
            ended,
            reason.replace("launched this kernel", "reached its def"),
            how.format(name=name),
        )
        for name, line in undefined.items()
        if name not in helpers
    ]


def _jit_functions(text: str) -> tuple[dict[str, int], set[str]]:
    """The functions `text` decorates with a `jit` (`@triton.jit`, `@gluon.jit`, `@jit`, called or not; under an
    autotune or heuristics too), each with its `def` line: the kernels a file defines, found without running it;
    and the names those functions call or pass on (helpers, and the partitions a kernel hands to
    `gl.warp_specialize`: not launched alone)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}, set()
    jitted = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and any(map(_is_jit, node.decorator_list))
    ]
    # a jit function in a class body is a method of a Gluon aggregate (`WGMMA.initialize`): a kernel calls it
    # through the class it is given, nobody launches it
    methods = {
        id(member)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for member in node.body
        if isinstance(member, ast.FunctionDef)
    }
    called = {
        name.id
        for node in jitted
        for name in ast.walk(ast.Module(body=node.body, type_ignores=[]))
        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load)
    }
    return {node.name: node.lineno for node in jitted if id(node) not in methods}, called


def jit_definitions(text: str) -> list[tuple[str, int]]:
    """Every `jit`-decorated function `text` defines, at module level or inside a function (not in a class
    body), with its `def` line, in source order."""
    return sorted(_jit_functions(text)[0].items(), key=lambda item: item[1])


def decorator_name(decorator: ast.expr) -> str:
    """The last name of a decorator, called or not: `jit` for `@triton.jit(...)`, `autotune`, ..."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


def _is_jit(decorator: ast.expr) -> bool:
    return decorator_name(decorator) == "jit"


def _file_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8-sig", "replace")
    except OSError:
        return ""


def missing_in_modules(
    kernels: list[Kernel],
    launches: list[Launch],
    *,
    stopped_cause: str = "",
    raised: str | None = None,
) -> list[Missing]:
    """`-m MODULE` (a test session): in each file that defines a kernel the run launched, the kernels it
    did not launch, helpers left out; each names its file."""
    launched = {id(launch.kernel) for launch in launches}
    files = list(dict.fromkeys(k.file for k in kernels if id(k) in launched and k.inductor is None))
    if stopped_cause:
        ended, reason = (
            "stopped",
            f"the run was stopped ({stopped_cause}) before it launched this kernel",
        )
        how = "IRSCOPE_CAPTURE_QUIET / IRSCOPE_CAPTURE_LIMIT (seconds) let the run go on longer"
    elif raised:
        ended, reason = "raised", f"the run raised {raised} before it launched this kernel"
        how = "fix that error"
    else:
        ended, reason = "ended", "the run ended without launching it"
        how = "run the tests or the script that call it"
    out = []
    for path in files:
        own = [k for k in kernels if k.file == path and k.inductor is None]
        helpers = _called_by_others(own)
        out += [
            Missing(k.name, k.line, ended, reason, how, file=path)
            for k in own
            if id(k) not in launched and k.name not in helpers
        ]
    return out


def _called_by_others(kernels: list[Kernel]) -> set[str]:
    """Names of the kernels that another kernel's source calls or passes on (@triton.jit helpers, a Gluon
    kernel's `warp_specialize` partitions): not launched alone."""
    called = set()
    for kernel in kernels:
        for other in kernels:
            if other is not kernel and re.search(
                rf"(?<![\w.]){re.escape(kernel.name)}(?!\w)", _source(other)
            ):
                called.add(kernel.name)
                break
    return called


def _source(kernel: Kernel) -> str:
    return getattr(kernel.jit, "src", "") or ""
