"""The stepper's program chooser: a modal that asks for a program id within the launch's grid."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from irscope.analysis.recording import normalize_program_id
from irscope.base.errors import IrscopeError
from irscope.tui.stepper_text import program_text


class ProgramChooser(ModalScreen[tuple[int, int, int] | None]):
    """Ask for a program id within the launch's grid."""

    DEFAULT_CSS = """
    ProgramChooser { align: center middle; }
    ProgramChooser > Vertical { width: 60; height: auto; border: round $accent; background: $surface;
                                padding: 1 2; }
    ProgramChooser #chooser-error { color: $error; width: 1fr; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, grid: tuple[int, int, int], current: tuple[int, int, int]):
        super().__init__()
        self.grid = grid
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Program id X[,Y[,Z]] within the grid ({program_text(self.grid)})")
            yield Input(value=program_text(self.current), id="chooser-input")
            yield Label("", id="chooser-error")

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        try:
            parts = tuple(int(p) for p in event.value.replace(" ", "").split(",") if p != "")
            self.dismiss(normalize_program_id(parts, self.grid))
        except (ValueError, IrscopeError) as exc:
            message = (
                str(exc) if isinstance(exc, IrscopeError) else "give whole numbers, like 1 or 1,0"
            )
            self.query_one("#chooser-error", Label).update(message)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
