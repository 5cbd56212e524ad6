"""The TUI's measured mode (`M`) on a machine without a GPU: the Measured panel opens and says why it cannot
measure, in one line, and the app goes on. (With a GPU the same panel shows what `report --measure` does;
validation/gpu_measure.py proves that path on the H100.)"""

from __future__ import annotations

import asyncio
import os
import shutil

import pytest
from rich.console import Console

from conftest import kernel_path
from irscope.tui.app import IrscopeApp
from tui_helpers import run_async, source_line_of, wait_until_shown


def _text(widget) -> str:
    console = Console(width=200, record=True)
    console.print(widget.content)
    return console.export_text()


@run_async
async def test_M_without_a_gpu_says_why_in_the_measured_panel():
    from irscope.tui.panels.measured import MeasuredPanel

    app = IrscopeApp(kernel_path("strided.py"), target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("M")
        panel = app.query_one(MeasuredPanel)
        body = panel.query_one("#measured-body")
        for _ in range(200):
            await pilot.pause()
            if "needs a GPU" in _text(body):
                break
            await asyncio.sleep(0.05)
        shown = _text(body)
        assert panel.display and app.query_one("#panels").display
        assert "measuring needs a GPU, and this machine has none" in shown
        assert len([line for line in shown.splitlines() if line.strip()]) <= 2  # one line, wrapped at most once
        await pilot.press("j")  # the app goes on
        assert app.is_running


GPU = shutil.which("nvidia-smi") is not None and os.path.exists("/dev/nvidia0")


@pytest.mark.skipif(not GPU, reason="needs a GPU (run by validation/h100_session.sh on the H100)")
@run_async
async def test_M_on_a_gpu_shows_time_bandwidth_and_line_26_measured_beside_predicted():
    from irscope.tui.panels.measured import MeasuredPanel

    path = kernel_path("strided.py")
    app = IrscopeApp(path)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("g", *str(source_line_of(path, "offs * 8")), "enter")
        await pilot.press("M")
        body = app.query_one(MeasuredPanel).query_one("#measured-body")
        for _ in range(6000):  # do_bench, then Nsight Compute on the launch: up to ten minutes
            await pilot.pause()
            if "ld sectors/request" in _text(body) or "failed" in _text(body):
                break
            await asyncio.sleep(0.1)
        shown = _text(body)
        print(shown)
        assert "measured" in shown and "GB/s" in shown and "DRAM peak" in shown
        assert "line 26" in shown and "ld sectors/request" in shown and "32" in shown and "agrees" in shown
