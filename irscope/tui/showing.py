"""Putting things on the main screen's panes: the user's file while it loads, a compilation once it is
prepared, or why the file could not be opened; the header line and the picker's rows. Runs on the UI
thread, called by the screen's message handlers."""

from __future__ import annotations

import os
import textwrap
from typing import TYPE_CHECKING, Any

from rich.text import Text

from irscope.base.textsafe import safe_text
from irscope.tui import keep_line
from irscope.tui.highlight import StageText
from irscope.tui.panes import AMD_PANES, NVIDIA_PANES, STAGE_TITLES

if TYPE_CHECKING:
    from irscope.tui.loader import OpenFailure, Shown
    from irscope.tui.main_screen import MainScreen
    from irscope.tui.panes import StagePane


def _read_source(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return safe_text(f.read())
    except OSError:
        return None


def show_source_while_loading(main: MainScreen) -> None:
    """The user's file in the source pane at once; the other panes wait for the compiler."""
    text = _read_source(main.path)
    if text is None:
        return
    pane = main.panes[0]
    pane.stage = "source"
    pane.view.show("source", StageText("source", text), None, lambda line: None)
    pane.set_title(
        Text(" Source ", style="bold reverse")
        + Text(f" {len(text.splitlines())} lines", style="dim")
    )
    for other in main.panes[1:]:
        other.set_title(
            Text(f" {STAGE_TITLES.get(main.pane_stages[other.number], '')} ", style="bold")
            + Text("  compiling…", style="dim")
        )


def show_compilation(main: MainScreen, shown: Shown) -> None:
    """Every pane on its stage of `shown`; the cursor on the line the user was on (a recompile, a pick, a
    reload), else on the kernel's first line that produced IR."""
    from irscope.tui.findings import FindingsView

    previous, line_before = main.shown, main.source_line
    cursors = {}
    if previous is not None:
        cursors = {pane.number: (pane.stage, pane.view.cursor_index) for pane in main.panes}
    main.shown = shown
    main.failure = None
    comp = shown.comp
    if previous is not None and previous.comp.key != comp.key:  # diff mode (D) compares with it
        main.previous_comp = previous.comp
    defaults = NVIDIA_PANES if comp.target.is_nvidia else AMD_PANES
    stages = shown.stages
    main.pane_stages = [s if s in stages else defaults[n] for n, s in enumerate(main.pane_stages)]
    main.pane_stages = [s if s in stages else "llir" for s in main.pane_stages]
    for pane in main.panes:
        old_stage, old_index = cursors.get(pane.number, (None, None))
        fill_pane(
            main,
            pane,
            main.pane_stages[pane.number],
            cursor_index=old_index if old_stage == main.pane_stages[pane.number] else None,
        )
    main.update_header()
    if comp.failure is not None:
        f = comp.failure
        where = f"line {f.line}: " if f.line else ""
        main.set_progress(
            f"✗ {comp.kernel.name} did not compile — {where}{f.message}  (fix the file, press r)",
            error=True,
        )
        source = main.panes[0]
        if source.stage == "source" and f.line:
            source.view.marks = {f.line - 1: "error"}
            source.view.move_cursor_to_index(f.line - 1, center=True)
    else:
        main.set_progress("")
    main.query_one(FindingsView).show_compilation(
        shown
    )  # asks the worker; marks the gutter when it answers
    main.apply_layout()
    main.call_after_refresh(main.reveal_cursors)  # after layout, when panes know their height
    kept = keep_line.keeps_line(main, line_before, previous)  # t, e, p, r: the line the user was on
    if (
        not kept
        and comp.ok
        and main.panes[0].stage == "source"
        and (previous is None or previous.comp.kernel.name != comp.kernel.name)
    ):
        _start_at_kernel_body(main)
    main.focus_pane(main.active_pane)
    view = main.panes[main.active_pane].view
    if kept:
        keep_line.put_every_pane_on(main, line_before)
    elif view.cursor_index is not None and comp.ok:
        main.link_from(view, view.cursor_index)
    main.refresh_panels()


def _start_at_kernel_body(main: MainScreen) -> None:
    """First view of a kernel: the cursor on its first line that produced IR, so the links show."""
    links, start = main.shown.links, main.shown.comp.kernel.line
    first = next((n for n in range(start + 1, start + 400) if links.produced_ir(n)), None)
    if first is not None:
        main.active_pane = 0
        main.panes[0].view.move_cursor_to_index(first - 1, center=True)


def fill_pane(
    main: MainScreen, pane: StagePane, stage: str, cursor_index: int | None = None
) -> None:
    shown = main.shown
    text = shown.texts.get(stage)
    if text is None:  # a stage this target lacks
        text = StageText("error", f"{stage} does not exist for {shown.comp.target}\n")
    links = shown.links.stage(stage) if shown.comp.ok or stage == "source" else None
    pane.stage = stage
    pane.view.set_options(colouring=main.colouring, show_debug=main.show_debug)
    pane.view.memory_marks = shown.marks.get(stage, {})
    pane.view.show(
        stage,
        text,
        links,
        shown.links.colour_slot,
        cursor_index=cursor_index,
        full_text=shown.full_texts.get(stage),
    )
    pane.view.set_finding_marks(shown.finding_marks.get(stage, {}))
    main.update_pane_title(pane)


def show_open_failure(main: MainScreen, failure: OpenFailure) -> None:
    """The file could not be opened or compiled: say why, show its text, mark the line."""
    from irscope.tui.findings import FindingsView

    main.failure = failure
    main.set_progress(
        f"✗ {failure.message.splitlines()[0]}  (r reloads)", error=True
    )  # the message says the fix
    main.query_one(FindingsView).show_no_compilation()
    source = _read_source(main.path) or ""
    message = "\n".join(textwrap.fill(part, 34) for part in safe_text(failure.message).splitlines())
    detail = message + (
        "\n\n" + safe_text(failure.detail) if failure.detail else ""
    )  # narrow panes
    for pane in main.panes:
        stage = "source" if pane.number == 0 else "error"
        pane.stage = stage
        text = StageText(stage, source if stage == "source" else detail)
        pane.view.show(stage, text, None, lambda line: None)
        pane.set_title(Text(f" {STAGE_TITLES[stage]}", style="bold"))
    if failure.line:
        view = main.panes[0].view
        view.marks = {failure.line - 1: "error"}
        view.move_cursor_to_index(failure.line - 1, center=True)
    main.apply_layout()


def header_text(main: MainScreen) -> Text:
    """The kernel, its file and line, target, grid, launch options and resources, in one line."""
    comp = main.shown.comp
    res = comp.resources
    grid = "×".join(map(str, comp.launch.grid)) if comp.launch.grid else "?"
    head = Text()
    head.append(f" {comp.kernel.name} ", style="bold reverse")
    head.append(f" {os.path.basename(comp.kernel.file)}:{comp.kernel.line}", style="dim")
    if comp.kernel.inductor:
        head.append(f"  {comp.kernel.inductor_ops}", style="cyan")
        if comp.kernel.generated_for_cpu:
            head.append(
                "  generated for CPU: a GPU run may choose other block sizes", style="yellow"
            )

    def item(label: str, value: Any) -> None:
        head.append("  ")
        head.append(f"{label} ", style="dim")
        head.append(str(value), style="bold")

    item("target", comp.target)
    item("grid", grid)
    if comp.kernel.is_autotuned:
        item(
            "config",
            f"{(comp.launch.autotune_index or 0)}/{len(comp.kernel.autotune_configs or [])}",
        )
    item("warps", comp.num_warps)
    item("stages", comp.num_stages)
    if comp.ok:
        item("regs", res.registers)
        item("spills", res.spills)
        item("smem", f"{res.shared_bytes or 0} B")
    if len(main.comps) > 1:
        number = next((n + 1 for n, c in enumerate(main.comps) if c.key == comp.key), "·")
        head.append(f"  ({number}/{len(main.comps)}; p: pick)", style="dim")
    if main.ws is not None and main.ws.device.startswith("virtual"):
        # no GPU here: the file saw irscope's virtual one, and no timing it printed is a measurement
        head.append("  virtual GPU", style="yellow")
    if comp.launch.guesses:
        head.append("  guessed: ", style="bold yellow")
        head.append(
            ", ".join(
                f"{n}={v.split()[1] if v.startswith('a *') else v.split()[0]}"
                for n, v in comp.launch.guesses.items()
            ),
            style="yellow",
        )
    if comp.launch.interp_error:
        head.append("  interpreter failed", style="bold yellow")
    if main.ws is not None and main.ws.missing:  # said whole in the picker (p) and the notes
        head.append(f"  {len(main.ws.missing)} kernel(s) not reached (p)", style="bold yellow")
    return head


def missing_lines(missing: list[dict]) -> Text:
    """The picker's word on the file's kernels this run did not launch: each with why and how to see it."""
    text = Text()
    for m in missing:
        text.append(f"not reached: {m['kernel']} (line {m['line']})", style="bold yellow")
        text.append(f": {safe_text(m['reason'])}\n", style="yellow")
        text.append(f"  to see it: {m['how']}\n", style="dim")
    text.rstrip()
    return text


def picker_rows(comps: list) -> list[dict[str, Any]]:
    """The picker's rows: name, line, target, grid, warps, registers, spills, specialization."""
    rows = []
    for comp in comps:
        try:
            res = comp.resources if comp.ok else None
        except Exception:  # cuobjdump failed: the row shows no registers rather than the app dying
            res = None
        spec = (
            " ".join(f"{k}:{v}" for k, v in comp.specialization.items() if v)
            if comp.ok
            else "compile error"
        )
        name = comp.label
        if comp.kernel.inductor:  # the ops it fuses, and where Inductor made it for the CPU
            name += f"  [{comp.kernel.inductor_ops}]" + (
                "  (CPU-generated)" if comp.kernel.generated_for_cpu else ""
            )
        rows.append(
            {
                "name": name,
                "line": comp.kernel.line,
                "target": str(comp.target),
                "grid": "×".join(map(str, comp.launch.grid)) if comp.launch.grid else "?",
                "warps": comp.num_warps,
                "regs": res.registers if res else "—",
                "spills": res.spills if res else "—",
                "spec": spec or "—",
            }
        )
    return rows
