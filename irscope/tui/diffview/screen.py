"""Diff mode (`D` in the main view): two compilations of the shown kernel, one stage, side by side and
aligned by source line, under a summary of what each costs.

The worker diffs (worker/diffs.py runs engine/diff/sides.py, the diff `irscope diff` prints); this screen only
asks and draws. The two panes are the two halves of one list, so they always show the same source line
on the same row: for each source line its accesses and why they are not vectorized, then what it became
on each side, instructions only on the left marked '-', only on the right '+'."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Static

from irscope.base.errors import IrscopeError
from irscope.tui.asker import Asker
from irscope.tui.diffview.render import changed_rows, row_lines, summary
from irscope.tui.diffview.sides import Side, SideScreen, candidates, default_sides, launch_index
from irscope.tui.messages import DiffComputed, Failed, Request
from irscope.tui.widgets.key_footer import KeyFooter
from irscope.tui.widgets.line_list import LineList

NOTHING_TO_DIFF = (
    "{kernel} has one launch and nothing shown before it: nothing to diff yet. "
    "Press b to pick the other side: an autotune config, another target, or a SPEC such as "
    "BLOCK_SIZE=512,num_warps=8 (or edit with e, reload with r, and come back: the compilation "
    "shown before is kept)."
)


class DiffRows(LineList):
    """The two panes: each line is the left side's half, a bar, the right side's half."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lines: list[tuple[Text, int]] = []

    def row_text(self, index: int) -> Text:
        return self.lines[index][0]

    def set_lines(
        self, lines: list[tuple[Text, int]], width: int, keep_row: int | None = None
    ) -> None:
        self.lines = lines
        self.reset(len(lines), width)
        target = (
            next((n for n, (_, row) in enumerate(lines) if row == keep_row), 0)
            if keep_row is not None
            else 0
        )
        self.cursor = -1
        self.move_to(target, center=True)

    def reveal(self) -> None:
        """The cursor's line in view, a third of the way down (the summary above may have changed size)."""
        height = self.scrollable_content_region.height
        if height and not self.scroll_offset.y <= self.cursor < self.scroll_offset.y + height:
            self.scroll_to(y=max(0, self.cursor - height // 3), animate=False, immediate=True)

    def on_resize(self) -> None:
        self.call_after_refresh(self.reveal)

    @property
    def row(self) -> int | None:
        """Which row of the diff (which source line) the cursor is on."""
        return self.lines[self.cursor][1] if 0 <= self.cursor < len(self.lines) else None


def _diff(
    request: Request, session, shown, sides: tuple[Side, Side], stage: str | None, here: int
) -> DiffComputed:
    """The sides compiled where they have no view yet (a SPEC: launch `here` unless it names one), then
    the worker's diff of them."""
    if session is None:
        raise IrscopeError("the file is not open (reload with r in the main view)")
    views = []
    for side in sides:
        view = side.view
        if view is None:
            spec = side.spec if "launch=" in side.spec else f"launch={here},{side.spec}"
            view = session.request("compile_spec", key=shown.key, spec=spec)
        views.append(view)
    described = [
        {"view": view, "label": s.short or s.label, "findings": s.findings}
        for s, view in zip(sides, views)
    ]
    return DiffComputed(request, views, session.request("diff", sides=described, stage=stage))


class DiffScreen(Asker, Screen):
    DEFAULT_CSS = """
    DiffScreen { layout: vertical; }
    DiffScreen #diff-title { height: 1; background: $panel; padding: 0 1; }
    DiffScreen #diff-summary { height: auto; max-height: 40%; border-bottom: solid $primary-darken-2; }
    DiffScreen #diff-rows { height: 1fr; }
    DiffScreen #diff-status { height: auto; max-height: 3; padding: 0 1; background: $panel; }
    """

    BINDINGS = [
        Binding("a", "pick('left')", "Left side", id="diff.left"),
        Binding("b", "pick('right')", "Right side", id="diff.right"),
        Binding("x", "swap", "Swap", id="diff.swap"),
        Binding("s", "stage(1)", "Stage", id="diff.stage"),
        Binding("S", "stage(-1)", "Prev stage", show=False),
        Binding(
            "right_square_bracket", "changed(1)", "Next change", key_display="]", id="diff.next"
        ),
        Binding("left_square_bracket", "changed(-1)", "Prev change", key_display="[", show=False),
        Binding(
            "u",
            "toggle_unchanged",
            "Unchanged",
            id="diff.unchanged",
            tooltip="Show or hide the source lines that became the same on both sides",
        ),
        Binding("escape", "leave", "Back", id="diff.leave"),
    ]

    def __init__(self, app) -> None:
        super().__init__()
        self.main = app
        self.sides: list[Side | None] = list(default_sides(app))
        self.stage: str | None = None  # None: the core's default (PTX, or AMDGCN)
        self.doc: dict | None = None
        self.show_unchanged = True

    def compose(self) -> ComposeResult:
        yield Static(Text("Diff"), id="diff-title")
        with VerticalScroll(id="diff-summary"):
            yield Static(Text(""), id="diff-summary-body")
        yield DiffRows(id="diff-rows")
        yield Static(Text(""), id="diff-status")
        yield KeyFooter({}, frozenset({"toggle_unchanged", "swap"}))

    def on_mount(self) -> None:
        self.query_one(DiffRows).focus()
        self.recompute()

    # ---- asking the worker

    def recompute(self) -> None:
        left, right = self.sides
        if right is None or left is None:
            self.doc = None
            self._title()
            self._status(NOTHING_TO_DIFF.format(kernel=self.main.shown.comp.kernel.name), "yellow")
            self.query_one(DiffRows).set_lines([], 1)
            return
        self._status(f"comparing {left.short or left.label} with {right.short or right.label}…", "")
        self.ask(
            "diff",
            _diff,
            self.main.session,
            self.main.shown.comp,
            (left, right),
            self.stage,
            launch_index(self.main),
            about=(left, right),
        )

    def on_diff_computed(self, message: DiffComputed) -> None:
        if not self.answered(message):
            return
        for side, view in zip(message.request.about, message.views):
            side.view = view  # compiled once: the next diff with this side reuses it
        self._answered(message.doc)

    # said on screen; the user picks another side
    def request_failed(self, message: Failed) -> None:
        self._answered(message.failure.message)

    def _answered(self, doc: dict | str) -> None:
        # a view the user has left is out of the screen stack at once, while Textual may still be removing it
        # (it is attached for a while): its answers are dropped
        if self not in self.app.screen_stack:
            return
        try:
            if isinstance(doc, str):
                self._failed(doc)
            else:
                self._show(doc)
        except NoMatches:  # removed between the check and the update
            pass

    def _failed(self, message: str) -> None:
        self._status(f"cannot diff: {message}", "bold red")

    def _show(self, doc: dict) -> None:
        rows = self.query_one(DiffRows)
        keep = (
            rows.row if self.doc is not None and self.doc.get("lines") == doc.get("lines") else None
        )
        self.doc = doc
        self.stage = doc["stage"]
        self._title()
        self.query_one("#diff-summary-body", Static).update(summary(doc, self.size.width))
        self._fill(keep)
        changed = changed_rows(doc)
        if keep is None and changed:
            self._go_to_row(changed[0])
        same = sum(1 for r in doc["lines"] if not r["changed"])
        if not doc["stage"]:
            self._status("a side did not compile: the summary says why", "bold red")
        elif not changed:
            self._status(
                f"{doc['stage']}: every source line became the same instructions on both sides "
                "(register numbers and debug locations aside); the summary shows what differs",
                "",
            )
        else:
            self._status(
                f"{doc['stage']}: {len(changed)} of {len(doc['lines'])} source lines changed, "
                f"{same} became the same instructions; '-' only left, '+' only right; ] next",
                "",
            )

    # ---- drawing

    def _fill(self, keep_row: int | None = None) -> None:
        rows = self.query_one(DiffRows)
        if self.doc is None:
            return
        width = max(20, rows.size.width - 1 or self.size.width - 1)
        rows.set_lines(row_lines(self.doc, width, self.show_unchanged), width, keep_row)
        self._line_status()

    def _title(self) -> None:
        title = Text(" Diff ", style="bold reverse")
        title.append(f" {self.main.shown.comp.kernel.name}", style="bold")
        if self.stage:
            title.append(f"  stage {self.stage}")
        for side, name, style in ((self.sides[0], "L", "red"), (self.sides[1], "R", "green")):
            title.append(f"  {name}: ", style="dim")
            title.append((side.short or side.label) if side else "(none: b picks it)", style=style)
        self.query_one("#diff-title", Static).update(title)

    def _status(self, message: str, style: str) -> None:
        self.query_one("#diff-status", Static).update(Text(message, style=style))

    def _line_status(self) -> None:
        rows = self.query_one(DiffRows)
        if self.doc is None or rows.row is None:
            return
        row = self.doc["lines"][rows.row]
        where = f"source line {row['source_line']}" if row["source_line"] else "no source line"
        counts = f"{len(row['left'])} instructions left, {len(row['right'])} right"
        what = (
            "instructions changed"
            if row["changed"]
            else "its memory access changed"
            if rows.row in changed_rows(self.doc)
            else "the same on both sides"
        )
        self._status(
            f"{where}: {counts}; {what}", "bold yellow" if what != "the same on both sides" else ""
        )

    def on_line_list_cursor_moved(self, message: LineList.CursorMoved) -> None:
        self._line_status()

    def on_resize(self) -> None:
        if self.doc is not None:
            self.call_after_refresh(lambda: self._fill(self.query_one(DiffRows).row))

    def _go_to_row(self, row: int) -> None:
        rows = self.query_one(DiffRows)
        index = next((n for n, (_, r) in enumerate(rows.lines) if r == row), None)
        if index is not None:
            rows.move_to(index, center=True)
            # a new list's height is known after the next layout
            rows.call_after_refresh(rows.reveal)

    # ---- keys

    def action_pick(self, which: str) -> None:
        def chosen(side: Side | None) -> None:
            if side is not None:
                self.sides[0 if which == "left" else 1] = side
                self.recompute()

        self.app.push_screen(SideScreen(which, candidates(self.main)), chosen)

    def action_swap(self) -> None:
        self.sides.reverse()
        self.recompute()

    def action_stage(self, delta: int) -> None:
        if self.doc is None or not self.doc.get("stages"):
            return
        stages = self.doc["stages"]
        at = stages.index(self.stage) if self.stage in stages else 0
        self.stage = stages[(at + delta) % len(stages)]
        self.recompute()

    def action_changed(self, direction: int) -> None:
        rows = self.query_one(DiffRows)
        if self.doc is None or rows.row is None:
            return
        changed = changed_rows(self.doc)
        after = [n for n in changed if (n > rows.row if direction > 0 else n < rows.row)]
        if not after:
            self._status("no more changed source lines", "dim")
            return
        self._go_to_row(after[0] if direction > 0 else after[-1])

    def action_toggle_unchanged(self) -> None:
        self.show_unchanged = not self.show_unchanged
        self._fill(self.query_one(DiffRows).row)

    def action_leave(self) -> None:
        self.app.pop_screen()
