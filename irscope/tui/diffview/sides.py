"""The two sides of a diff: what can be compared with the compilation shown, and the dialog that picks one.

A side is either a compilation the app already holds (the one shown, another launch of the same kernel,
the one shown before the last reload, edit or switch) or a SPEC the worker compiles first, the same
SPEC `irscope diff --left` takes: `config=2`, `target=sm_80`, `BLOCK_SIZE=512,num_warps=8`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from irscope.base.names import TARGETS
from irscope.tui.findings import FindingsView


@dataclass
class Side:
    label: str
    view: Any = None  # a CompilationView; None: compile `spec` first
    spec: str = ""
    findings: list | None = (
        None  # for a view whose worker is gone: the findings the app kept for it
    )
    short: str = ""  # the name in the title and the summary's columns ("launch 1", "sm_80")


def describe(comp) -> str:
    """`sm_90, 4 warps, n_elements:D x_ptr:D`: what tells two compilations of one kernel apart."""
    spec = (
        " ".join(f"{k}:{v}" for k, v in comp.specialization.items() if v)
        if comp.ok
        else "compile error"
    )
    return f"{comp.target}, {comp.num_warps} warps" + (f", {spec}" if spec else "")


def launches(app) -> list:
    """The compilations of the shown kernel that the file launched (the picker's rows for it)."""
    name = app.shown.comp.kernel.name
    return [c for c in app.comps if c.kernel.name == name]


def launch_index(app) -> int:
    rows = launches(app)
    key = app.shown.comp.key
    found = next((n for n, c in enumerate(rows) if c.key == key), None)
    if found is None and app.shown_index is not None and app.shown_index < len(app.comps):
        found = next(
            (n for n, c in enumerate(rows) if c.key == app.comps[app.shown_index].key), None
        )
    return found or 0


def kept_findings(app, key: int) -> list | None:
    """The findings the Findings view got for compilation `key` (None when it has none)."""

    try:
        return app.query_one(FindingsView).findings_of(key)
    except Exception:  # noqa: BLE001 - no Findings view: the summary says the findings are not known
        return None


def candidates(app) -> list[Side]:
    shown = app.shown.comp
    here = launch_index(app)
    rows = launches(app)
    listed = any(c.key == shown.key for c in rows)
    out = [
        Side(
            f"the compilation shown ({describe(shown)})",
            view=shown,
            short=f"launch {here}"
            if listed and len(rows) > 1
            else "shown"
            if listed
            else "shown, edited",
        )
    ]
    previous = getattr(app, "previous_comp", None)
    if (
        previous is not None
        and previous.key != shown.key
        and previous.kernel.name == shown.kernel.name
    ):
        out.append(
            Side(
                f"the one shown before ({describe(previous)})",
                view=previous,
                findings=kept_findings(app, previous.key),
                short="shown before",
            )
        )
    for n, comp in enumerate(rows):
        if comp.key != shown.key:
            out.append(Side(f"launch {n} ({describe(comp)})", view=comp, short=f"launch {n}"))
    chosen = shown.launch.autotune_index or 0
    for n, config in enumerate(shown.kernel.autotune_configs or []):
        if n != chosen:
            out.append(
                Side(
                    f"autotune config {n}: {config}",
                    spec=f"config={n},launch={here}",
                    short=f"config {n}",
                )
            )
    for target in TARGETS:
        if target != str(shown.target) and target.startswith("sm") == shown.target.is_nvidia:
            out.append(
                Side(
                    f"target {target} (launch {here})",
                    spec=f"target={target},launch={here}",
                    short=target,
                )
            )
    return out


def default_sides(app) -> tuple[Side | None, Side | None]:
    """The one shown before (when there is one) against the one shown; else the one shown against the
    kernel's next launch; else the one shown alone (nothing to compare yet)."""
    found = candidates(app)
    shown = found[0]
    if len(found) > 1 and found[1].short == "shown before":
        return found[1], shown
    other = next((s for s in found[1:] if s.short.startswith("launch ")), None)
    if other is None:
        return shown, None
    rows = launches(app)
    return (shown, other) if launch_index(app) < rows.index(other.view) else (other, shown)


class SideScreen(ModalScreen[Side]):
    """Pick one side: a listed compilation, or a SPEC typed as `irscope diff` takes it."""

    BINDINGS = [Binding("escape", "cancel", "Back")]

    def __init__(self, which: str, options: list[Side]) -> None:
        super().__init__()
        self.which = which
        self.options = options

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="diff-side"):
            yield Label(
                f"Compare with which {self.which} side? (Enter; Esc: back)", classes="dialog-title"
            )
            yield OptionList(
                *(Option(Text(s.label), id=str(n)) for n, s in enumerate(self.options)),
                id="diff-side-options",
            )
            yield Input(
                placeholder="or a SPEC: BLOCK_SIZE=512,num_warps=8 / config=1 / target=sm_80",
                id="diff-side-spec",
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.options[int(event.option.id)])

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if text:
            self.dismiss(Side(text, spec=text, short=text))

    def action_cancel(self) -> None:
        self.dismiss(None)
