"""The TUI's memory marks, legend and Memory panel on real kernels (Pilot + a snapshot)."""

from __future__ import annotations

import asyncio

from conftest import kernel_path, snapshot_source
from tui_helpers import pane_showing, run_async, source_line_of, wait_until_shown

from irscope.tui.app import IrscopeApp
from irscope.tui.panels.memory import MemoryPanel

ADD = kernel_path("add.py")
MISALIGNED = kernel_path("misaligned.py")


def row_text(view, index: int) -> str:
    view.move_cursor_to_index(index)
    row = view.row_of(index) - int(view.scroll_offset.y)
    return view.render_line(row).text


async def open_memory_panel(app, pilot) -> MemoryPanel:
    await pilot.press("i")
    await pilot.pause()
    panel = app.query_one(MemoryPanel)
    tabs = app.query_one("#panels")
    tabs.active = panel.parent.id
    await pilot.pause()
    app.main.refresh_panels()
    await pilot.pause()
    return panel


async def wait_for_what_if(app, pilot, panel: MemoryPanel, timeout: float = 120.0) -> None:
    for _ in range(int(timeout / 0.1)):
        analysis = next(iter(panel._cache.values()), None)
        if analysis is not None and analysis.what_if_state != "pending":
            await pilot.pause()
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the what-if recompile did not finish")


@run_async
async def test_gutter_marks_vector_and_masked_accesses():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(180, 40)) as pilot:
        await wait_until_shown(app, pilot)
        source, ptx = pane_showing(app, "source"), pane_showing(app, "ptx")
        x_load = source_line_of(ADD, "x = tl.load(") - 1
        assert source.view.memory_marks[x_load] == {"vector", "masked"}
        assert "Vm" in row_text(source.view, x_load)
        first_ld = next(i for i, t in enumerate(ptx.view.text.lines) if "ld.global" in t)
        assert "Vm" in row_text(ptx.view, first_ld)
        plain = next(
            i for i, t in enumerate(ptx.view.text.lines) if "mov.u32" in t and i < first_ld
        )
        assert "V" not in row_text(ptx.view, plain).split("mov.u32")[0]


@run_async
async def test_memory_panel_says_why_and_shows_the_what_if():
    app = IrscopeApp(MISALIGNED, target="sm_90")
    async with app.run_test(size=(180, 50)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("enter")  # the picker: launch 0, n_elements = 1000
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        source = pane_showing(app, "source")
        x_load = source_line_of(MISALIGNED, "x = tl.load(")
        assert source.view.memory_marks[x_load - 1] == {"scalar", "masked"}
        panel = await open_memory_panel(app, pilot)
        app.main.linked.focus_pane(0)
        source.view.move_cursor_to_index(x_load - 1, notify=True)
        await pilot.pause()
        await wait_for_what_if(app, pilot, panel)
        text = panel.plain_text()
        assert f"line {x_load} (ptx)" in text and "ld.global.b32" in text and "4 B/thread" in text
        assert "not vectorized: load of x_ptr is 4 B per thread" in text
        assert "n_elements = 1000, which is not a multiple of 16" in text
        assert "what if n_elements 1000 -> 1008: load 4 B → 16 B" in text
        assert "occupancy" in text and "64 of 64 warps per SM" in text
        assert "vector" in text and "convert layout" in text  # the legend


def test_snapshot_marks_and_memory_panel(snap_compare):
    """The misaligned launch: scalar/masked marks in every pane, the Memory panel on `x = tl.load`
    with the why, the fix, the what-if and the legend."""

    async def run_before(pilot):
        app = pilot.app
        await wait_until_shown(app, pilot)
        await pilot.press("enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        panel = await open_memory_panel(app, pilot)
        app.main.linked.focus_pane(0)
        pane_showing(app, "source").view.move_cursor_to_index(
            source_line_of(MISALIGNED, "x = tl.load(") - 1, notify=True
        )
        await pilot.pause()
        await wait_for_what_if(app, pilot, panel)
        await pilot.pause()

    assert snap_compare(
        IrscopeApp(snapshot_source(MISALIGNED), target="sm_90"),
        terminal_size=(160, 48),
        run_before=run_before,
    )


@run_async
async def test_memory_panel_lists_the_kernel_by_line_away_from_accesses():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(180, 50)) as pilot:
        await wait_until_shown(app, pilot)
        panel = await open_memory_panel(app, pilot)
        source = pane_showing(app, "source")
        app.main.linked.focus_pane(0)
        source.view.move_cursor_to_index(
            source_line_of(ADD, "pid = tl.program_id") - 1, notify=True
        )
        await pilot.pause()
        text = panel.plain_text()
        assert "no memory access in ptx" in text
        for n in (26, 27):
            assert f"line {n}" in text
        assert "Vm 2 load global 16 B" in text and "Vm 2 store global 16 B" in text
