"""Errors meant for the person at the keyboard: one line that names the problem and the fix."""

from __future__ import annotations

import os
import sys
from typing import Callable


class IrscopeError(Exception):
    """A problem with the user's input. `str(err)` is the whole message, one line."""

    exit_code = 2


class UserCodeError(IrscopeError):
    """The user's own file raised while irscope imported or ran it."""

    exit_code = 3

    def __init__(self, message: str, user_traceback: str):
        super().__init__(message)
        self.user_traceback = user_traceback


class KernelsOutOfReach(IrscopeError):
    """The file's @triton.jit functions are none of them module attributes irscope takes as kernels (made inside
    functions, or wrapped by a library's own decorator) and its run launched none: nothing to show, and for
    `check` over a package nothing wrong either (`kernels`: (name, line) each)."""

    def __init__(self, message: str, kernels: list[tuple[str, int]]):
        super().__init__(message)
        self.kernels = kernels


class KernelCompileError(IrscopeError):
    """Triton could not compile the kernel; carries the compiler's message and the source line."""

    exit_code = 4

    def __init__(self, message: str, file: str | None, line: int | None, source_line: str | None):
        where = f"{file}:{line}: " if file and line else ""
        super().__init__(f"{where}{message}")
        self.compiler_message = message
        self.file = file
        self.line = line
        self.source_line = source_line


class LaunchRejected(IrscopeError):
    """Triton's JIT refused the launch's arguments or options (`num_warps=3`, an unknown keyword);
    `reason` is Triton's own one-line message, for callers that phrase the advice themselves."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


def guarded(work: Callable[[], int]) -> int:
    """Run a command: its exit code, or one line on stderr for an error and the code that goes with it
    (never a traceback, unless IRSCOPE_DEBUG is set for a bug in irscope itself)."""
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
        print(
            f"irscope: internal error: {type(err).__name__}: {err} (set IRSCOPE_DEBUG=1 for a traceback "
            f"and please report it)",
            file=sys.stderr,
        )
        return 70
