"""Errors meant for the person at the keyboard: one line that names the problem and the fix."""

from __future__ import annotations


class IrscopeError(Exception):
    """A problem with the user's input. `str(err)` is the whole message, one line."""

    exit_code = 2


class UserCodeError(IrscopeError):
    """The user's own file raised while irscope imported or ran it."""

    exit_code = 3

    def __init__(self, message: str, user_traceback: str):
        super().__init__(message)
        self.user_traceback = user_traceback


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
