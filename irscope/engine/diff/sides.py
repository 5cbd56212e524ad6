"""Two compilations of one kernel, compared by source line (`irscope diff`).

Each side is a SPEC: `launch=N` (which distinct specialization the file launched), `config=N` (autotune
config), `target=T`, and `NAME=VALUE` for a constexpr, a launch option (`num_warps`) or a scalar argument
(`n_elements=4096`), applied to that launch's own arguments. The two stage texts are not diffed as text:
each source line's instructions on one side are compared with the same line's on the other, after
register numbers, SSA names and debug metadata are blanked out (they differ whenever anything above them
does, and say nothing about what changed)."""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any

from irscope.base.errors import IrscopeError
from irscope.base.names import absent_stage, target_name
from irscope.engine.compile.compilation import Compilation, compile_launch
from irscope.engine.diff.summary import access_rows, changes, side_entry
from irscope.engine.overrides import literal_value
from irscope.engine.triton_compat import bind_arguments
from irscope.engine.triton_compat.driver import resolve_target
from irscope.engine.workspace import Workspace
from irscope.ir.normal import normalized
from irscope.ir.sourcemap import LineKind


@dataclass
class SideSpec:
    text: str
    launch: int = 0
    config: int | None = None
    target: str | None = None
    defines: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, flag: str) -> "SideSpec":
        spec = cls(text)
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, sep, value = (s.strip() for s in part.partition("="))
            if not sep or not name or not value:
                raise IrscopeError(
                    f"{flag} {text!r}: '{part}' is not NAME=VALUE; write it like "
                    f"{flag} launch=1,target=sm_80,BLOCK_SIZE=512"
                )
            if name in ("launch", "config"):
                if not value.isdigit():
                    raise IrscopeError(
                        f"{flag} {text!r}: {name} takes a number (0, 1, …), not '{value}'"
                    )
                setattr(spec, name, int(value))
            elif name == "target":
                try:
                    spec.target = target_name(value)
                except ValueError as err:
                    raise IrscopeError(f"{flag}: {err}") from None
            else:
                spec.defines[name] = literal_value(value)
        return spec


def compile_side(ws: Workspace, kernel, spec: SideSpec, flag: str) -> Compilation:
    """The compilation one SPEC names: the file's own launch, recompiled with the SPEC's changes."""
    target = resolve_target(spec.target) if spec.target else ws.target
    comps = ws.compile(kernel, target, spec.config)
    named = ws.named(kernel, target, spec.config) if spec.launch >= len(comps) else []
    # past the compiled ones, those named, not compiled (compiled now)
    total = len(comps) + len(named)
    if not 0 <= spec.launch < total:
        raise IrscopeError(
            f"{flag} launch={spec.launch}: {kernel.name} has {total} distinct "
            f"specialization(s) in this file; choose launch=0 to {total - 1}"
        )
    comp = (
        comps[spec.launch]
        if spec.launch < len(comps)
        else ws.compile_named(named[spec.launch - len(comps)], target)
    )
    if not spec.defines:
        return comp
    jit = kernel.jit
    bound = bind_arguments(jit, comp.launch.args, comp.launch.kwargs)
    params = {p.name for p in jit.params}
    for name, value in spec.defines.items():
        if name in params:
            arg = bound.get(name)
            if (
                arg is not None
                and not isinstance(arg, (int, float, bool))
                and not isinstance(value, type(arg))
            ):
                raise IrscopeError(
                    f"{flag} {name}={value!r}: {name} is a tensor argument; only constexprs, "
                    f"scalar arguments and launch options (num_warps, num_stages) can be set"
                )
        bound[name] = value
    launch = dataclasses.replace(comp.launch, args=(), kwargs=bound)
    given = " ".join(f"-D {k}={v}" for k, v in spec.defines.items())
    return compile_launch(launch, target, ws.source_text(kernel), given=given)


# ---- per source line ------------------------------------------------------------------------------


