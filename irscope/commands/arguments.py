"""The command line's grammar: every command and its arguments. The front end parses with it (cli/main.py);
the worker parses the same argv again to run the command (commands/run.py). Imports neither torch nor Triton.
"""

from __future__ import annotations

import argparse

from irscope import __version__
from irscope.base.names import ALL_STAGES, TARGETS
from irscope.findings.model import SEVERITIES

COMMANDS = (
    "dump",
    "report",
    "tui",
    "step",
    "check",
    "diff",
    "passes",
    "export",
    "repro",
    "modules",
)
FILE_ARGS_HELP = (
    "FILE -- ARGS: everything after `--` goes to the file as its sys.argv[1:], e.g. -- --mode x"
)
PASS_STAGES = ("ttir", "ttgir", "llvm-dialect", "llir")  # the stages `passes` can show pass by pass
CHECK_FORMATS = ("text", "json", "sarif", "github")  # what `check --format` writes


MODULE_COMMANDS = (
    "dump",
    "report",
    "tui",
    "check",
)  # those that take `-m MODULE ARGS...` for a file
MODULE_HELP = (
    "-m MODULE ARGS...: in place of the file, run `python -m MODULE ARGS...` (e.g. -m pytest tests/test_x.py) "
    "and show every kernel it launches; everything after MODULE is its own"
)


def _common(parser: argparse.ArgumentParser, module: bool = False) -> None:
    parser.epilog = FILE_ARGS_HELP + (". " + MODULE_HELP if module else "")
    parser.add_argument(
        "file",
        nargs="?" if module else None,
        help="a Python file with @triton.jit kernels (a module of a package runs as `python -m` runs it)"
        + (", or -m MODULE ARGS..." if module else ""),
    )
    parser.add_argument(
        "--kernel", "-k", metavar="NAME", help="which kernel (default: the one the file launches)"
    )
    parser.add_argument(
        "--target",
        "-t",
        metavar="T",
        help=f"{', '.join(TARGETS)} (default: this machine's GPU, else sm_90)",
    )
    parser.add_argument(
        "--config",
        type=int,
        metavar="N",
        help="autotuned kernels: which config (default: the first its autotuner would try)",
    )
    parser.add_argument(
        "-D",
        dest="defines",
        action="append",
        metavar="NAME=VALUE",
        help="a constexpr or launch option (num_warps, num_stages), e.g. -D BLOCK_SIZE=1024",
    )
    parser.add_argument(
        "--arg",
        dest="args",
        action="append",
        metavar="NAME=TYPE",
        help="an argument's type or value when the file launches nothing, "
        "e.g. --arg x_ptr=*fp16 --arg n=4096",
    )
    parser.add_argument(
        "--no-run",
        action="store_true",
        help="do not run the file's __main__ code; take arguments from -D/--arg",
    )


