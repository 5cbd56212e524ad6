"""`irscope step FILE`: run one program of a kernel in Triton's interpreter and print values at a line.

irscope step kernels/add.py --program 1 --break 26 --print offsets,mask
"""

from __future__ import annotations

import argparse
import sys

from irscope.analysis.recording.stepper import Stepper
from irscope.analysis.recording.text import stop_text
from irscope.base.errors import IrscopeError
from irscope.engine.compile.compilation import check_launch
from irscope.engine.recording import record_program


def parse_program(text: str) -> tuple[int, ...]:
    try:
        pid = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise IrscopeError(
            f"--program {text!r}: give 1 to 3 whole numbers separated by commas, like 1 or 1,0"
        ) from None
    if not 1 <= len(pid) <= 3:
        raise IrscopeError(f"--program {text!r}: give 1 to 3 numbers, like 1 or 1,0")
    return pid


def run(ws, args: argparse.Namespace) -> int:

    pid = parse_program(args.program)
    if args.hit < 1 or (args.hit != 1 and args.break_line is None):
        raise IrscopeError(
            f"--hit {args.hit}: give a count of 1 or more, with --break LINE "
            f"(the N-th time that line runs)"
        )
    kernel = ws.kernel(args.kernel)
    launches = ws.launches_of(kernel, args.config)
    if not 0 <= args.launch < len(launches):
        raise IrscopeError(
            f"--launch {args.launch}: {ws.user_file.shown} launches {kernel.name} "
            f"{len(launches)} time(s); choose 0 to {len(launches) - 1}"
        )
    launch = launches[args.launch]
    # the JIT's own check, as dump and report make it: a -D that names nothing is an error
    if ws.overrides:
        check_launch(launch, ws.target, given=ws.overrides.describe())
    if launch.origin != "captured":
        print(
            f"irscope: warning: {ws.user_file.shown} does not launch {kernel.name}; stepping it on stand-in "
            f"arguments from -D/--arg (small tensors), so its values mean little",
            file=sys.stderr,
        )
    rec = record_program(launch, pid)
    if not rec.steps:
        raise IrscopeError(
            f"the interpreter cannot run {kernel.name}: {rec.error or 'it ran no line'}"
        )
    stepper = Stepper(rec)
    if args.break_line is None:
        step = stepper.to_debugger_call() or stepper.end()
        if rec.debugger_steps:  # where pdb would have stopped it, as if --break LINE were given
            print(
                f"irscope: note: stopped at line {step.line}, where the program calls the debugger (as "
                f"--break {step.line} stops); give --break LINE to stop elsewhere",
                file=sys.stderr,
            )
    else:
        hits = [s for s in rec.steps if s.line == args.break_line and s.event == "line"]
        if len(hits) < args.hit:
            ran = ", ".join(str(line) for line in rec.lines)
            times = f"runs only {len(hits)} time(s)" if hits else "never runs"
            stopped = f" (the kernel stopped early: {rec.error})" if rec.error else ""
            raise IrscopeError(
                f"--break {args.break_line}: that line {times} in program "
                f"{args.program}{stopped}; lines it runs: {ran}"
            )
        step = hits[args.hit - 1]
    names = None
    if args.names:
        names = [n.strip() for n in args.names.split(",") if n.strip()]
        missing = [n for n in names if n not in step.locals]
        if missing:
            known = ", ".join(step.locals) or "none"
            raise IrscopeError(
                f"--print: {', '.join(missing)} not defined at line {step.line}; "
                f"defined there: {known}"
            )
    print(
        stop_text(
            rec,
            step,
            names,
            ws.source_text(kernel).splitlines(),
            ws.shown_path(kernel.file),
            args.full,
        )
    )
    if rec.error and step.event == "exception":
        print(
            f"irscope: {kernel.name} program ({args.program}) stopped: {rec.error}", file=sys.stderr
        )
        return 1
    return 0
