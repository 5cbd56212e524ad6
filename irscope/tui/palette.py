"""The command palette's entries for the main screen (ctrl+p): stages, targets, autotune configs,
layouts and the main screen's actions, for what is shown now."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from textual.app import SystemCommand

from irscope.base.names import TARGETS
from irscope.tui.main.panes import LAYOUTS, STAGE_TITLES

if TYPE_CHECKING:
    from irscope.tui.main import MainScreen


def main_commands(main: MainScreen) -> Iterable[SystemCommand]:
    shown = main.shown
    if shown is None:
        return
    for stage in shown.stages:
        yield SystemCommand(
            f"Show {STAGE_TITLES[stage]} in this pane",
            f"This pane shows the {stage} stage",
            lambda s=stage: main.action_set_stage(s),
        )
    current = str(shown.comp.target)
    for target in TARGETS:
        if target != current:
            yield SystemCommand(
                f"Compile for {target}",
                "Recompile this launch for another target",
                lambda t=target: main.recompile_in_background(target=t),
            )
    yield SystemCommand(
        "Edit constexprs and launch options",
        "num_warps, num_stages, BLOCK sizes…",
        main.action_edit,
    )
    kernel = shown.comp.kernel
    chosen = shown.comp.launch.autotune_index or 0
    # a config its autotuner's pruning left out has no launch
    tried = set(shown.comp.launch.autotune_tried)
    for index, config in enumerate(kernel.autotune_configs or []):
        if index != chosen and (not tried or index in tried):
            yield SystemCommand(
                f"Autotune config {index}: {config}",
                f"Compile {kernel.name} with this config",
                lambda i=index: main.compile_config_in_background(i),
            )
    yield SystemCommand(
        "Toggle colour links", "Colour each source line's IR", main.action_toggle_colour
    )
    yield SystemCommand(
        "Toggle debug metadata", "#loc, !DILocation, .loc, .file", main.action_toggle_debug
    )
    for mode in LAYOUTS:
        yield SystemCommand(
            f"Layout: {mode}", "Arrange the panes", lambda m=mode: main.linked.set_layout(m)
        )
    yield SystemCommand("Maximise or restore this pane", "", main.action_maximize_pane)
    yield SystemCommand("Reload the file", "After editing it", main.action_reload)
    yield SystemCommand(
        "Info panels",
        "Show the panels, the next panel, or hide them (i)",
        main.action_toggle_panels,
    )
    yield SystemCommand(
        "Findings", "What costs this kernel time, ranked (f)", main.action_toggle_findings
    )
    yield SystemCommand("Step through the kernel", "The stepper (ctrl+t)", main.action_stepper)
    if len(main.comps) > 1:
        yield SystemCommand("Pick another kernel or compilation", "", main.action_pick)
    line = main.linked.source_line
    if line is not None:
        yield SystemCommand(
            f"Jump to source line {line}",
            "In the source pane",
            lambda: main.linked.jump_source(line),
        )
