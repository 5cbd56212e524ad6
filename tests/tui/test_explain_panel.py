"""The Explain panel: in a tiny harness app, in the real app, and as an SVG snapshot."""

from __future__ import annotations

import pytest
from conftest import kernel_path, snapshot_source
from textual.app import App, ComposeResult
from textual.widgets import TabbedContent, TabPane
from tui_helpers import open_view, pane_showing, run_async, source_line_of, wait_until_shown

from irscope.tui.app import IrscopeApp
from irscope.tui.context import CursorContext
from irscope.tui.panels.explain import ExplainPanel

ADD = kernel_path("add.py")


@pytest.fixture(scope="module")
def add90():
    session, view = open_view(ADD)
    yield view
    session.close()


class Harness(App):
    def compose(self) -> ComposeResult:
        yield ExplainPanel()


@run_async
async def test_panel_explains_a_ptx_load_and_tells_the_story(add90):
    ptx = add90.stage("ptx").splitlines()
    index = next(i for i, line in enumerate(ptx) if "ld.global.v4.b32" in line)
    load_line = source_line_of(ADD, "x = tl.load(")
    app = Harness()
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.query_one(ExplainPanel)
        panel.show_context(
            CursorContext(add90, "ptx", index, add90.source_map.source_line("ptx", index))
        )
        await app.workers.wait_for_complete()
        await pilot.pause()
        e = panel.last_explanation
        assert e is not None and e.op == "ld.global.v4.b32"
        assert "16 bytes from global memory" in str(panel.query_one("#explain-line").render())
        assert (
            panel.last_story.startswith(f"Line {load_line}")
            or "ld.global.v4.b32" in panel.last_story
        )
        # Another line of the same source line reuses the cached story.
        panel.show_context(CursorContext(add90, "ttgir", 0, None))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert panel.last_explanation.op == "#ttg.blocked" and panel.last_story == ""


async def _open_explain_tab(app, pilot) -> ExplainPanel:
    await pilot.press("i")
    await pilot.pause()
    panel = app.query_one(ExplainPanel)
    tabs = app.query_one("#panels", TabbedContent)
    pane = next(a for a in panel.ancestors if isinstance(a, TabPane))
    tabs.active = pane.id
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    return panel


@run_async
async def test_real_app_explains_the_cursor_line():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until_shown(app, pilot)
        panel = await _open_explain_tab(app, pilot)
        assert panel.display
        line = source_line_of(ADD, "x = tl.load(")
        await pilot.press("g", *str(line), "enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        ctx = app.main.linked.cursor_context()
        assert ctx is not None and ctx.source_line == line
        assert "tt.load" in panel.last_story and "LDG.E.128" in panel.last_story


async def _focus(app, pilot, stage: str) -> None:
    pane = pane_showing(app, stage)
    for _ in range(6):
        if app.main.linked.active_pane == pane.number and pane.view.has_focus:
            return
        await pilot.press("tab")
        await pilot.pause()
    raise AssertionError(f"could not focus the {stage} pane")


async def explain_the_ptx_load_of_x(pilot) -> None:
    """add.py open: the Explain panel shown, the PTX cursor on the masked 16-byte load of `x`
    (also the README's screenshot)."""
    app = pilot.app
    await wait_until_shown(app, pilot)
    await _open_explain_tab(app, pilot)
    await pilot.press("g", *str(source_line_of(ADD, "x = tl.load(")), "enter")
    await pilot.pause()
    await _focus(app, pilot, "ptx")
    view = pane_showing(app, "ptx").view
    ptx = app.main.shown.comp.stage("ptx").splitlines()
    target = next(i for i, text in enumerate(ptx) if "ld.global.v4.b32" in text)
    while view.cursor_index is not None and view.cursor_index != target:
        await pilot.press("down" if view.cursor_index < target else "up")
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


def test_snapshot_explain_panel_on_a_ptx_load(snap_compare):
    """The PTX pane's cursor on the masked 16-byte load of `x`, the Explain panel open below."""
    assert snap_compare(
        IrscopeApp(snapshot_source(ADD), target="sm_90"),
        terminal_size=(160, 50),
        run_before=explain_the_ptx_load_of_x,
    )


def test_snapshot_explain_panel_on_a_sass_load_with_its_control_field(snap_compare):
    """The SASS pane's cursor on LDG.E.128: the panel decodes stall, yield and scoreboards from the cubin."""
    line = source_line_of(ADD, "x = tl.load(")

    async def run_before(pilot) -> None:
        app = pilot.app
        await wait_until_shown(app, pilot)
        await _open_explain_tab(app, pilot)
        await pilot.press("g", *str(line), "enter")
        await pilot.pause()
        await _focus(app, pilot, "ptx")
        await pilot.press("6")  # this pane shows SASS now
        await pilot.pause()
        view = pane_showing(app, "sass").view
        sass = app.main.shown.comp.stage("sass").splitlines()
        target = next(i for i, text in enumerate(sass) if "LDG.E.128" in text)
        while view.cursor_index is not None and view.cursor_index != target:
            await pilot.press("down" if view.cursor_index < target else "up")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = app.query_one(ExplainPanel)
        assert panel.last_explanation.op == "LDG.E.128"
        assert any(d.startswith("control [") for d in panel.last_explanation.details)

    assert snap_compare(
        IrscopeApp(snapshot_source(ADD), target="sm_90"),
        terminal_size=(160, 50),
        run_before=run_before,
    )
