"""Each command as the worker runs it: open the user's file (engine.session), then print what `dump`,
`report` or `diff` shows, or hand the opened file to `step`, `passes` or `export`. The front end
(cli/main.py) started this process with the same argv.
"""

from __future__ import annotations

import argparse
import json
import sys

from irscope.base.errors import IrscopeError, KernelCompileError, KernelsOutOfReach, guarded
from irscope.base.names import ALL_STAGES
from irscope.base.progress import tell
from irscope.commands import modules as modules_command
from irscope.commands import passes as passes_command
from irscope.commands import repro as repro_command
from irscope.commands import step as step_command
from irscope.commands.arguments import build_parser, parse
from irscope.commands.diff_format import format_diff
from irscope.commands.export.command import check_output
from irscope.commands.export.command import run as export
from irscope.engine.diff.sides import SideSpec, build_diff
from irscope.engine.measure import measure_all, why_not_measurable
from irscope.engine.overrides import Overrides
from irscope.engine.report import build_report, format_report
from irscope.engine.session import open_file
from irscope.engine.triton_compat.driver import resolve_target
from irscope.ir.sass_rows import sass_with_repaired_rows


def execute(argv: list[str]) -> int:
    """Run `dump` / `report` / `step` here, in this process: the worker's entry point (and the tests')."""
    return guarded(lambda: _run(parse(build_parser(), argv)))


def _run(args: argparse.Namespace) -> int:
    if args.command == "modules":  # check's worker for a package's modules (commands/modules.py)
        return modules_command.run(args)

    stage = getattr(args, "stage", None) if args.command != "passes" else None
    if stage is not None and stage not in ALL_STAGES:
        raise IrscopeError(f"unknown stage '{stage}'; choose one of: {', '.join(ALL_STAGES)}")
    resolve_target(args.target)  # reject a bad --target before running the user's file
    overrides = Overrides.parse(args.defines, args.args)
    if args.command == "diff":
        args.sides = (SideSpec.parse(args.left, "--left"), SideSpec.parse(args.right, "--right"))
    if args.command == "export":
        check_output(args.output)
    if args.command == "repro":
        repro_command.check_output(args.output)
    if getattr(args, "measure", False):  # refuse before the file runs
        why = why_not_measurable(args.target)
        if why:
            raise IrscopeError(
                f"--measure: {why}; leave out --measure for the predictions"
                + (", or --target" if args.target else "")
            )
    compiles = args.command in ("report", "diff", "passes", "export", "repro") or (
        args.command == "dump" and stage != "source"
    )
    try:
        ws = open_file(
            args.file,
            target=args.target,
            run_main=not args.no_run,
            overrides=overrides,
            compile_ahead=compiles,
            ahead_sass=args.command in ("report", "export", "repro") or stage == "sass",
            kernel_name=args.kernel,
            config=args.config,
            file_args=args.file_args,
            command=args.module_command,
        )
    except KernelsOutOfReach as err:
        # check over a folder: kernel factories, or kernels behind a library's decorator, named as unlaunched
        if not (args.command == "report" and args.json and getattr(args, "unlaunched_ok", False)):
            raise
        print(json.dumps(modules_command.unlaunched_report(err), indent=2))
        return 0
    if ws.run_warning:
        print(f"irscope: warning: {ws.run_warning}", file=sys.stderr)
    for note in ws.notes:
        print(f"irscope: note: {note}", file=sys.stderr)
    if args.command == "dump":
        return _dump(ws, args, stage)
    if args.command == "step":
        return step_command.run(ws, args)
    if args.command == "diff":
        return _diff(ws, args)
    if args.command == "passes":
        return passes_command.run(ws, args)
    if args.command == "export":
        return export(ws, args)
    if args.command == "repro":
        return repro_command.run(ws, args)
    return _report(ws, args)


def _dump(ws, args, stage: str | None) -> int:
    kernel = ws.kernel(args.kernel)
    comp = ws.compilation_at(kernel, args.config, args.launch)
    stage = stage or ("ptx" if comp.target.is_nvidia else "amdgcn")
    if stage != "source" and comp.failure is not None:
        f = comp.failure
        raise KernelCompileError(
            f.message
            + (f" (in: {f.source_line})" if f.source_line else "")
            + "; fix the kernel and run again",
            _shown(ws, f.file),
            f.line,
            f.source_line,
        )
    text = comp.stage(stage)
    if args.annotate:
        text = _annotated(comp, stage, text)
    # nvdisasm's rows can name the wrong lines: the source map's repaired ones
    elif stage == "sass":
        text = sass_with_repaired_rows(comp)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _annotated(comp, stage: str, text: str) -> str:
    """Each line prefixed with its user-file source line (`12 | ...`), or blanks where it has none."""
    sm = comp.source_map
    lines = text.splitlines()
    numbers = [sm.source_line(stage, i) for i in range(len(lines))]
    width = max((len(str(n)) for n in numbers if n is not None), default=1)
    blank = " " * width
    return "\n".join(
        f"{blank if n is None else str(n).rjust(width)} | {line}" for n, line in zip(numbers, lines)
    )


def _shown(ws, path: str | None) -> str | None:
    return ws.user_file.shown if path == ws.user_file.path else path


def _report(ws, args) -> int:
    # one specialization, a named one compiled now (workspace.compilation_at)
    if args.launch is not None:
        kernel = ws.kernel(args.kernel)
        comps = [ws.compilation_at(kernel, args.config, args.launch)]
        named = ws.named(kernel, config=args.config)
    # check: a file that launches nothing lists its kernels (not_launched, missing) and is no error
    elif args.unlaunched_ok and args.kernel is None and not modules_command.launched_any(ws):
        comps, named = [], []
    else:
        comps = ws.compile_all(kernel_name=args.kernel, config=args.config)
        named = ws.named_all(kernel_name=args.kernel, config=args.config)
    measured = {}
    if args.measure:
        done = measure_all(
            ws,
            comps,
            with_ncu=not args.no_ncu,
            run_main=not args.no_run,
            defines=args.defines,
            arg_types=args.args,
            progress=lambda text: tell(f"irscope: measuring: {text}"),
        )
        measured = {id(comp): m for comp, m in zip(comps, done)}
    doc = build_report(ws, comps, named, args.config)
    for entry, comp in zip(doc["kernels"], comps):
        if id(comp) in measured:
            entry["measured"] = measured[id(comp)].to_json()
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(format_report(doc))
    failed = [k for k in doc["kernels"] if k["error"]]
    for k in failed:
        err = k["error"]
        # the line is in that file
        shown = ws.shown_path(err["file"]) if err["file"] else ws.user_file.shown
        where = f"{shown}:{err['source_line']}: " if err["source_line"] else ""
        print(
            f"irscope: error: {where}{k['name']} failed to compile: {err['message']}",
            file=sys.stderr,
        )
    return KernelCompileError.exit_code if failed else 0


def _diff(ws, args) -> int:

    doc = build_diff(ws, args.kernel, *args.sides, args.stage)
    print(json.dumps(doc, indent=2) if args.json else format_diff(doc, all_lines=args.all))
    return 0
