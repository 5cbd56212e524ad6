"""The pipeline view (`P` in the main view): the compiler pass by pass for the compilation shown.

Opening it is the request: the worker compiles the kernel once more with Triton's pass dumps on
(engine/compile/passes.py, what `irscope passes` prints) and the view lists every pass with how many IR lines it
changed; `●` marks the passes that changed the IR of the source line the cursor was on in the main view.
The right pane is the selected pass's before/after: the lines it removed ('-') and added ('+'). A
capture is kept for the last few compilations of a load (MainScreen.pass_captures); one that comes
after the view was left is dropped (P asks again). It is never taken when a file opens."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Static

from irscope.ir.sourcemap import consecutive_runs
from irscope.tui.asker import Asker
from irscope.tui.messages import Failed, PassesCaptured, Request
from irscope.tui.widgets.key_footer import KeyFooter
from irscope.tui.widgets.line_list import LineList

CAPTURING = "capturing: compiling {kernel} once more with the pass dumps on (about as long as its first compile)…"


def ranges(numbers: list[int]) -> str:
    return (
        ",".join(f"{a}" if b == a + 1 else f"{a}-{b - 1}" for a, b in consecutive_runs(numbers))
        or "-"
    )


class PassList(LineList):
    """One row per pass: `● 10 tritongpu-coalesce   16`."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.steps: list[dict] = []
        self.line: int | None = None

    def row_text(self, index: int) -> Text:
        step = self.steps[index]
        touched = self.line is not None and self.line in step["source_lines"]
        text = Text()
        text.append("● " if touched else "  ", style="bold yellow")
        text.append(f"{step['index']:>3} ", style="dim")
        text.append(
            f"{step['changed_lines']:>4} ", style="cyan" if step["changed_lines"] else "dim"
        )
        text.append(
            step["name"], style="bold" if touched else ("" if step["changed_lines"] else "dim")
        )
        return text

    def show(self, steps: list[dict], line: int | None, keep: int | None) -> None:
        self.steps, self.line = steps, line
        self.reset(len(steps), max((len(s["name"]) + 14 for s in steps), default=10))
        at = next((n for n, s in enumerate(steps) if s["index"] == keep), None)
        if at is None and line is not None:
            at = next((n for n, s in enumerate(steps) if line in s["source_lines"]), None)
        self.cursor = -1
        self.move_to(at or 0, center=True)

    @property
    def step(self) -> dict | None:
        return self.steps[self.cursor] if 0 <= self.cursor < len(self.steps) else None


