"""The TUI's measured mode (`M`) on a machine without a GPU: the Measured panel opens and says why it cannot
measure, in one line, and the app goes on. (With a GPU the same panel shows what `report --measure` does;
validation/gpu_measure.py proves that path on the H100.)"""

from __future__ import annotations

import asyncio
import os
import shutil

import pytest
from conftest import kernel_path
from rich.console import Console
from tui_helpers import run_async, source_line_of, wait_until_shown

from irscope.tui.app import IrscopeApp


def _text(widget) -> str:
    console = Console(width=200, record=True)
    console.print(widget.content)
    return console.export_text()


@pytest.mark.skipif(
    shutil.which("nvidia-smi") is not None and os.path.exists("/dev/nvidia0"),
    reason="this machine has a GPU: M measures (the test below)",
)
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
        # one line, wrapped at most once
        assert len([line for line in shown.splitlines() if line.strip()]) <= 2
        await pilot.press("j")  # the app goes on
        assert app.is_running


GPU = shutil.which("nvidia-smi") is not None and os.path.exists("/dev/nvidia0")


@pytest.mark.skipif(not GPU, reason="needs a GPU (run by validation/h100_measure.sh on the H100)")
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
        assert (
            "line 26" in shown
            and "ld sectors/request" in shown
            and "32" in shown
            and "agrees" in shown
        )


@run_async
async def test_a_measurement_shows_in_the_measured_coalescing_and_memory_panels():
    """The panels' side of a GPU measurement, fed with a real H100 run's ncu counters of strided.py (mapped
    through irscope's SASS map, as the worker does): the Measured panel's view, the Coalescing panel's
    `measured` column, the Memory panel's `measured` row."""
    import json

    from conftest import ROOT, fixture_path

    from irscope.analysis.coalescing.sectors import analyze_coalescing
    from irscope.analysis.measured.ncu_parse import parse_raw_page, parse_source_page
    from irscope.analysis.measured.per_line import per_source_line
    from irscope.engine.measure import Measurement
    from irscope.engine.measure.peaks import peaks_of
    from irscope.engine.session import open_file
    from irscope.findings.agreement import agreements
    from irscope.tui.panels.coalescing import CoalescingPanel
    from irscope.tui.panels.measured import MeasuredPanel
    from irscope.tui.panels.memory import MemoryPanel

    path = kernel_path("strided.py")
    comp = open_file(path, target="sm_90").compile_all()[0]
    page = parse_source_page(open(fixture_path("ncu/strided.source_sass.csv")).read())[0]
    raw = parse_raw_page(open(fixture_path("ncu/strided.raw.csv")).read())[0]
    device = json.load(open(os.path.join(ROOT, "validation", "data", "h100_device.json")))
    m = Measurement(
        comp.kernel.name,
        time_ms=tuple(device["strided_n4096_ms_q50_q20_q80"]),
        peaks=peaks_of(device["driver_props"] | {"name": "NVIDIA H100 80GB HBM3"}),
    )
    m.lines, why = per_source_line(comp, page)
    if why:
        pytest.skip(f"this Triton builds another binary than the H100 run's: {why}")
    m.raw, m.agreements = raw, agreements(comp, analyze_coalescing(comp), m.lines, raw)
    from irscope.engine.measure.work import launch_work

    m.work = launch_work(comp, analyze_coalescing(comp))
    result = {"measured": m.to_json(), "findings": []}

    app = IrscopeApp(path, target="sm_90")
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("g", *str(source_line_of(path, "offs * 8")), "enter")
        await pilot.pause()
        key = app.main.linked.cursor_context().comp.key
        # as the worker's answer to M arrives
        app.query_one(MeasuredPanel).show_measured(key, result)
        for _ in range(3):  # the panels: Info, Explain, Memory
            await pilot.press("i")
        await pilot.pause()
        memory = app.query_one(MemoryPanel)
        assert "line 26, Nsight Compute: loads 32 sectors/request (4096 sectors)" in _text(
            memory.query_one("#memory-info")
        )
        await pilot.press("i")  # Coalescing
        for _ in range(100):
            await pilot.pause()
            text = _text(app.query_one(CoalescingPanel).query_one("#coalescing-body"))
            if "measured by Nsight Compute" in text:
                break
            await asyncio.sleep(0.05)
        assert (
            "measured by Nsight Compute (the whole launch): 32 sectors/request (4096 sectors)"
            in text
        )
        await pilot.press("i")  # Measured
        await pilot.pause()
        shown = _text(app.query_one(MeasuredPanel).query_one("#measured-body"))
        assert "line 26" in shown and "ld sectors/request" in shown and "agrees" in shown
        assert "4.9 µs" in shown and "DRAM peak" in shown
