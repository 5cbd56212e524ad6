"""The coalescing panel, in a tiny harness App and in the real app, on the strided example kernel."""

from __future__ import annotations

import asyncio
import time

import pytest
from conftest import kernel_path
from textual.app import App, ComposeResult
from tui_helpers import open_view, run_async, source_line_of

from irscope.analysis.coalescing.picture import warp_picture_lines
from irscope.analysis.coalescing.sectors import KernelCoalescing
from irscope.tui.context import CursorContext
from irscope.tui.panels.coalescing import CoalescingPanel

STRIDED = kernel_path("strided.py")
LOAD_LINE = source_line_of(STRIDED, "x = tl.load(")


@pytest.fixture(scope="module")
def strided_comp():
    session, view = open_view(STRIDED)
    yield view
    session.close()


class Harness(App):
    def __init__(self, comp, line: int):
        super().__init__()
        self.comp, self.line = comp, line

    def compose(self) -> ComposeResult:
        yield CoalescingPanel()

    def on_mount(self) -> None:
        self.point_at(self.line)

    def point_at(self, line: int) -> None:
        self.query_one(CoalescingPanel).show_context(
            CursorContext(self.comp, "source", line - 1, line)
        )


async def wait_for_analysis(app, pilot, timeout: float = 120.0) -> None:
    panel = app.query_one(CoalescingPanel)
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if any(isinstance(r, KernelCoalescing) for r in panel._analyses.values()):
            await pilot.pause()
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the coalescing analysis did not finish")


def body_text(app) -> str:
    from rich.console import Console

    console = Console(width=160, record=True, file=open("/dev/null", "w"))
    console.print(app.query_one("#coalescing-body").content)
    return console.export_text()


@run_async
async def test_panel_draws_one_warp_of_the_strided_load(strided_comp):
    app = Harness(strided_comp, LOAD_LINE)
    async with app.run_test(size=(120, 60)) as pilot:
        await wait_for_analysis(app, pilot)
        text = body_text(app)
        assert "32.0 sectors/request" in text and "ideal 4.0" in text and "efficiency 12%" in text
        assert "128 bytes between neighbouring lanes" in text
        assert "32 bytes (8 elements)" in text and "fix:" in text
        # 32 sectors, one per lane: all drawn (it scrolls)
        assert "+3968 B" in text and "more sectors" not in text
        # the cursor on a line with no load or store: the kernel's overview
        app.point_at(LOAD_LINE - 2)
        await pilot.pause()
        text = body_text(app)
        assert "has no global load or store" in text and "32.0" in text
        # and the launch's traffic, its place on the roofline and its predicted time, said as a prediction
        assert "reads" in text and "from DRAM" in text and "-bound" in text
        words = " ".join(text.split())  # the panel wraps its lines at its width
        assert "a model, not a measurement" in words
        # the strided load gives each lane its own line: its reads are costed so, and said
        assert "read one line a lane at 1/1.38 of the bandwidth" in words


def test_warp_picture_one_sector_per_lane_when_strided(strided_comp):
    load = next(a for a in strided_comp.call("coalescing").accesses if a.kind == "load")
    from irscope.analysis.coalescing.picture import LABEL_END

    lines = [
        line.partition(LABEL_END)[2] for line in warp_picture_lines(load.picture, load.elem_bytes)
    ]
    rows = [line for line in lines if "█" in line]
    assert len(rows) == 32 and all(row.count("█") == 1 for row in rows)  # every sector of the warp
    assert [row.index("█") for row in rows] == list(range(32))  # lane k alone in sector k
    assert lines[2] == "●" * 32


def test_snapshot_of_the_panel(strided_comp, snap_compare):
    async def run_before(pilot):
        await wait_for_analysis(pilot.app, pilot)

    assert snap_compare(
        Harness(strided_comp, LOAD_LINE), terminal_size=(110, 48), run_before=run_before
    )


@run_async
async def test_panel_in_the_app_follows_the_cursor():
    from tui_helpers import wait_until_shown

    from irscope.tui.app import IrscopeApp

    app = IrscopeApp(STRIDED, target="sm_90")
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("i")
        await pilot.pause()
        from textual.widgets import TabbedContent

        tabs = app.query_one("#panels", TabbedContent)
        pane_id = next(p.id for p in tabs.query("TabPane") if p.query(CoalescingPanel))
        tabs.active = pane_id
        await pilot.pause()
        app.main.refresh_panels()
        await wait_for_analysis(app, pilot)
        await pilot.press("g", *str(LOAD_LINE), "enter")
        await pilot.pause()
        app.main.refresh_panels()
        await pilot.pause()
        assert "32.0 sectors/request" in body_text(app)
