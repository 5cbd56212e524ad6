"""Screens over the main view: the kernel picker, help, target choice, constexpr / option editing."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from irscope.base.names import TARGETS
from irscope.tui.edit import RESET, check

# the mark of a picker row of a specialization named, not compiled: in a column of its own, ahead of the kernel's
# name, so that the constexprs that tell rows apart stay on an 80-column screen (the title explains it)
NOT_COMPILED = "○"


class PickerScreen(ModalScreen[int]):
    """Several kernels or compilations in the file: choose one (name, line, target, registers). Rows with
    `named` are specializations named, not compiled yet (a benchmark's later sizes, a config only a GPU's
    timing picks): choosing one compiles it."""

    BINDINGS = [Binding("escape", "cancel", "Back"), Binding("q", "app.quit", "Quit")]

    def __init__(
        self,
        rows: list[dict[str, Any]],
        cancellable: bool,
        start: int = 0,
        missing: Text | None = None,
    ) -> None:
        super().__init__()
        self.rows = rows
        self.cancellable = cancellable
        self.start = start  # the row the cursor starts on: the compilation shown
        self.missing = (
            missing  # what the run did not reach (main/texts.missing_lines), under the table
        )

    def compose(self) -> ComposeResult:
        named = sum(1 for row in self.rows if row.get("named"))
        compiled = len(self.rows) - named
        # short enough for the dialog at 80 columns
        title = (
            f"{compiled} compilation(s); {NOT_COMPILED} {named} named, not compiled — Enter compiles one"
            if named
            else f"{compiled} compilation(s) in this file — pick one (Enter)"
        )
        with Vertical(id="picker"):
            yield Label(title, id="picker-title")
            yield DataTable(id="picker-table", cursor_type="row", zebra_stripes=True)
            if self.missing is not None:
                yield Static(self.missing, id="picker-missing", markup=False)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        # the constexprs that tell a kernel's rows apart come right after its name: at 80 columns the
        # columns after the grid are off screen, and two compilations of one kernel looked the same
        # a column for the mark, where a row needs one
        marked = any(row.get("named") for row in self.rows)
        table.add_columns(
            *([""] if marked else []),
            "kernel",
            "constexprs",
            "line",
            "target",
            "grid",
            "warps",
            "regs",
            "spills",
            "specialization",
        )
        for row in self.rows:
            cells = [
                Text(str(row[k]))
                for k in (
                    "name",
                    "constexprs",
                    "line",
                    "target",
                    "grid",
                    "warps",
                    "regs",
                    "spills",
                    "spec",
                )
            ]
            # named, not compiled yet (texts.picker_rows)
            mark = Text(NOT_COMPILED if row.get("named") else "", style="bold yellow")
            table.add_row(*([mark] if marked else []), *cells)
        if 0 < self.start < len(self.rows):
            table.move_cursor(row=self.start)
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.dismiss(event.cursor_row)

    def action_cancel(self) -> None:
        if self.cancellable:
            self.dismiss(-1)


class TargetScreen(ModalScreen[str]):
    BINDINGS = [Binding("escape", "cancel", "Back")]

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Compile for which target?", classes="dialog-title")
            yield OptionList(
                *(
                    Option(
                        f"{'● ' if t == self.current else '  '}{t}  "
                        f"{'NVIDIA' if t.startswith('sm') else 'AMD'}",
                        id=t,
                    )
                    for t in TARGETS
                ),
                id="targets",
            )

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = list(TARGETS).index(self.current) if self.current in TARGETS else 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss("")


class EditScreen(ModalScreen[dict]):
    """Edit constexprs, arguments the JIT folded to constants, and launch options; each value is checked
    (edit.check) before the app recompiles in the background. With edits in force, Reset (ctrl+r) goes
    back to the launch's own values."""

    BINDINGS = [Binding("escape", "cancel", "Back"), Binding("ctrl+r", "reset", "Reset")]

    def __init__(
        self,
        values: dict[str, Any],
        kinds: dict[str, str] | None = None,
        edited: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.values = values
        # name -> what it is, shown after the name ("constexpr", "launch option", ...)
        self.kinds = kinds or {}
        self.edited = edited or {}  # the values set with e so far (the reset drops them)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="edit"):
            yield Label("Edit and press Enter to recompile, Esc to cancel", classes="dialog-title")
            with VerticalScroll(id="edit-fields"):
                for name, value in self.values.items():
                    label = Text(name, style="bold")
                    if self.kinds.get(name):
                        label.append(f"  {self.kinds[name]}")
                    if name in self.edited:
                        label.append("  (edited)", style="italic")
                    yield Label(label, id=f"label-{name}", classes="field-label")
                    yield Input(str(value), id=f"field-{name}", classes="field")
            yield Static("", id="edit-error", markup=False)
            with Horizontal(id="edit-buttons"):
                yield Button("Recompile", id="recompile", variant="primary")
                if self.edited:
                    yield Button("Reset to the launch's values (ctrl+r)", id="reset")

    def on_mount(self) -> None:
        self.query_one("#edit-error").display = False
        fields = self.query(Input)
        if fields:
            fields.first().focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._done()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "reset":
            self.action_reset()
        else:
            self._done()

    def _done(self) -> None:

        changed: dict[str, Any] = {}
        for name, value in self.values.items():
            field = self.query_one(f"#field-{name}", Input)
            new, wrong = check(name, field.value, value, self.kinds.get(name, ""))
            if wrong:  # said in the dialog, on one line; nothing compiles
                error = self.query_one("#edit-error", Static)
                error.update(Text(wrong, style="bold red"))
                error.display = True
                field.focus()
                return
            if new != value or type(new) is not type(value):
                changed[name] = new
        self.dismiss(changed)

    def action_reset(self) -> None:

        if self.edited:
            self.dismiss(RESET)

    def action_cancel(self) -> None:
        self.dismiss({})


HELP = """\
irscope — your kernel and what the Triton compiler made of it, line by line.

## Reading the panes
  Each source line that produced IR has a colour: a bar in the gutter and a faint
  background on its lines in every pane. Move the cursor anywhere: its source line and
  all of that line's IR light up in every pane and scroll into view. Pane titles name
  the linked source line too, for when colours are hard to tell apart (c: colours off).
  Memory marks before the bar: V vectorized global access (8 B or more per thread),
  S scalar global access (look here), m masked, s shared memory, c convert_layout,
  L local memory, ! register spill. The Memory panel (i) says why an access is scalar.
  A source line with a finding has its glyph in place of the bar: ▲ warning, ● info,
  ✗ error. f lists the findings.

## Findings (f)
  What costs this kernel time, ranked: rule, source line and cost; the selected one with
  its cause, fix and what-if. It opens by itself when something wants fixing and the
  terminal has the room; else its top line names the first finding.
  f       open the list and go to it; in it: close it
  ↑ ↓     select a finding       Enter / click   show its line in every pane
  m       maximise the list      Esc             back to the panes

## Moving
  ↑ ↓ j k PgUp PgDn Home End   move the cursor        mouse   click a line, wheel scrolls
  Tab / Shift+Tab              next / previous pane   ← →     scroll sideways
                               (then the info panel shown and the open findings list)
  ] / [                        next / previous block of the same source line
                               (source pane: next / previous line that produced IR)
  g                            go to line             / n N   search, next, previous

## Panes and layout
  s / S   next / previous stage in this pane
  1 … 7   this pane shows 1 source 2 TTIR 3 TTGIR 4 LLVM IR 5 PTX 6 SASS 7 AMDGCN
  m       maximise this pane (again: restore)
  l       layout: auto, columns, rows, tabs
  c       colour links on / off
  d       debug metadata on / off (#loc, loc(...), !dbg, .loc, .file, //## File)
  i       info panels: Info, again Explain, Memory, Coalescing, Measured, then hidden

## Info panels (i)
  Tab / Shift+Tab reach the panel shown after the panes (or click it). There:
  ↑ ↓ PgUp PgDn Home End, mouse wheel   scroll      m     maximise (again: restore)
  i   the next panel                                Esc   back to the panes
  The panels describe the line under the cursor of the pane focused last.

## Compiling
  t       target: sm_80 … sm_120, gfx942, gfx950
  e       edit constexprs, num_warps / num_stages and arguments the JIT
          folded in (ints equal to 1), then recompile; each value is checked
          first; with edits in force, ctrl+r there resets to the launch's values
  r       reload the file after you edit it (keeps the target, kernel and e's values)
  p       pick another kernel or compilation
  ctrl+t  step through the kernel (the stepper)

## Comparing
  D       diff: two compilations of this kernel side by side, aligned by source line,
          under a summary (registers, occupancy, each access's width and sectors per
          request, findings). In it: a / b pick the left / right side (another launch,
          autotune config, target, the one shown before a reload or edit, or a SPEC
          such as BLOCK_SIZE=512), x swap, s stage, ] [ next change, u unchanged lines
  P       passes: the compiler pass by pass for this compilation (compiles once more);
          ● marks the passes that changed the cursor's source line; beside the list,
          what the selected pass changed (Tab: that pane); l only those passes, a all

  ctrl+p  command palette          ?  this help          q  quit
"""


class HelpScreen(ModalScreen[None]):
    """A help text (the main view's, unless another is given: the stepper has its own keys)."""

    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]

    def __init__(self, text: str = HELP) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog", id="help"):
            yield Static(_help_text(self.text), markup=False)

    def action_close(self) -> None:
        self.dismiss(None)


def _help_text(help_text: str = HELP) -> Text:
    """A help text with its `## ` lines as bold headings (plain text: the keys include `[` and `]`)."""
    text = Text()
    for n, line in enumerate(help_text.splitlines()):
        if line.startswith("## "):
            text.append(line[3:] + "\n", style="bold")
        else:
            text.append(line + "\n", style="bold" if n == 0 else "")
    return text