def _launch_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--launch",
        type=int,
        default=0,
        metavar="N",
        help="when the file launches the kernel with different specializations, which one",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="irscope",
        description="See what the Triton compiler makes of a kernel: every stage from source to SASS, "
        "compiled exactly as the JIT would for the file's own launch. No GPU needed.",
        epilog="commands: irscope FILE [-- ARGS] | irscope dump FILE --stage ptx | irscope report FILE [--json] | "
        "irscope step FILE --program 1 --break LINE --print NAME,... | irscope check PATH... [--format sarif] | "
        "irscope diff FILE --left SPEC --right SPEC | irscope passes FILE [--line N] | "
        "irscope export FILE -o kernel.html",
    )
    parser.add_argument("--version", action="version", version=f"irscope {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    dump = sub.add_parser("dump", help="print one stage of a kernel to stdout")
    _common(dump, module=True)
    dump.add_argument(
        "--stage",
        "-s",
        metavar="STAGE",
        help=f"{', '.join(ALL_STAGES)} (default: ptx, or amdgcn for AMD targets)",
    )
    _launch_option(dump)
    dump.add_argument(
        "--annotate",
        action="store_true",
        help="prefix each IR line with the kernel source line it came from ('12 | ...')",
    )
    report = sub.add_parser(
        "report", help="summarize every compilation: specialization, registers, stages"
    )
    _common(report, module=True)
    report.add_argument("--json", action="store_true", help='one JSON document {"kernels": [...]}')
    report.add_argument(
        "--launch",
        type=int,
        metavar="N",
        help="only the kernel's N-th distinct specialization; past those the file's run compiled "
        "come those named, not compiled (a benchmark's later sizes, a config only a GPU's timing picks): N "
        "compiles that one",
    )
    report.add_argument(
        "--measure",
        action="store_true",
        help="with a GPU: time each launch, its bandwidth against the peak, and Nsight Compute's "
        "counters per source line beside the predictions",
    )
    report.add_argument(
        "--no-ncu", action="store_true", help="with --measure: time only, without Nsight Compute"
    )
    # `check`'s own: a file that launches nothing is a document with no compilation, not an error
    report.add_argument("--unlaunched-ok", action="store_true", help=argparse.SUPPRESS)
    diff = sub.add_parser(
        "diff", help="two compilations of one kernel, compared source line by source line"
    )
    _common(diff)
    diff.add_argument(
        "--left",
        required=True,
        metavar="SPEC",
        help="launch=N, config=N, target=T, NAME=VALUE (comma-separated), e.g. launch=0",
    )
    diff.add_argument(
        "--right", required=True, metavar="SPEC", help="the other side, e.g. launch=1,num_warps=8"
    )
    diff.add_argument(
        "--stage", "-s", metavar="STAGE", help="which stage to align (default: ptx, or amdgcn)"
    )
    diff.add_argument(
        "--all", action="store_true", help="show unchanged source lines and instructions too"
    )
    diff.add_argument("--json", action="store_true", help="one JSON document")
    export = sub.add_parser(
        "export", help="write one self-contained HTML page: source and every stage, linked"
    )
    _common(export)
    export.add_argument(
        "--output", "-o", required=True, metavar="FILE.html", help="where to write the page"
    )
    _launch_option(export)
    repro = sub.add_parser(
        "repro",
        help="write one launch as a standalone script (torch and Triton only) that compiles to the same code",
    )
    _common(repro)
    repro.add_argument(
        "--output", "-o", required=True, metavar="FILE.py", help="where to write the script"
    )
    _launch_option(repro)
    repro.add_argument(
        "--check",
        action="store_true",
        help="open the written script too and compare every stage with the original's, byte for byte",
    )
    tui = sub.add_parser("tui", help="open the terminal UI (what `irscope FILE` does)")
    _common(tui, module=True)
    _step_parser(sub)
    _passes_parser(sub)
    _check_parser(sub)
    # `check`'s worker for the modules of one package that have no __main__ code: each opened in turn, in
    # one process (commands/modules.py); not for users, so not listed
    modules = sub.add_parser("modules")
    modules.add_argument("paths", nargs="+")
    modules.add_argument("--target", "-t")
    return parser


def _step_parser(sub) -> None:
    step = sub.add_parser(
        "step", help="run one program in the interpreter and print values at a line"
    )
    _common(step)
    step.add_argument(
        "--program",
        "-p",
        default="0",
        metavar="X[,Y[,Z]]",
        help="which program of the launch's grid (default 0)",
    )
    step.add_argument(
        "--break",
        "-b",
        dest="break_line",
        type=int,
        metavar="LINE",
        help="stop the first time the program reaches this line of the file (default: the kernel's "
        "first breakpoint() the program reaches, else the end)",
    )
    step.add_argument(
        "--hit",
        type=int,
        default=1,
        metavar="N",
        help="with --break: stop at the N-th time the line runs (loops), default 1",
    )
    step.add_argument(
        "--print",
        dest="names",
        metavar="NAME,...",
        help="the locals to print (default: every local, summarized)",
    )
    step.add_argument("--full", action="store_true", help="print every element, not a summary")
    step.add_argument(
        "--launch",
        type=int,
        default=0,
        metavar="N",
        help="when the file launches the kernel several times, which launch (default 0)",
    )


def _passes_parser(sub) -> None:
    p = sub.add_parser("passes", help="the IR after every compiler pass: which passes changed what")
    _common(p)
    p.add_argument(
        "--stage",
        "-s",
        metavar="STAGE",
        choices=PASS_STAGES,
        help=f"only passes whose output is {', '.join(PASS_STAGES)}",
    )
    p.add_argument(
        "--line", type=int, metavar="N", help="only passes that changed the IR of source line N"
    )
    p.add_argument(
        "--pass",
        dest="pass_name",
        metavar="NAME",
        help="print the IR after this pass (its number, its name, or NAME#N for its N-th run)",
    )
    p.add_argument(
        "--diff", action="store_true", help="with --pass: what it changed, not the whole IR"
    )
    p.add_argument("--all", action="store_true", help="list the passes that changed nothing too")
    _launch_option(p)
    p.add_argument("--json", action="store_true", help="the list as one JSON document")


def _check_parser(sub) -> None:
    check = sub.add_parser(
        "check",
        help="findings of every kernel in files or directories, as compiler-style diagnostics (CI gate)",
        description="Open each file as `irscope report` does and print its findings. Exit 0 when nothing is at or "
        "above --fail-on, 1 when something is, 2 on bad input.",
    )
    check.epilog = (
        "PATH... -- ARGS: everything after `--` goes to every file as its sys.argv[1:], the same for each. "
        + MODULE_HELP
    )
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="a Python file, or a directory (every .py under it that defines a Triton kernel)",
    )
    check.add_argument(
        "--format",
        default="text",
        choices=CHECK_FORMATS,
        help="text (FILE:LINE:COL: SEVERITY[RULE] ...), json, sarif (SARIF 2.1.0), github "
        "(workflow annotations)",
    )
    check.add_argument(
        "--fail-on",
        default="warning",
        choices=(*SEVERITIES, "never"),
        help="the least severe finding that fails the check (default: warning)",
    )
    check.add_argument(
        "--baseline",
        metavar="FILE",
        help="accept the findings this file lists (see --write-baseline)",
    )
    check.add_argument(
        "--write-baseline",
        metavar="FILE",
        help="write every finding of this run to FILE and exit 0",
    )
    check.add_argument(
        "--jobs", "-j", type=int, default=1, metavar="N", help="files opened at once (processes)"
    )
    check.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATTERN",
        help="leave out files and folders whose path under a directory given, or whose name, matches "
        "this glob (again for more): --exclude _ascend --exclude 'tests/*'",
    )
    check.add_argument(
        "--target", "-t", metavar="T", help="compile for this target (default: as report does)"
    )