class PassDiff(LineList):
    """What one pass changed, as a diff."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lines: list[Text] = []

    def row_text(self, index: int) -> Text:
        return self.lines[index]

    def show(self, step: dict | None) -> None:
        if step is None:
            self.lines = [Text("no pass selected")]
        else:
            head = Text(f"pass {step['index']}: {step['name']} → {step['stage']}", style="bold")
            said = Text(
                f"{step['title']}; {step['changed_lines']} lines changed; source lines "
                f"{ranges(step['source_lines'])}",
                style="dim",
            )
            self.lines = [head, said]
            if not step["dumped_before"]:
                self.lines.append(
                    Text(
                        "the IR before this pass (the first LLVM pass) is not dumped: no diff",
                        style="yellow",
                    )
                )
            elif not step["diff"]:
                self.lines.append(
                    Text(
                        "this pass changed no instruction (SSA names and locations aside)",
                        style="dim",
                    )
                )
            for mark, line in step["diff"]:
                self.lines.append(Text(f"{mark} {line}", style="red" if mark == "-" else "green"))
        self.reset(len(self.lines), max(len(t) for t in self.lines) + 1)
        self.cursor = -1
        self.move_to(0)
        self.scroll_to(x=0, y=0, animate=False)


def _capture(request: Request, comp) -> PassesCaptured:
    steps = comp.call("passes")
    return PassesCaptured(
        request,
        steps or "this Triton printed no pass dumps (irscope passes needs Triton 3.6 or newer)",
    )


class PipelineScreen(Asker, Screen):
    DEFAULT_CSS = """
    PipelineScreen { layout: vertical; }
    PipelineScreen #pipe-title { height: auto; max-height: 3; background: $panel; padding: 0 1; }
    PipelineScreen #pipe-body { height: 1fr; }
    PipelineScreen #pipe-passes { width: 40%; min-width: 26; border-right: solid $primary-darken-2; }
    PipelineScreen #pipe-diff { width: 1fr; }
    PipelineScreen #pipe-status { height: auto; max-height: 3; padding: 0 1; background: $panel; }
    """

    BINDINGS = [
        Binding(
            "l",
            "only_line",
            "This line",
            id="passes.line",
            tooltip="Only the passes that changed the source line's IR (again: every pass that changed IR)",
        ),
        Binding(
            "a", "all", "All passes", id="passes.all", tooltip="The passes that changed nothing too"
        ),
        Binding("escape", "leave", "Back", id="passes.leave"),
    ]

    def __init__(self, app) -> None:
        super().__init__()
        self.main = app
        self.comp = app.shown.comp
        self.line: int | None = app.linked.source_line
        self.steps: list[dict] | str | None = None  # None: capturing; str: why the capture failed
        self.only_line = False
        self.every_pass = False

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="pipe-title")
        with Horizontal(id="pipe-body"):
            yield PassList(id="pipe-passes")
            yield PassDiff(id="pipe-diff")
        yield Static(Text(""), id="pipe-status")
        yield KeyFooter({}, frozenset({"all"}))

    def on_mount(self) -> None:
        self.query_one(PassList).focus()
        kept = self.main.pass_captures.get(self.comp.key)
        if kept is not None:
            self._captured(kept)
            return
        self._title(Text(CAPTURING.format(kernel=self.comp.kernel.name)))
        self.ask("passes", _capture, self.comp, about=self.comp.key)

    def on_passes_captured(self, message: PassesCaptured) -> None:
        if self.answered(message):
            steps = message.steps
            if isinstance(steps, list):  # a failure is not kept: P again tries again
                self.main.keep_passes(message.request.about, steps)
            self._captured(steps)

    def request_failed(self, message: Failed) -> None:
        self._captured(message.failure.message)

    def _captured(self, steps: list[dict] | str) -> None:
        self.steps = steps
        if self not in self.app.screen_stack:  # the view was left meanwhile: nothing to draw on
            return
        try:
            self._fill()
        except NoMatches:  # removed between the check and the update
            pass

    def _title(self, text: Text) -> None:
        self.query_one("#pipe-title", Static).update(text)

    def _fill(self, keep: int | None = None) -> None:
        passes, diff = self.query_one(PassList), self.query_one(PassDiff)
        if not isinstance(self.steps, list):
            self._title(Text(f"pass capture failed: {self.steps}", style="bold red"))
            passes.show([], None, None)
            diff.lines = [Text("no passes to show")]
            diff.reset(1, 20)
            return
        steps = self.steps
        mlir = sum(1 for s in steps if s["stage"] != "llir")
        touching = [s for s in steps if self.line is not None and self.line in s["source_lines"]]
        title = Text(" Passes ", style="bold reverse")
        title.append(
            f" {self.comp.kernel.name} on {self.comp.target}: {len(steps)} ran ({mlir} MLIR, "
            f"{len(steps) - mlir} LLVM), {sum(1 for s in steps if s['changed_lines'])} changed the IR"
        )
        if self.line is not None:
            title.append(f"; source line {self.line}: ", style="bold")
            title.append(
                ", ".join(s["name"] for s in touching) if touching else "no pass changed its IR",
                style="bold yellow",
            )
        self._title(title)
        shown = [
            s
            for s in steps
            if (self.every_pass or s["changed_lines"] or not s["dumped_before"])
            and (not self.only_line or s in touching)
        ]
        passes.show(shown, self.line, keep)
        diff.show(passes.step)
        self._status()

    def _status(self) -> None:
        step = self.query_one(PassList).step
        what = "every pass" if self.every_pass else "passes that changed the IR"
        if self.only_line:
            what = f"passes that changed source line {self.line}"
        said = f"{what}; ● changed source line {self.line}" if self.line is not None else what
        if step is not None:
            said += f"  ·  {step['name']}: {step['changed_lines']} lines, source lines {ranges(step['source_lines'])}"
        self.query_one("#pipe-status", Static).update(Text(said))

    def on_line_list_cursor_moved(self, message: LineList.CursorMoved) -> None:
        if isinstance(message.widget, PassList):
            self.query_one(PassDiff).show(message.widget.step)
            self._status()

    def _refilter(self) -> None:
        step = self.query_one(PassList).step
        self._fill(step["index"] if step else None)

    def action_only_line(self) -> None:
        if self.line is None:
            self.query_one("#pipe-status", Static).update(
                Text("no source line under the cursor in the main view", style="yellow")
            )
            return
        self.only_line = not self.only_line
        self._refilter()

    def action_all(self) -> None:
        self.every_pass = not self.every_pass
        self._refilter()

    def action_leave(self) -> None:
        self.app.pop_screen()
