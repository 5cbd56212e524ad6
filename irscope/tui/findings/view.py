"""The Findings view: the ranked findings of the compilation shown, under the panes (`f`).

The worker computes them (`comp.call("findings")`, the engine behind `irscope report` and `irscope
check`) once per compilation, asked from a thread (tui/asker.py); the last few are kept. The view then
lists them, one row each, the selected one with its cause, cost, fix and what-if; Enter puts every pane
on the finding's source line, and the source pane's gutter marks the lines that have findings.

On start it opens by itself when there is something to fix (a warning or an error) and the terminal is
tall enough to keep the panes readable; otherwise it stays one line, the top border, which names the
first finding: a small terminal keeps its layout and still sees it. Once the user has pressed `f`, that
choice holds for the next compilations.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from irscope.tui.asker import Asker, bounded
from irscope.tui.findings import text as say
from irscope.tui.findings.panes import gutter_marks, jump_to_finding
from irscope.tui.messages import Failed, FindingsFound, Request

if TYPE_CHECKING:
    from irscope.findings.model import Finding
    from irscope.tui.loader import Shown

OPEN_HEIGHT = 32  # from this many rows on, the view opens by itself when a finding wants fixing


class FindingRow(Static):
    """One finding in the list (a click selects it and shows its line in every pane)."""

    DEFAULT_CSS = """
    FindingRow { height: auto; }
    FindingRow.-selected { background: $boost; }
    """

    def __init__(self, index: int) -> None:
        super().__init__(markup=False)
        self.index = index

    def on_click(self) -> None:
        view = self.parent
        if isinstance(view, FindingsView):
            view.focus()
            view.select(self.index)
            view.action_jump()


def _findings(request: Request, comp) -> FindingsFound:
    return FindingsFound(request, list(comp.call("findings")))


class FindingsView(Asker, VerticalScroll, can_focus=True):
    DEFAULT_CSS = """
    FindingsView {
        height: auto;
        max-height: 40%;
        border-top: solid $primary;
        border-title-align: left;
        scrollbar-size-vertical: 1;
        padding: 0 0 0 0;
    }
    FindingsView:focus { border-top: solid $accent; }
    FindingsView.-collapsed { height: 1; overflow-y: hidden; }
    FindingsView.-max { height: 1fr; max-height: 100%; }
    FindingsView #findings-message { height: auto; padding: 0 1; }
    """

    BINDINGS = [
        Binding("up,k", "select_by(-1)", "Previous finding", show=False),
        Binding("down,j", "select_by(1)", "Next finding", show=False),
        Binding("home", "select_at(0)", "First finding", show=False),
        Binding("end", "select_at(-1)", "Last finding", show=False),
        Binding("enter", "jump", "Go to line", show=False),
        Binding("m", "maximize", "Maximise", show=False),
        Binding("escape", "leave", "Back to the panes", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="findings")
        self.shown: Shown | None = None
        self.findings: list[Finding] | None = None  # None: not known yet
        self.failed = ""
        self.selected = 0
        self.mode = "hidden"  # "hidden" | "collapsed" (the title line) | "open"
        self.user_open: bool | None = (
            None  # set by `f`: the user's choice outranks the automatic one
        )
        self.maximised = False
        self._panels_were_shown = False
        self._cache = bounded()  # comp.key -> findings, or why they are missing

    def caches(self) -> dict:
        return {"findings": self._cache}

    def compose(self) -> ComposeResult:
        yield Static(say.analysing(), id="findings-message", markup=False)

    def on_mount(self) -> None:
        self.display = False

    # ---- what the app calls

    def show_compilation(self, shown: Shown) -> None:
        """A compilation is on screen: show its findings (asking the worker the first time)."""
        self.shown = shown
        key = shown.comp.key
        if key in self._cache:
            self._set(self._cache.get(key))
            return
        self.findings, self.failed = None, ""
        self._rebuild()
        self.ask("findings", _findings, shown.comp, about=key)

    def findings_of(self, key: int) -> list | None:
        """The findings the worker gave for compilation `key`, when they came (None: never asked, or failed)."""
        got = self._cache.get(key)
        return got if isinstance(got, list) else None

    def show_no_compilation(self) -> None:
        """The file did not open: nothing to list until it does."""
        self.shown, self.findings, self.failed = None, [], ""
        self._rebuild()
        self._apply_mode("open" if self.user_open else "hidden")

    def toggle(self) -> None:
        """`f`: open the list and go to it; there already: close it (to its title line, when it has
        findings) and go back to the panes."""
        if self.mode != "open":
            self.user_open = True
            self._apply_mode("open")
            self.focus()
        elif not self.has_focus:
            self.focus()
        else:
            self.user_open = False
            self._apply_mode(self._closed_mode())

    # ---- the worker's answers

    def on_findings_found(self, message: FindingsFound) -> None:
        if self.answered(message):
            self._arrived(message.request.about, message.findings)

    def request_failed(self, message: Failed) -> None:  # said in the view; the app goes on
        self._arrived(message.request.about, message.failure.message)

    def _labelled(self, found: list[Finding]) -> list[Finding]:
        """A notebook's findings, their lines named as the source pane numbers them (cell:line)."""
        kernel = self.shown.comp.kernel if self.shown is not None else None
        labels = kernel.line_labels if kernel is not None else ()
        if not labels:
            return found
        return [
            dataclasses.replace(f, line_label=labels[f.source_line - 1] or None)
            if f.file == kernel.file and f.source_line and f.source_line <= len(labels)
            else f
            for f in found
        ]

    def _arrived(self, key: int, result: list | str) -> None:
        self._cache[key] = result
        if self.shown is not None and self.shown.comp.key == key:
            self._set(result)

    def _set(self, result: list | str) -> None:
        self.failed = result if isinstance(result, str) else ""
        self.findings = [] if isinstance(result, str) else self._labelled(result)
        self.selected = 0
        self._rebuild()
        if self.shown is not None:
            self.screen.linked.mark_findings(self.shown, gutter_marks(self.shown, self.findings))
        if self.user_open is None:
            # (a compile error is on the status line and in every pane already)
            fix_me = any(
                f.severity in ("error", "warning") and f.rule != "compile-error"
                for f in self.findings
            )
            tall = self.app.size.height >= OPEN_HEIGHT
            self._apply_mode("open" if fix_me and tall else self._closed_mode())
        else:
            self._apply_mode("open" if self.user_open else self._closed_mode())

    # ---- showing

    def _closed_mode(self) -> str:
        return "collapsed" if self.findings or self.failed else "hidden"

    def _apply_mode(self, mode: str) -> None:
        self.mode = mode
        if mode != "open" and self.has_focus:  # keys would act on a list no one sees
            self._restore()
            self._focus_panes()
        self.display = mode != "hidden"
        self.set_class(mode == "collapsed", "-collapsed")
        self._retitle()

    def _retitle(self, focused: bool | None = None) -> None:
        focused = self.has_focus if focused is None else focused
        self.border_title = say.title(
            self.findings,
            failed=bool(self.failed),
            collapsed=self.mode == "collapsed",
            focused=focused,
            width=self.app.size.width,
        )

    def _message(self) -> RenderableType | None:
        if self.failed:
            return say.failure(self.failed)
        if self.findings is None:
            return say.analysing()
        if not self.findings:
            if self.shown is None:
                return Text(
                    "Nothing to look at yet: the file has not opened (see the status line; r reloads)."
                )
            comp = self.shown.comp
            return say.empty(comp.kernel.name, str(comp.target))
        return None

    def _rebuild(self) -> None:
        """The rows for the findings now known (or the message that stands in for them)."""
        message = self._message()
        note = self.query_one("#findings-message", Static)
        note.display = message is not None
        if message is not None:
            note.update(message)
        self.query(FindingRow).remove()
        self.mount_all([FindingRow(n) for n in range(len(self.findings or []))])
        self.call_after_refresh(self._redraw_rows)
        self._retitle()

    def _redraw_rows(self) -> None:
        findings = self.findings or []
        width = max(20, (self.size.width or self.app.size.width) - 1)
        kernel_file = self.shown.comp.kernel.file if self.shown is not None else None
        for row in self.query(FindingRow):
            if row.index < len(findings):
                selected = row.index == self.selected
                row.set_class(selected, "-selected")
                row.update(
                    say.row(
                        findings[row.index],
                        findings,
                        selected=selected,
                        width=width,
                        kernel_file=kernel_file,
                    )
                )

    def on_resize(self) -> None:
        self._redraw_rows()
        self._retitle()

    def on_focus(self) -> None:
        self._retitle(focused=True)  # (runs before Widget's own handler sets has_focus)

    def on_blur(self) -> None:
        self._restore()  # Tab, a click on a pane: the panes come back
        self._retitle(focused=False)

    def plain_text(self, width: int = 100) -> str:
        """The title and what the view shows, as plain text (the tests read it)."""
        kernel_file = self.shown.comp.kernel.file if self.shown is not None else None
        return say.plain(
            self.findings, self.failed, self._message(), self.selected, width, kernel_file
        )

    # ---- selection and the jump

    def select(self, index: int) -> None:
        count = len(self.findings or [])
        if not count:
            return
        self.selected = index % count if index < 0 else min(index, count - 1)
        self._redraw_rows()
        rows = list(self.query(FindingRow))
        if self.selected < len(rows):
            self.call_after_refresh(self.scroll_to_widget, rows[self.selected], animate=False)

    def action_select_by(self, delta: int) -> None:
        self.select(max(0, self.selected + delta))

    def action_select_at(self, index: int) -> None:
        self.select(index)

    def action_jump(self) -> None:
        if self.findings:
            self._restore()
            jump_to_finding(self.screen.linked, self.findings[self.selected])

    def action_maximize(self) -> None:
        if self.maximised:
            self._restore()
            return
        self.maximised = True
        panels = self.screen.query_one("#panels")
        self._panels_were_shown = bool(panels.display)
        self.screen.query_one("#panes").display = False
        panels.display = False
        self.add_class("-max")

    def _restore(self) -> None:
        if not self.maximised:
            return
        self.maximised = False
        self.remove_class("-max")
        self.screen.query_one("#panes").display = True
        self.screen.query_one("#panels").display = self._panels_were_shown

    def action_leave(self) -> None:
        self._restore()
        self._focus_panes()

    def _focus_panes(self) -> None:
        linked = getattr(self.screen, "linked", None)  # the main screen's panes
        if linked is not None and linked.panes:
            linked.focus_active()