def _version() -> str:
    return __version__


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """irscope's own arguments, and the file's: everything after the first `--` (`args.file_args`), given to
    the file as its `sys.argv[1:]`; `check` gives the same ones to every file. With `-m MODULE` before any
    `--`, everything from MODULE on is the module's command line (`args.module_command`), as `python -m`
    takes it."""
    cut = argv.index("--") if "--" in argv else len(argv)
    args_m = [i for i, a in enumerate(argv[:cut]) if a == "-m"]
    if args_m:
        at = args_m[0]
        args = parser.parse_args(argv[:at])
        if at + 1 >= len(argv):
            parser.error("-m needs a module to run, e.g. -m pytest tests/test_x.py")
        args.module_command = argv[at + 1 :]
        args.file_args = []
        if args.command is not None and args.command not in MODULE_COMMANDS:
            parser.error(
                f"-m MODULE is for {', '.join(c for c in MODULE_COMMANDS if c != 'tui')} and the "
                f"terminal UI; `irscope {args.command}` takes a FILE"
            )
        if getattr(args, "file", None) or getattr(args, "paths", None):
            parser.error("give a FILE (or PATH...) or -m MODULE ARGS..., not both")
        return args
    args = parser.parse_args(argv[:cut])
    args.file_args = argv[cut + 1 :]
    args.module_command = None
    if getattr(args, "command", None) == "check" and not args.paths:
        parser.error(
            "give files or directories to check, or -m MODULE ARGS... (e.g. -m pytest tests)"
        )
    if args.command in MODULE_COMMANDS and args.command != "check" and args.file is None:
        parser.error("give a FILE, or -m MODULE ARGS... (e.g. -m pytest tests/test_x.py)")
    return args
