"""`irscope passes FILE`: the compiler pass by pass, for one compilation.

irscope passes kernels/add.py --line 26          # the passes that changed line 26's IR
irscope passes kernels/add.py --pass tritongpu-coalesce --diff
"""

from __future__ import annotations

import argparse
import json
import sys

from irscope.base.errors import IrscopeError, KernelCompileError
from irscope.base.names import absent_stage
from irscope.engine.compile.passes import capture_passes, find_step
from irscope.ir.sourcemap import consecutive_runs


def _ranges(numbers: list[int]) -> str:
    return (
        ",".join(f"{a}" if b == a + 1 else f"{a}-{b - 1}" for a, b in consecutive_runs(numbers))
        or "-"
    )


def run(ws, args: argparse.Namespace) -> int:

    kernel = ws.kernel(args.kernel)
    comp = ws.compilation_at(kernel, args.config, args.launch)
    if comp.failure is not None:
        raise KernelCompileError(
            f"{comp.failure.message}; fix the kernel and run again",
            ws.user_file.shown,
            comp.failure.line,
            comp.failure.source_line,
        )
    absent = absent_stage(args.stage, comp.kernel.language) if args.stage else None
    if absent:
        raise IrscopeError(
            f"--stage {args.stage}: {kernel.name} is a {comp.kernel.language.capitalize()} kernel, "
            f"whose passes write no {args.stage} ({absent}); its first passes write ttgir"
        )
    steps = capture_passes(comp)
    if not steps:
        raise IrscopeError(
            f"this Triton printed no pass dumps for {kernel.name}; irscope passes needs Triton 3.6 "
            f"or newer (MLIR_ENABLE_DUMP and MLIR_DUMP_PATH)"
        )
    if args.pass_name:
        step = find_step(steps, args.pass_name)
        if args.diff:
            if step.before is None:
                raise IrscopeError(
                    f"pass {step.index} ({step.name}) is the first LLVM pass: the IR before it "
                    f"is not dumped; print its output without --diff"
                )
            print(
                f"// pass {step.index}: {step.title} ({step.stage}); {step.changed_lines} lines changed, "
                f"source lines {_ranges(step.source_lines)}"
            )
            for mark, text in step.diff:
                print(f"{mark} {text}")
        else:
            sys.stdout.write(step.after if step.after.endswith("\n") else step.after + "\n")
        return 0
    shown = [
        s
        for s in steps
        if (args.all or s.changed_lines)
        and (args.stage is None or s.stage == args.stage)
        and (args.line is None or args.line in s.source_lines)
    ]
    if args.json:
        print(
            json.dumps(
                {
                    "kernel": kernel.name,
                    "target": comp.target.name,
                    "passes_run": len(steps),
                    "passes": [s.to_json() for s in shown],
                },
                indent=2,
            )
        )
        return 0
    mlir = sum(1 for s in steps if s.stage != "llir")
    what = (
        f" that changed the IR of line {args.line}"
        if args.line is not None
        else ("" if args.all else " that changed the IR")
    )
    print(
        f"{kernel.name} on {comp.target.name}: {len(steps)} passes ran ({mlir} MLIR, {len(steps) - mlir} LLVM); "
        f"{len(shown)}{' shown' if args.all else ''}{what}"
        + (f" ({args.stage} only)" if args.stage else "")
        + ":"
    )
    print(f"  {'#':>4}  {'pass':<40} {'output':<13} {'lines changed':>13}  source lines")
    for s in shown:
        print(
            f"  {s.index:>4}  {s.name[:40]:<40} {s.stage:<13} {s.changed_lines:>13}  {_ranges(s.source_lines)}"
        )
    if args.line is not None and not shown:
        print(
            f"  (no pass changed an instruction of line {args.line}; is it a line that becomes code?)"
        )
    print(
        "irscope passes FILE --pass N --diff: what pass N changed; --pass N alone: the IR after it"
    )
    return 0
