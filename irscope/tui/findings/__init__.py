"""The Findings view of the TUI: the ranked findings of the compilation shown (`f`)."""

from irscope.tui.findings.view import FindingsView

__all__ = ["FindingsView"]
