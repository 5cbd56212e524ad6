"""Run the user's file and record every kernel launch its own `__main__` code makes.

With no GPU, Triton's driver is replaced by a CPU stand-in so that tutorial-style files
(`DEVICE = triton.runtime.driver.active.get_active_torch_device()`) run unchanged on CPU tensors,
and every launch runs in Triton's interpreter. With a GPU, launches run for real.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import traceback
import types
from dataclasses import dataclass, field
from typing import Callable

from .discover import UserFile
from .triton_compat import RawLaunch, Target, capture_patches, install_cpu_driver


@dataclass
class RunResult:
    namespace: dict
    launches: list[RawLaunch] = field(default_factory=list)
    error: BaseException | None = None
    user_traceback: str = ""
    output: str = ""


def run_user_file(user_file: UserFile, *, run_main: bool, use_interpreter: bool, target: Target,
                  on_launch: Callable[[RawLaunch], None] | None = None) -> RunResult:
    """Execute the file as `__main__` (or as a plain module when `run_main` is false).

    `on_launch` hears of each launch as it is captured, before it runs."""
    if use_interpreter:
        install_cpu_driver(target)
    module_name = "__main__" if run_main else "irscope_user_module"
    module = types.ModuleType(module_name)
    module.__file__ = user_file.path
    namespace = module.__dict__
    namespace["__builtins__"] = __builtins__
    result = RunResult(namespace)

    def record(launch: RawLaunch) -> None:
        result.launches.append(launch)
        if on_launch is not None:
            on_launch(launch)

    output = io.StringIO()
    saved_main = sys.modules.get("__main__")
    saved_argv = sys.argv[:]
    saved_path = sys.path[:]
    sys.modules[module_name] = module
    sys.argv = [user_file.path]
    sys.path.insert(0, os.path.dirname(user_file.path))
    try:
        with capture_patches(record, use_interpreter), contextlib.redirect_stdout(output):
            exec(user_file.code, namespace)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            result.error = exc
            result.user_traceback = f"SystemExit: {exc.code}"
    except BaseException as exc:  # the user's code may raise anything; KeyboardInterrupt passes through
        if isinstance(exc, KeyboardInterrupt):
            raise
        result.error = exc
        result.user_traceback = user_traceback_tail(exc, user_file.path)
    finally:
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        if module_name != "__main__":
            sys.modules.pop(module_name, None)
        sys.argv = saved_argv
        sys.path[:] = saved_path
    result.output = output.getvalue()
    return result


def user_traceback_tail(exc: BaseException, path: str, limit: int = 6) -> str:
    """The last frames of a traceback, from the user's file onwards (irscope's own frames dropped)."""
    frames = traceback.extract_tb(exc.__traceback__)
    first_user = next((i for i, f in enumerate(frames) if f.filename == path), 0)
    frames = frames[first_user:]
    lines = traceback.format_list(frames[-limit:])
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()
