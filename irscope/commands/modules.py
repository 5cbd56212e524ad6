"""`check`'s worker for the modules of a package that have no `__main__` code (cli/check.py): each is run
as its module (`python -m pkg.mod` semantics, as any command opens it), in turn, in one process, and
answered as `report --json` would answer for it. Run so, such a module only defines its kernels (the
package's code launches them when it is called), and one process per module would cost every module the
import of torch, Triton and the package again: FlagGems has over a thousand.

The answer is one JSON document: `{"files": [{"path": P, "report": DOC} | {"path": P, "error": LINE,
"traceback": TEXT, "code": N}]}`, in the order given.
"""

from __future__ import annotations

import argparse
import json
import sys

from irscope.base.errors import IrscopeError, KernelsOutOfReach, UserCodeError
from irscope.engine.report import build_report
from irscope.engine.session import open_file
from irscope.engine.workspace import Workspace


def run(args: argparse.Namespace) -> int:
    answers = [_one(path, args.target) for path in args.paths]
    sys.stdout.write(json.dumps({"files": answers}) + "\n")
    return 0


def _one(path: str, target: str | None) -> dict:
    try:
        ws = open_file(path, target=target, retarget=False)
        comps = ws.compile_all() if launched_any(ws) else []
        named = ws.named_all() if comps else []
        doc = build_report(ws, comps, named)
    # kernel factories, or kernels behind a library's decorator, nothing launched: named as unlaunched ones are
    except KernelsOutOfReach as err:
        return {"path": path, "report": unlaunched_report(err)}
    except UserCodeError as err:
        return {"path": path, "error": str(err), "traceback": err.user_traceback, "code": 3}
    except IrscopeError as err:
        return {"path": path, "error": str(err), "traceback": "", "code": err.exit_code}
    return {"path": path, "report": doc}


def unlaunched_report(err: KernelsOutOfReach) -> dict:
    """The report of a file whose @triton.jit functions irscope cannot take as kernels and whose run launched
    none: no compilation, each named at its line (check's "not launched in this run")."""
    return {
        "kernels": [],
        "not_launched": [{"name": name, "def_line": line} for name, line in err.kernels],
    }


def launched_any(ws: Workspace) -> bool:
    """Whether the run launched any kernel (or, for Inductor's kernel modules, defined one that compiles
    as Inductor would): when not, there is nothing to compile, and that is no error for `check`."""
    return bool(ws.launches) or any(k.inductor is not None for k in ws.kernels)
