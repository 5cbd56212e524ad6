"""Command line: `irscope FILE`, `irscope dump`, `irscope report`, `irscope step`, `irscope check`,
`irscope diff`, `irscope passes`, `irscope export`.

Thin on purpose: everything it shows comes from `irscope.core`. Bad input ends in one line on
stderr that names the problem and the fix, and a non-zero exit; never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from irscope.base.errors import IrscopeError, KernelCompileError, UserCodeError
from irscope.base.names import ALL_STAGES, TARGETS, target_name
from irscope.base.paths import check_kernel_path

COMMANDS = ("dump", "report", "tui", "step", "check", "diff", "passes", "export")
FILE_ARGS_HELP = "FILE -- ARGS: everything after `--` goes to the file as its sys.argv[1:], e.g. -- --mode x"


def _common(parser: argparse.ArgumentParser) -> None:
    parser.epilog = FILE_ARGS_HELP
    parser.add_argument("file", help="a Python file with @triton.jit kernels")
    parser.add_argument("--kernel", "-k", metavar="NAME", help="which kernel (default: the one the file launches)")
    parser.add_argument("--target", "-t", metavar="T",
                        help=f"{', '.join(TARGETS)} (default: this machine's GPU, else sm_90)")
    parser.add_argument("--config", type=int, metavar="N",
                        help="autotuned kernels: which config (default: the first its autotuner would try)")
    parser.add_argument("-D", dest="defines", action="append", metavar="NAME=VALUE",
                        help="a constexpr or launch option (num_warps, num_stages), e.g. -D BLOCK_SIZE=1024")
    parser.add_argument("--arg", dest="args", action="append", metavar="NAME=TYPE",
                        help="an argument's type or value when the file launches nothing, "
                             "e.g. --arg x_ptr=*fp16 --arg n=4096")
    parser.add_argument("--no-run", action="store_true",
                        help="do not run the file's __main__ code; take arguments from -D/--arg")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="irscope",
        description="See what the Triton compiler makes of a kernel: every stage from source to SASS, "
                    "compiled exactly as the JIT would for the file's own launch. No GPU needed.",
        epilog="commands: irscope FILE [-- ARGS] | irscope dump FILE --stage ptx | irscope report FILE [--json] | "
               "irscope step FILE --program 1 --break LINE --print NAME,... | irscope check PATH... [--format sarif] | "
               "irscope diff FILE --left SPEC --right SPEC | irscope passes FILE [--line N] | "
               "irscope export FILE -o kernel.html")
    parser.add_argument("--version", action="version", version=f"irscope {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    dump = sub.add_parser("dump", help="print one stage of a kernel to stdout")
    _common(dump)
    dump.add_argument("--stage", "-s", metavar="STAGE",
                      help=f"{', '.join(ALL_STAGES)} (default: ptx, or amdgcn for AMD targets)")
    dump.add_argument("--launch", type=int, default=0, metavar="N",
                      help="when the file launches the kernel with different specializations, which one")
    dump.add_argument("--annotate", action="store_true",
                      help="prefix each IR line with the kernel source line it came from ('12 | ...')")
    report = sub.add_parser("report", help="summarize every compilation: specialization, registers, stages")
    _common(report)
    report.add_argument("--json", action="store_true", help="one JSON document {\"kernels\": [...]}")
    report.add_argument("--measure", action="store_true",
                        help="with a GPU: time each launch, its bandwidth against the peak, and Nsight Compute's "
                             "counters per source line beside the predictions")
    report.add_argument("--no-ncu", action="store_true", help="with --measure: time only, without Nsight Compute")
    diff = sub.add_parser("diff", help="two compilations of one kernel, compared source line by source line")
    _common(diff)
    diff.add_argument("--left", required=True, metavar="SPEC",
                      help="launch=N, config=N, target=T, NAME=VALUE (comma-separated), e.g. launch=0")
    diff.add_argument("--right", required=True, metavar="SPEC", help="the other side, e.g. launch=1,num_warps=8")
    diff.add_argument("--stage", "-s", metavar="STAGE", help="which stage to align (default: ptx, or amdgcn)")
    diff.add_argument("--all", action="store_true", help="show unchanged source lines and instructions too")
    diff.add_argument("--json", action="store_true", help="one JSON document")
    export = sub.add_parser("export", help="write one self-contained HTML page: source and every stage, linked")
    _common(export)
    export.add_argument("--output", "-o", required=True, metavar="FILE.html", help="where to write the page")
    export.add_argument("--launch", type=int, default=0, metavar="N",
                        help="when the file launches the kernel with different specializations, which one")
    tui = sub.add_parser("tui", help="open the terminal UI (what `irscope FILE` does)")
    _common(tui)
    from irscope.commands import step as step_command
    step_command.add_parser(sub, _common)
    from irscope.commands import passes as passes_command
    passes_command.add_parser(sub, _common)
    from irscope.cli import check
    check.add_parser(sub)
    return parser


def _version() -> str:
    from irscope import __version__
    return __version__


def main(argv: list[str] | None = None) -> int:
    """The front end: parse, check what can be checked without torch, and run the command in a worker
    process (irscope/worker) that runs the user's file; the terminal UI runs here."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] not in COMMANDS and not argv[0].startswith("-"):
        argv = ["tui", *argv]  # `irscope FILE` opens the terminal UI
    args = parse(parser, argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    return _guarded(lambda: _front(args, argv))


def execute(argv: list[str]) -> int:
    """Run `dump` / `report` / `step` here, in this process: the worker's entry point (and the tests')."""
    return _guarded(lambda: _run(parse(build_parser(), argv)))


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """irscope's own arguments, and the file's: everything after the first `--` (`args.file_args`), given to
    the file as its `sys.argv[1:]`; `check` gives the same ones to every file."""
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.file_args = argv[cut + 1:]
    return args


def _guarded(work) -> int:
    try:
        return work()
    except UserCodeError as err:
        print(f"irscope: error: {err}", file=sys.stderr)
        for line in err.user_traceback.splitlines():
            print(f"  your code | {line}", file=sys.stderr)
        return err.exit_code
    except IrscopeError as err:
        print(f"irscope: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        sys.stderr.close()  # `irscope dump ... | head`: the reader left; that is fine
        return 0
    except Exception as err:  # pragma: no cover - a bug in irscope itself
        if os.environ.get("IRSCOPE_DEBUG"):
            raise
        print(f"irscope: internal error: {type(err).__name__}: {err} (set IRSCOPE_DEBUG=1 for a traceback "
              f"and please report it)", file=sys.stderr)
        return 70


def _front(args: argparse.Namespace, argv: list[str]) -> int:
    if args.command == "tui":
        return _tui(args)
    if args.command == "check":  # a worker per file, started by check itself
        from irscope.cli import check
        _check_target(args.target)
        return check.run(args)
    stage = getattr(args, "stage", None) if args.command != "passes" else None
    if stage is not None and stage not in ALL_STAGES:
        raise IrscopeError(f"unknown stage '{stage}'; choose one of: {', '.join(ALL_STAGES)}")
    _check_target(args.target)
    check_kernel_path(args.file)
    if os.environ.get("IRSCOPE_IN_PROCESS") == "1":  # debugging irscope itself: no worker
        return _run(args)
    from irscope.worker.client import run_command
    return run_command(argv, args.file)


def _check_target(name: str | None) -> None:
    if name is not None:
        try:
            target_name(name)
        except ValueError as err:
            raise IrscopeError(str(err)) from None


def _run(args: argparse.Namespace) -> int:
    from irscope.engine.overrides import Overrides
    from irscope.engine.session import open_file, resolve_target

    stage = getattr(args, "stage", None) if args.command != "passes" else None
    if stage is not None and stage not in ALL_STAGES:
        raise IrscopeError(f"unknown stage '{stage}'; choose one of: {', '.join(ALL_STAGES)}")
    resolve_target(args.target)  # reject a bad --target before running the user's file
    overrides = Overrides.parse(args.defines, args.args)
    if args.command == "diff":
        from irscope.engine.diff.sides import SideSpec
        args.sides = (SideSpec.parse(args.left, "--left"), SideSpec.parse(args.right, "--right"))
    if args.command == "export":
        from irscope.commands.export.command import check_output
        check_output(args.output)
    if getattr(args, "measure", False):  # refuse before the file runs
        from irscope.engine.measure import why_not_measurable
        why = why_not_measurable(args.target)
        if why:
            raise IrscopeError(f"--measure: {why}; leave out --measure for the predictions"
                               + (", or --target" if args.target else ""))
    compiles = args.command in ("report", "diff", "passes", "export") or (args.command == "dump" and stage != "source")
    ws = open_file(args.file, target=args.target, run_main=not args.no_run, overrides=overrides,
                   compile_ahead=compiles, ahead_sass=args.command in ("report", "export") or stage == "sass",
                   kernel_name=args.kernel, config=args.config, file_args=args.file_args)
    if ws.run_warning:
        print(f"irscope: warning: {ws.run_warning}", file=sys.stderr)
    for note in ws.notes:
        print(f"irscope: note: {note}", file=sys.stderr)
    if args.command == "dump":
        return _dump(ws, args, stage)
    if args.command == "step":
        from irscope.commands import step as step_command
        return step_command.run(ws, args)
    if args.command == "diff":
        return _diff(ws, args)
    if args.command == "passes":
        from irscope.commands import passes as passes_command
        return passes_command.run(ws, args)
    if args.command == "export":
        from irscope.commands.export.command import run as export
        return export(ws, args)
    return _report(ws, args)


def _tui(args) -> int:
    """Open the app at once; the file runs in a worker process (torch and Triton load there, never here)."""
    path = args.file
    _check_target(args.target)
    check_kernel_path(path)  # a bad path is one line on stderr, before the screen switches
    from irscope.tui.app import IrscopeApp
    from irscope.tui.driver import driver_for

    app = IrscopeApp(path, target=args.target, kernel=args.kernel, config=args.config,
                     run_main=not args.no_run, defines=args.defines, arg_types=args.args, file_args=args.file_args)
    app.driver_class = driver_for(app.driver_class)  # `q` does not wait out Textual's input polling
    try:
        # On a loop of its own, not asyncio.run: that joins every thread worker before it returns, so a
        # `q` during a compile or an analysis waited for it. The process ends below without them.
        app.run(loop=asyncio.new_event_loop())
    finally:
        app.close_session()  # the worker, its compile children and its files
    code = app.return_code or 0
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _dump(ws, args, stage: str | None) -> int:
    kernel = ws.kernel(args.kernel)
    comp = ws.compilation_at(kernel, args.config, args.launch)
    stage = stage or ("ptx" if comp.target.is_nvidia else "amdgcn")
    if stage != "source" and comp.failure is not None:
        f = comp.failure
        raise KernelCompileError(f.message + (f" (in: {f.source_line})" if f.source_line else "")
                                 + "; fix the kernel and run again", _shown(ws, f.file), f.line, f.source_line)
    text = comp.stage(stage)
    if args.annotate:
        text = _annotated(comp, stage, text)
    elif stage == "sass":  # nvdisasm's rows can name the wrong lines: the source map's repaired ones
        from irscope.ir.sass_rows import sass_with_repaired_rows
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
    return "\n".join(f"{blank if n is None else str(n).rjust(width)} | {line}" for n, line in zip(numbers, lines))


def _shown(ws, path: str | None) -> str | None:
    return ws.user_file.shown if path == ws.user_file.path else path


def _report(ws, args) -> int:
    from irscope.engine.report import build_report, format_report

    comps = ws.compile_all(kernel_name=args.kernel, config=args.config)
    measured = {}
    if args.measure:
        from irscope.engine.measure import measure_all
        from irscope.base.progress import tell
        done = measure_all(ws, comps, with_ncu=not args.no_ncu, run_main=not args.no_run, defines=args.defines,
                           arg_types=args.args, progress=lambda text: tell(f"irscope: measuring: {text}"))
        measured = {id(comp): m for comp, m in zip(comps, done)}
    doc = build_report(ws, comps)
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
        shown = ws.shown_path(err["file"]) if err["file"] else ws.user_file.shown  # the line is in that file
        where = f"{shown}:{err['source_line']}: " if err["source_line"] else ""
        print(f"irscope: error: {where}{k['name']} failed to compile: {err['message']}", file=sys.stderr)
    return KernelCompileError.exit_code if failed else 0


def _diff(ws, args) -> int:
    from irscope.engine.diff.sides import build_diff
    from irscope.commands.diff_format import format_diff

    doc = build_diff(ws, args.kernel, *args.sides, args.stage)
    print(json.dumps(doc, indent=2) if args.json else format_diff(doc, all_lines=args.all))
    return 0