def _instructions_by_line(comp: Compilation, stage: str) -> dict[int, list[int]]:
    """Source line -> 0-based indices of the stage's instruction lines whose innermost user frame is it;
    under 0, the instructions and directives that map to no line (layouts, `.maxntid`, module attributes:
    a change of num_warps or target shows there)."""
    out: dict[int, list[int]] = {}
    for index, line in enumerate(comp.source_map.lines(stage)):
        if line.kind is LineKind.INSTRUCTION and line.loc is not None:
            out.setdefault(line.loc.line, []).append(index)
        elif line.kind in (LineKind.INSTRUCTION, LineKind.DIRECTIVE) and line.loc is None:
            out.setdefault(0, []).append(index)
    return out


def line_rows(left: Compilation, right: Compilation, stage: str) -> list[dict[str, Any]]:
    """One row per source line that became code on either side: both sides' instructions, each marked
    ' ' (the same on the other side), '-' (only left) or '+' (only right). Lines that map to no source
    line come last, as source line None."""
    texts = (left.stage(stage).splitlines(), right.stage(stage).splitlines())
    by_line = (_instructions_by_line(left, stage), _instructions_by_line(right, stage))
    source = left.source_text.splitlines()
    rows = []
    for number in sorted(set(by_line[0]) | set(by_line[1]), key=lambda n: (n == 0, n)):
        sides = [[(i, texts[s][i].strip()) for i in by_line[s].get(number, [])] for s in (0, 1)]
        keys = [[normalized(t) for _, t in side] for side in sides]
        marks = [[" "] * len(sides[0]), [" "] * len(sides[1])]
        matcher = difflib.SequenceMatcher(None, keys[0], keys[1], autojunk=False)
        for tag, a0, a1, b0, b1 in matcher.get_opcodes():
            if tag != "equal":
                marks[0][a0:a1] = ["-"] * (a1 - a0)
                marks[1][b0:b1] = ["+"] * (b1 - b0)
        rows.append(
            {
                "source_line": number or None,
                "source": source[number - 1].strip() if 0 < number <= len(source) else "",
                "changed": any(m != " " for side in marks for m in side),
                "left": [
                    {"line": i + 1, "text": t, "mark": m} for (i, t), m in zip(sides[0], marks[0])
                ],
                "right": [
                    {"line": i + 1, "text": t, "mark": m} for (i, t), m in zip(sides[1], marks[1])
                ],
            }
        )
    return rows


def build_diff(
    ws: Workspace, kernel_name: str | None, left: SideSpec, right: SideSpec, stage: str | None
) -> dict[str, Any]:
    """The whole comparison as plain data (what `irscope diff --json` prints)."""

    kernel = ws.kernel(kernel_name)
    comps = [
        compile_side(ws, kernel, spec, flag)
        for spec, flag in ((left, "--left"), (right, "--right"))
    ]
    sides = [side_entry(comp, spec.text) for comp, spec in zip(comps, (left, right))]
    doc: dict[str, Any] = {
        "kernel": kernel.name,
        "file": ws.shown_path(kernel.file),
        "left": sides[0],
        "right": sides[1],
        "changes": changes(*sides),
        "stage": None,
        "lines": [],
        "accesses": access_rows(*sides) if all(c.ok for c in comps) else [],
    }
    if all(c.ok for c in comps):
        asked = stage
        stage = stage or ("ptx" if comps[0].target.is_nvidia else "amdgcn")
        for comp in comps:
            if stage not in comp.stage_names:
                said = f"--stage {stage}" if asked else f"the default stage, {stage},"
                absent = absent_stage(stage, comp.kernel.language)
                where = (
                    f"a {comp.kernel.language.capitalize()} kernel ({absent})"
                    if absent
                    else comp.target.name
                )
                raise IrscopeError(
                    f"{said} does not exist for {where}; pass --stage with one the two "
                    f"sides share: "
                    f"{', '.join(s for s in comp.stage_names if s in comps[0].stage_names)}"
                )
        doc["stage"] = stage
        doc["lines"] = line_rows(comps[0], comps[1], stage)
    return doc
