"""Moving through a recording like a debugger: step, next, finish, continue, back, restart.

Everything is recorded first, so every move is a search in a list: stepping backwards costs the
same as forwards, and no move re-runs the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from irscope.analysis.recording.trace import Recording, Step


@dataclass
class Stepper:
    recording: Recording
    position: int = 0
    breakpoints: set[int] = field(default_factory=set)  # source lines

    @property
    def step(self) -> Step | None:
        steps = self.recording.steps
        return steps[self.position] if steps else None

    @property
    def at_end(self) -> bool:
        return self.position >= len(self.recording.steps) - 1

    def _go(self, index: int | None) -> Step | None:
        if self.recording.steps:
            last = len(self.recording.steps) - 1
            self.position = last if index is None else max(0, min(index, last))
        return self.step

    def _first_after(self, pred) -> int | None:
        steps = self.recording.steps
        return next((i for i in range(self.position + 1, len(steps)) if pred(steps[i])), None)

    def step_into(self) -> Step | None:
        """The next recorded line, entering helpers."""
        return self._go(self.position + 1)

    def step_over(self) -> Step | None:
        """The next line of this function (or of its caller, once it returns); helpers run through."""
        here = self.step
        if here is None:
            return None
        return self._go(self._first_after(lambda s: s.depth <= here.depth))

    def finish(self) -> Step | None:
        """Run until the current function has returned to its caller (the end, for the kernel)."""
        here = self.step
        if here is None:
            return None
        return self._go(self._first_after(lambda s: s.depth < here.depth))

    def cont(self) -> Step | None:
        """Run to the next breakpoint line (or the end)."""
        return self._go(
            self._first_after(lambda s: s.line in self.breakpoints and s.event == "line")
        )

    def back(self) -> Step | None:
        return self._go(self.position - 1)

    def restart(self) -> Step | None:
        return self._go(0)

    def end(self) -> Step | None:
        return self._go(None)

    def to_debugger_call(self) -> Step | None:
        """The first line that called breakpoint() or pdb.set_trace(), where a debugger would have stopped
        the program; None (not moving) when the program reached none."""
        calls = self.recording.debugger_steps
        return self._go(calls[0]) if calls else None

    def toggle_breakpoint(self, line: int) -> bool:
        """True when the line now has a breakpoint."""
        if line in self.breakpoints:
            self.breakpoints.discard(line)
            return False
        self.breakpoints.add(line)
        return True
