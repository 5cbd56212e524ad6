"""The Findings view of the TUI: the ranked findings of the compilation shown (`f`)."""

from .view import FindingsView

__all__ = ["FindingsView"]
