"""The linked panes: the kernel's source and its compiled stages side by side, linked line by line.

`LinkedPanes` owns the panes and what they show (the user's file while it loads, a compilation once
it is prepared, why the file could not be opened), the layout (`l`, `m`, the terminal's size), the
active pane, colouring and debug metadata: reactive variables with one watcher each, which brings the
panes in line with them.

It links them: a cursor move in one pane lights up the source line under the cursor (through the
`LinkIndex`), with all of its IR, in every other pane, which scrolls to it; `]` / `[` move between the
blocks of lines one source line made. After each linking it posts `Linked` (the screen's panels
describe the new line).

And it keeps the line: a recompile (`t`, `e`), another compilation (`p`) or a reload (`r`) puts every
pane's cursor back on the source line the user was on. The IR of the new compilation is not the old
one, so a cursor kept by its index would land on another source line; the source line is what the user
was looking at. It is kept when it still produced code in the new compilation, or when the kernel is
the same one (a line of it that made no code here is still the line the user was reading); another
kernel starts at its own body instead.

The screen asks through the methods; nothing outside sets this widget's state.
"""

from __future__ import annotations

import textwrap

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Container
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var

from irscope.base.names import absent_stage
from irscope.base.textsafe import safe_text
from irscope.tui.context import CursorContext
from irscope.tui.highlight import StageText
from irscope.tui.loader import OpenFailure, Shown
from irscope.tui.main.panes import (
    AMD_PANES,
    LAYOUTS,
    MAX_PANES,
    NVIDIA_PANES,
    STAGE_TITLES,
    StagePane,
    effective_layout,
    pane_title,
    visible_count,
)
from irscope.tui.widgets.stage_view import StageView


