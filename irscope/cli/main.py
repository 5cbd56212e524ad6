"""Command line: `irscope FILE`, `irscope dump`, `irscope report`, `irscope step`, `irscope check`,
`irscope diff`, `irscope passes`, `irscope export`.

Thin on purpose: the command runs in a worker process (commands/run.py), which loads torch and Triton;
this process never does. Bad input ends in one line on
stderr that names the problem and the fix, and a non-zero exit; never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from irscope.base.errors import IrscopeError, guarded
from irscope.base.names import ALL_STAGES, target_name
from irscope.base.paths import check_kernel_path
from irscope.cli import check
from irscope.commands.arguments import COMMANDS, build_parser, parse
from irscope.worker.client import run_command


def main(argv: list[str] | None = None) -> int:
    """The front end: parse, check what can be checked without torch, and run the command in a worker
    process (irscope/worker) that runs the user's file; the terminal UI runs here."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] not in COMMANDS and (not argv[0].startswith("-") or argv[0] == "-m"):
        argv = ["tui", *argv]  # `irscope FILE` (or `irscope -m MODULE ...`) opens the terminal UI
    args = parse(parser, argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    return guarded(lambda: _front(args, argv))


def _front(args: argparse.Namespace, argv: list[str]) -> int:
    if args.command == "tui":
        return _tui(args)
    if args.command == "modules":  # check's own worker (commands/modules.py), not a user's command
        raise IrscopeError("unknown command 'modules'; see irscope --help for the commands")
    if args.command == "check":  # a worker per file, started by check itself
        _check_target(args.target)
        return check.run(args)
    stage = getattr(args, "stage", None) if args.command != "passes" else None
    if stage is not None and stage not in ALL_STAGES:
        raise IrscopeError(f"unknown stage '{stage}'; choose one of: {', '.join(ALL_STAGES)}")
    _check_target(args.target)
    if args.module_command:
        return run_command(argv, "-m " + " ".join(args.module_command))
    check_kernel_path(args.file)
    return run_command(argv, args.file)


def _check_target(name: str | None) -> None:
    if name is not None:
        try:
            target_name(name)
        except ValueError as err:
            raise IrscopeError(str(err)) from None


def _tui(args) -> int:
    """Open the app at once; the file runs in a worker process (torch and Triton load there, never here)."""
    path = args.file or "-m " + " ".join(args.module_command)
    _check_target(args.target)
    if not args.module_command:
        check_kernel_path(path)  # a bad path is one line on stderr, before the screen switches
    # deferred: Textual and the app load for the terminal UI only, not for `report` or `check`
    from irscope.tui.app import IrscopeApp
    from irscope.tui.driver import driver_for

    app = IrscopeApp(
        path,
        target=args.target,
        kernel=args.kernel,
        config=args.config,
        run_main=not args.no_run,
        defines=args.defines,
        arg_types=args.args,
        file_args=args.file_args,
        command=args.module_command,
    )
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
