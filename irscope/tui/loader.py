"""The slow part of showing a kernel, run in a thread worker: open the file, compile, prepare stages.

Nothing here touches widgets; progress goes through a callback the app turns into UI updates.
"""

from __future__ import annotations

import os
import re
import textwrap
import traceback
from dataclasses import dataclass, field
from typing import Callable

from ..core.budget import CaptureBudget
from ..core.budget import Progress as Progress_
from ..core.compile import Compilation, compile_launch
from ..core.errors import IrscopeError, LaunchRejected, UserCodeError
from ..core.model import Launch
from ..core.session import Overrides, Workspace, open_file, resolve_target
from .highlight import StageText
from .linking import LinkIndex

Progress = Callable[[str, float], None]


@dataclass
class Shown:
    """One compilation, ready to show: its stages as text and its links."""

    comp: Compilation
    links: LinkIndex
    texts: dict[str, StageText] = field(default_factory=dict)       # inline debug annotations left out
    full_texts: dict[str, StageText] = field(default_factory=dict)  # exactly as the compiler wrote them
    marks: dict[str, dict[int, set[str]]] = field(default_factory=dict)  # stage -> line -> memory marks

    @property
    def stages(self) -> tuple[str, ...]:
        return self.comp.stage_names


@dataclass
class OpenFailure:
    """Opening the file failed: the message, and the user's traceback when their code raised."""

    message: str
    detail: str = ""
    line: int | None = None


def capture_budget(path: str, progress: Progress) -> CaptureBudget:
    """The run's budget, reporting "captured N launches of M kernels · running line L" as the file runs."""
    def show(p: Progress_) -> None:
        line = f" · running line {p.line}" if p.line else ""
        progress(f"captured {p.launches} launch(es) of {p.kernels} kernel(s){line} · x: go on with these",
                 0.1 + 0.35 * min(1.0, p.seconds / 30))
    return CaptureBudget(os.path.abspath(path), on_progress=show)


def open_workspace(path: str, target: str | None, run_main: bool, defines: list[str], arg_types: list[str],
                   kernel: str | None, config: int | None, progress: Progress,
                   budget: CaptureBudget | None = None) -> tuple[Workspace, list[Compilation]]:
    overrides = Overrides.parse(defines, arg_types)
    progress(f"running {os.path.basename(path)} to capture its launches", 0.1)
    ws = open_file(path, target=target, run_main=run_main, overrides=overrides, kernel_name=kernel, config=config,
                   budget=budget)
    progress("compiling", 0.5)
    comps = ws.compile_all(kernel_name=kernel, config=config)
    return ws, comps


def describe_open_error(exc: BaseException) -> OpenFailure:
    if isinstance(exc, UserCodeError):
        line = None
        for text in reversed(exc.user_traceback.splitlines()):
            text = text.strip()
            if text.startswith("File ") and ", line " in text:
                try:
                    line = int(text.split(", line ")[1].split(",")[0])
                except ValueError:
                    pass
                break
        return OpenFailure(str(exc), exc.user_traceback, line)
    if isinstance(exc, IrscopeError):
        found = re.search(r"\.py:(\d+):", str(exc))  # "file.py:12: has a syntax error: ..."
        return OpenFailure(str(exc), "", int(found.group(1)) if found else None)
    return OpenFailure(f"internal error: {type(exc).__name__}: {exc}", traceback.format_exc())


def prepare(comp: Compilation, progress: Progress) -> Shown:
    """Load every stage (SASS is disassembled here), count resources, and build the links."""
    shown = Shown(comp, LinkIndex(comp))
    stages = comp.stage_names
    for n, stage in enumerate(stages):
        progress(f"loading {stage}", 0.6 + 0.35 * n / len(stages))
        if stage == "source" or comp.ok:
            text = comp.stage(stage)
            shown.full_texts[stage] = StageText(stage, text)
            shown.texts[stage] = (StageText(stage, text, strip_debug=True) if stage in ("ttir", "ttgir", "llir", "sass")
                                  else shown.full_texts[stage])
            shown.links.stage(stage)
        else:
            shown.texts[stage] = shown.full_texts[stage] = StageText("error", failure_text(comp))
    if comp.ok:
        _ = comp.resources
        from ..core.analysis.marks import line_marks

        for stage in stages:
            shown.marks[stage] = line_marks(comp, stage)
    shown.links.colour_slot(0)
    progress("ready", 1.0)
    return shown


def failure_text(comp: Compilation) -> str:
    """What an IR pane says when there is no IR: the compiler's message, wrapped for narrow panes."""
    f = comp.failure
    where = f"line {f.line}: {f.source_line}" if f and f.line else "an unknown line"
    parts = [f"{comp.kernel.name} did not compile for {comp.target}.", f.message if f else "", f"At {where}",
             "The source pane marks the line. Fix the file, then press r to reload."]
    return "\n\n".join(textwrap.fill(part, 34) for part in parts) + "\n"


def recompile(comp: Compilation, *, target: str | None = None, defines: dict | None = None) -> Compilation:
    """The same launch compiled for another target, or with constexprs / launch options changed."""
    launch = comp.launch
    if defines:
        launch = relaunch(launch, defines)
    resolved = resolve_target(target) if target else comp.target
    try:
        return compile_launch(launch, resolved, comp.source_text)
    except (LaunchRejected, AssertionError, ValueError, TypeError) as exc:
        if not defines:
            raise
        asked = ", ".join(f"{name}={value!r}" for name, value in defines.items())
        reason = exc.reason if isinstance(exc, LaunchRejected) else exc
        raise IrscopeError(f"Triton refused {asked}: {reason}; press e to try other values") from None


def relaunch(launch: Launch, defines: dict) -> Launch:
    from ..core.triton_compat import bind_arguments

    bound = bind_arguments(launch.kernel.jit, launch.args, launch.kwargs)
    bound.update(defines)
    return Launch(launch.kernel, (), bound, launch.grid, launch.origin, launch.autotune_index,
                  launch.autotune_count, guesses={k: v for k, v in launch.guesses.items() if k not in defines})