class LinkedPanes(Container):
    """The main view's panes (`#panes`), their layout and the links between their lines."""

    class Linked(Message):
        """The panes were linked anew: the line under the active pane's cursor may have changed."""

    layout_mode = var("auto", init=False)  # auto, columns, rows, tabs (l)
    pane_maximized = var(False, init=False)  # the active pane alone (m)
    active_pane = var(0, init=False)  # the pane focused last: the panels describe its line
    colouring = var(True, init=False)  # colour links (c)
    show_debug = var(False, init=False)  # debug metadata in the IR (d)
    # the app's last Resize (the screen may be behind a dialog)
    terminal_size = var(Size(0, 0), init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.shown: Shown | None = None  # the compilation on the panes
        # each pane's stage, kept across compilations
        self.pane_stages: list[str] = list(NVIDIA_PANES)
        self.source_line: int | None = None  # the source line linked last
        self.linked_chain: tuple[int, ...] = ()  # and its chain of source lines (inlined calls)
        self.links_done = (
            0  # how many cursor moves have been linked across panes (tests, benchmarks)
        )
        self._panes: list[StagePane] = []

    def compose(self) -> ComposeResult:
        for n in range(MAX_PANES):
            yield StagePane(n, on_cursor_moved=self.link_from)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._restyle)

    # ---- the panes and the layout

    @property
    def panes(self) -> list[StagePane]:
        if not self._panes:
            self._panes = list(self.query(StagePane))
        return self._panes

    def active_view(self) -> StageView:
        return self.panes[self.active_pane].view

    def current_view(self) -> StageView:
        """The pane focused now, else the one focused last."""
        focused = self.screen.focused
        if isinstance(focused, StageView):
            return focused
        return self.active_view()

    def _terminal_size(self) -> Size:
        """The size the last Resize named: the app's `size` may still be the old one while it is handled."""
        return self.terminal_size if self.terminal_size.width else self.app.size

    def visible_count(self, mode: str | None = None) -> int:
        """How many panes a layout (by default the one in force) shows at this terminal size."""
        return visible_count(mode or self.effective_layout(), self._terminal_size())

    def effective_layout(self) -> str:
        return effective_layout(self.layout_mode, self._terminal_size())

    def resized(self, size: Size) -> None:
        """The terminal's new size (told by the app, even while a dialog is in front of the screen)."""
        self.terminal_size = size

    def set_layout(self, mode: str) -> None:
        self.layout_mode = mode
        self.pane_maximized = False

    def cycle_layout(self) -> None:
        """`l`: the next layout, said on screen; the panes shown now are linked."""
        self.set_layout(LAYOUTS[(LAYOUTS.index(self.layout_mode) + 1) % len(LAYOUTS)])
        auto = f" ({self.effective_layout()})" if self.layout_mode == "auto" else ""
        self.notify(f"layout: {self.layout_mode}{auto}", timeout=2)
        view = self.active_view()
        if view.cursor_index is not None:
            self.link_from(view, view.cursor_index)

    def toggle_maximized(self) -> None:
        self.pane_maximized = not self.pane_maximized
        self.active_view().focus()

    def toggle_colour(self) -> None:
        self.colouring = not self.colouring

    def toggle_debug(self) -> None:
        self.show_debug = not self.show_debug
        self.notify(
            "debug metadata shown" if self.show_debug else "debug metadata hidden", timeout=2
        )

    def apply_layout(self) -> None:
        mode = self.effective_layout()
        count = self.visible_count(mode)
        self.active_pane = min(self.active_pane, count - 1)
        self.set_class(mode == "rows", "-rows")
        self.set_class(mode != "rows", "-columns")
        solo = self.pane_maximized or mode == "tabs"
        for pane in self.panes:
            pane.display = pane.number < count and (not solo or pane.number == self.active_pane)
        for pane in self.panes:
            self.update_pane_title(pane)

    def _relayout(self, _value=None) -> None:
        if self.panes:  # (a Resize may come before the screen is composed)
            self.apply_layout()
            self.call_after_refresh(self.reveal_cursors)

    watch_layout_mode = watch_pane_maximized = watch_terminal_size = _relayout

    def watch_active_pane(self) -> None:
        if self.panes:
            self.apply_layout()

    def watch_colouring(self, colouring: bool) -> None:
        for pane in self.panes:
            pane.view.set_options(colouring=colouring)

    def watch_show_debug(self, show_debug: bool) -> None:
        for pane in self.panes:
            pane.view.set_options(show_debug=show_debug)

    def reveal_cursors(self) -> None:
        for pane in self.panes:
            if pane.display and pane.view.rows:
                pane.view.scroll_to_row(pane.view.cursor_row, center=True)

    def focus_pane(self, number: int) -> None:
        self.active_pane = number
        self.apply_layout()
        self.panes[number].view.focus()

    def focus_active(self) -> None:
        self.active_view().focus()

    def on_descendant_focus(self, event) -> None:
        widget = event.widget
        if isinstance(widget, StageView):
            self.active_pane = int(widget.id.split("-")[1])

    def update_pane_title(self, pane: StagePane) -> None:
        if pane.stage:
            pane.set_title(pane_title(self, pane))

    def update_titles(self) -> None:
        for pane in self.panes:
            self.update_pane_title(pane)

    def _restyle(self, _theme) -> None:
        for pane in self.panes:
            pane.view.restyle()

    # ---- what the panes show

    def show_loading(self, text: str) -> None:
        """The user's file in the source pane at once; the other panes wait for the compiler."""
        pane = self.panes[0]
        pane.show("source", StageText("source", text), None, lambda line: None)
        pane.set_title(
            Text(" Source ", style="bold reverse")
            + Text(f" {len(text.splitlines())} lines", style="dim")
        )
        for other in self.panes[1:]:
            other.set_title(
                Text(f" {STAGE_TITLES.get(self.pane_stages[other.number], '')} ", style="bold")
                + Text("  compiling…", style="dim")
            )

    def show_compilation(self, shown: Shown) -> None:
        """Every pane on its stage of `shown`; the cursor on the line the user was on (a recompile, a pick, a
        reload), else on the kernel's first line that produced IR. A compilation that failed: its line
        marked in the source pane."""
        previous, line_before = self.shown, self.source_line
        cursors = {}
        if previous is not None:
            cursors = {pane.number: (pane.stage, pane.view.cursor_index) for pane in self.panes}
        self.shown = shown
        comp = shown.comp
        defaults = NVIDIA_PANES if comp.target.is_nvidia else AMD_PANES
        stages = shown.stages
        self.pane_stages = [
            s if s in stages else defaults[n] for n, s in enumerate(self.pane_stages)
        ]
        self.pane_stages = [s if s in stages else "llir" for s in self.pane_stages]
        for pane in self.panes:
            old_stage, old_index = cursors.get(pane.number, (None, None))
            self._fill(
                pane,
                self.pane_stages[pane.number],
                cursor_index=old_index if old_stage == self.pane_stages[pane.number] else None,
            )
        failure, source = comp.failure, self.panes[0]
        if failure is not None and source.stage == "source" and failure.line:
            source.view.mark_error(failure.line - 1)
            source.view.move_cursor_to_index(failure.line - 1, center=True)
        self.apply_layout()
        self.call_after_refresh(self.reveal_cursors)  # after layout, when panes know their height
        kept = self._keeps_line(line_before, previous)  # t, e, p, r: the line the user was on
        if (
            not kept
            and comp.ok
            and self.panes[0].stage == "source"
            and (previous is None or previous.comp.kernel.name != comp.kernel.name)
        ):
            self._start_at_kernel_body()
        self.focus_pane(self.active_pane)
        view = self.active_view()
        if kept:
            self._put_every_pane_on(line_before)
        elif view.cursor_index is not None and comp.ok:
            self.link_from(view, view.cursor_index)

    def complete_compilation(self, shown: Shown, stages: tuple[str, ...]) -> None:
        """The compilation on the panes again, now with `stages` its first answer lacked (the SASS): the panes
        showing those are filled and put on the linked source line; every other pane stays as it is, its
        cursor and scroll untouched."""
        previous = self.shown
        shown.changed_lines = previous.changed_lines if previous is not None else frozenset()
        shown.finding_marks = dict(previous.finding_marks) if previous is not None else {}
        self.shown = shown
        for pane in self.panes:
            if pane.stage not in stages:
                continue
            self._fill(pane, pane.stage)
            if not pane.display or self.source_line is None or not shown.comp.ok:
                continue
            hits = shown.links.ir_lines(pane.stage, self.source_line)
            pane.view.set_linked(shown.links.ir_line_set(pane.stage, self.source_line))
            if hits:
                pane.view.move_cursor_to_index(hits[0], center=True)
            self.update_pane_title(pane)

    def _start_at_kernel_body(self) -> None:
        """First view of a kernel: the cursor on its first line that produced IR, so the links show."""
        links, start = self.shown.links, self.shown.comp.kernel.line
        first = next((n for n in range(start + 1, start + 400) if links.produced_ir(n)), None)
        if first is not None:
            self.active_pane = 0
            self.panes[0].view.move_cursor_to_index(first - 1, center=True)

    def _fill(self, pane: StagePane, stage: str, cursor_index: int | None = None) -> None:
        shown = self.shown
        text = shown.texts.get(stage)
        if text is None:  # a stage this target lacks
            text = StageText("error", f"{stage} does not exist for {shown.comp.target}\n")
        links = shown.links.stage(stage) if shown.comp.ok or stage == "source" else None
        pane.view.set_options(colouring=self.colouring, show_debug=self.show_debug)
        pane.view.set_memory_marks(shown.marks.get(stage, {}))
        # a notebook's source: each line numbered as its cell and line within it
        pane.view.set_line_labels(shown.comp.kernel.line_labels if stage == "source" else ())
        pane.show(
            stage,
            text,
            links,
            shown.links.colour_slot,
            cursor_index=cursor_index,
            full_text=shown.full_texts.get(stage),
        )
        pane.view.set_finding_marks(shown.finding_marks.get(stage, {}))
        if stage == "source":
            pane.view.set_changed_lines(shown.changed_lines)
        self.update_pane_title(pane)

    def show_failure(self, failure: OpenFailure, source: str) -> None:
        """The file could not be opened or compiled: why, in the panes; its text, with the line marked."""
        message = "\n".join(
            textwrap.fill(part, 34) for part in safe_text(failure.message).splitlines()
        )
        # narrow panes
        detail = message + ("\n\n" + safe_text(failure.detail) if failure.detail else "")
        for pane in self.panes:
            stage = "source" if pane.number == 0 else "error"
            pane.show(
                stage,
                StageText(stage, source if stage == "source" else detail),
                None,
                lambda line: None,
            )
            pane.set_title(Text(f" {STAGE_TITLES[stage]}", style="bold"))
        if failure.line:
            view = self.panes[0].view
            view.mark_error(failure.line - 1)
            view.move_cursor_to_index(failure.line - 1, center=True)
        self.apply_layout()

    def mark_findings(self, shown: Shown, marks: dict[int, str]) -> None:
        """The source gutter's finding glyphs of `shown` (kept on it, so that a pane switched to the
        source later gets them too), in the panes when it is the compilation shown."""
        shown.finding_marks["source"] = marks
        if self.shown is shown:
            for pane in self.panes:
                if pane.stage == "source":
                    pane.view.set_finding_marks(marks)

    def mark_changed(self, shown: Shown, lines: frozenset[int]) -> None:
        """The source lines a save changed, kept on `shown` as its finding marks are."""
        shown.changed_lines = lines
        if self.shown is shown:
            for pane in self.panes:
                if pane.stage == "source":
                    pane.view.set_changed_lines(lines)

    def step_stage(self, delta: int) -> None:
        """`s` / `S`: the next / previous stage in the active pane."""
        if self.shown is None:
            return
        stages = list(self.shown.stages)
        pane = self.panes[self.active_pane]
        current = stages.index(pane.stage) if pane.stage in stages else 0
        self.set_stage(stages[(current + delta) % len(stages)])

    def set_stage(self, stage: str) -> None:
        """This stage in the active pane, its cursor on the source line linked last."""
        if self.shown is None:
            return
        if stage not in self.shown.stages:
            kernel = self.shown.comp.kernel
            absent = absent_stage(stage, kernel.language)
            self.notify(
                f"{stage} does not exist for a {kernel.language.capitalize()} kernel: {absent}"
                if absent
                else f"{stage} does not exist for {self.shown.comp.target}",
                severity="warning",
                markup=False,
            )
            return
        pane = self.panes[self.active_pane]
        self.pane_stages[pane.number] = stage
        self._fill(pane, stage)
        if self.source_line is not None and self.shown.comp.ok:
            hits = (
                self.shown.links.ir_lines(stage, self.source_line)
                if stage != "source"
                else [self.source_line - 1]
            )
            if hits:
                pane.view.move_cursor_to_index(hits[0], center=True)
                pane.view.set_linked(frozenset(hits))
        self.update_pane_title(pane)

    # ---- linking

    def on_stage_view_cursor_moved(self, message: StageView.CursorMoved) -> None:
        if self.shown is not None and message.view.text is not None:
            self.link_from(message.view, message.index)

    def link_from(self, view: StageView, index: int) -> None:
        """Highlight, in every pane, the lines that share the source line of `view`'s line `index`."""
        shown = self.shown
        if shown is None or not shown.comp.ok or view.stage not in shown.texts:
            return
        links = shown.links
        src = links.source_line(view.stage, index)
        chain = links.chain(view.stage, index)
        same = src == self.source_line and chain == self.linked_chain
        self.source_line, self.linked_chain = src, chain
        for pane in self.panes:
            other = pane.view
            if not pane.display or other.text is None or pane.stage not in shown.texts:
                continue
            if same and other is not view:
                continue  # moving inside the lines of one source line: the other panes stay as they are
            if pane.stage == "source":
                lines = frozenset(n - 1 for n in chain) if src is not None else frozenset()
                other.set_linked(lines)
                if other is not view and src is not None and other.cursor_index != src - 1:
                    other.move_cursor_to_index(src - 1, center=True)
            else:
                hits = links.ir_line_set(pane.stage, src)
                other.set_linked(hits)
                if other is not view and hits and other.cursor_index not in hits:
                    other.move_cursor_to_index(links.ir_lines(pane.stage, src)[0], center=True)
            self.update_pane_title(pane)
        self.post_message(self.Linked())
        self.links_done += 1

    def cursor_context(self) -> CursorContext | None:
        """The line under the active pane's cursor, as the info panels see it."""
        shown = self.shown
        if shown is None:
            return None
        view = self.active_view()
        index = view.cursor_index
        if index is None or view.stage not in shown.texts:
            return None
        src = (
            shown.links.source_line(view.stage, index)
            if shown.comp.ok or view.stage == "source"
            else None
        )
        return CursorContext(shown.comp, view.stage, index, src)

    def jump_block(self, direction: int) -> None:
        """`]` / `[`: the next / previous block of lines of the cursor's source line (in the source pane:
        the next / previous source line that produced IR)."""
        shown, view = self.shown, self.current_view()
        index = view.cursor_index
        if shown is None or not shown.comp.ok or index is None:
            return
        links = shown.links
        if view.stage == "source":
            line = index + 1
            candidates = sorted(n for n in links.stage("source").source_of if links.produced_ir(n))
            after = [n for n in candidates if (n > line if direction > 0 else n < line)]
            if not after:
                self.notify("no more source lines that produced IR", timeout=2)
                return
            view.move_cursor_to_index((after[0] if direction > 0 else after[-1]) - 1)
            return
        src = links.source_line(view.stage, index)
        if src is None:
            self.notify("this line has no source line", timeout=2)
            return
        blocks = view.block_rows(links.ir_lines(view.stage, src))
        row = view.cursor_row
        if direction > 0:
            nxt = [b for b in blocks if b[0] > row]
            target = nxt[0][0] if nxt else blocks[0][0]
        else:
            current = [b for b in blocks if b[0] <= row < b[1]]
            start = current[0][0] if current else row
            prev = [b for b in blocks if b[0] < start]
            target = prev[-1][0] if prev else blocks[-1][0]
        view.move_cursor_to_row(target, center=True)

    def jump_source(self, line: int | None) -> None:
        """The source pane focused, its cursor on `line` (the palette's "Jump to source line")."""
        for pane in self.panes:
            if pane.stage == "source" and line:
                self.focus_pane(pane.number)
                pane.view.move_cursor_to_index(line - 1, center=True, notify=True)
                return

    def go_to_source_line(self, line: int) -> bool:
        """Every visible pane on source line `line`: the source pane's cursor on it, linked (else the active
        pane's on its first IR line); False (and said on screen) when the active pane has none."""
        shown = self.shown
        count = self.visible_count()
        pane = next((p for p in self.panes[:count] if p.stage == "source"), None)
        if pane is not None:
            index = line - 1
        else:
            pane = self.panes[self.active_pane]
            hits = shown.links.ir_lines(pane.stage, line) if shown.comp.ok else []
            if not hits:
                self.notify(
                    f"line {line} made no lines in this pane; 1 shows the source here", timeout=3
                )
                return False
            index = hits[0]
        self.active_pane = pane.number
        self.apply_layout()  # a maximised pane or the tabs layout: this pane is the one shown now
        pane.view.move_cursor_to_index(index, center=True, notify=True)
        # once a pane just shown knows its height
        self.call_after_refresh(pane.view.reveal_index, index)
        self.update_titles()
        return True

    def move_source_cursor(self, line: int) -> None:
        """The source pane's cursor on `line` and the other panes linked to it (none shows the source:
        nothing moves)."""
        for pane in self.panes:
            if pane.stage == "source" and pane.display:
                pane.view.move_cursor_to_index(line - 1, center=True)
                self.link_from(pane.view, line - 1)
                return

    # ---- keeping the line

    def _keeps_line(self, line: int | None, previous: Shown | None) -> bool:
        """Whether the new compilation shown should open on `line` (the source line before it came)."""
        shown = self.shown
        if line is None or previous is None or shown is None or not shown.comp.ok:
            return False
        source = shown.texts.get("source")
        if source is None or line > len(source):
            return False  # the reloaded file is shorter now
        old, new = previous.comp.kernel, shown.comp.kernel
        return (old.name, old.file) == (new.name, new.file) or shown.links.produced_ir(line)

    def _put_every_pane_on(self, line: int) -> None:
        """Every pane's cursor on source line `line` (the source pane) or its first line of IR, linked."""
        shown = self.shown
        links = shown.links
        visible = [pane for pane in self.panes if pane.display and pane.view.text is not None]
        source = next((pane for pane in visible if pane.stage == "source"), None)
        # so that the linker moves every other pane too
        self.source_line, self.linked_chain = (
            None,
            (),
        )
        if source is not None:
            source.view.move_cursor_to_index(line - 1, center=True)
            self.link_from(source.view, line - 1)
            return
        for pane in visible:  # no pane shows the source: each IR pane on the line's first IR line
            hits = links.ir_lines(pane.stage, line) if pane.stage in shown.texts else []
            if hits:
                pane.view.move_cursor_to_index(hits[0], center=True)
        active = self.active_view()
        if active.cursor_index is not None:
            self.link_from(active, active.cursor_index)
