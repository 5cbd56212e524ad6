"""The prompt bar: one line of input under the panes for `/` (search) and `g` (go to line).

It is asked for with `ask(kind, placeholder)` and answers with a message: `PromptBar.Answered` (Enter,
with what was typed, stripped; the kind says which question it answers) or `PromptBar.Cancelled` (Esc).
It hides itself either way; the screen decides where the focus goes. What was typed is never markup.
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import Input


class PromptBar(Input):
    """An Input that asks one question at a time."""

    class Answered(Message):
        def __init__(self, kind: str, value: str) -> None:
            super().__init__()
            self.kind = kind  # "search" or "goto"
            self.value = value

    class Cancelled(Message):
        def __init__(self, kind: str) -> None:
            super().__init__()
            self.kind = kind

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.kind = ""  # the question asked now

    def on_mount(self) -> None:
        self.display = False

    def ask(self, kind: str, placeholder: str) -> None:
        self.kind = kind
        self.placeholder = placeholder
        self.value = ""
        self.display = True
        self.focus()

    def _close(self) -> str:
        kind, self.kind = self.kind, ""
        self.display = False
        return kind

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Answered(self._close(), event.value.strip()))

    def cancel(self) -> None:
        """Esc: hidden, and the question answered with `Cancelled`."""
        self.post_message(self.Cancelled(self._close()))

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            event.prevent_default()
            self.cancel()
