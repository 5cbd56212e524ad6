"""SVG snapshots of the main views at fixed sizes (pytest-textual-snapshot).

Update them after an intended change with `pytest tests/tui/test_snapshots.py --snapshot-update`
and look at the SVGs before committing. They hold real compiler output, so a new Triton release
that changes codegen changes them too.
"""

from __future__ import annotations

import pytest
from conftest import fixture_path, kernel_path, snapshot_source
from tui_helpers import wait_until_shown

from irscope.tui.app import IrscopeApp

pytest.importorskip("pytest_textual_snapshot")


async def _loaded(pilot) -> None:
    await wait_until_shown(pilot.app, pilot)


def test_add_at_80x24(snap_compare):
    assert snap_compare(
        IrscopeApp(snapshot_source(kernel_path("add.py")), target="sm_90"),
        terminal_size=(80, 24),
        run_before=_loaded,
    )


def test_add_at_200x50(snap_compare):
    assert snap_compare(
        IrscopeApp(snapshot_source(kernel_path("add.py")), target="sm_90"),
        terminal_size=(200, 50),
        run_before=_loaded,
    )


def test_add_linked_from_ptx_at_160x40(snap_compare):
    async def move_to_a_load(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("tab", "tab", "slash", *"ld.global", "enter")
        await pilot.pause()

    assert snap_compare(
        IrscopeApp(snapshot_source(kernel_path("add.py")), target="sm_90"),
        terminal_size=(160, 40),
        run_before=move_to_a_load,
    )


def test_compile_error_at_120x30(snap_compare):
    assert snap_compare(
        IrscopeApp(snapshot_source(fixture_path("compile_error.py")), target="sm_90"),
        terminal_size=(120, 30),
        run_before=_loaded,
    )


def test_help_at_120x40(snap_compare):
    async def open_help(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(
        IrscopeApp(snapshot_source(kernel_path("add.py")), target="sm_90"),
        terminal_size=(120, 40),
        run_before=open_help,
    )


def test_findings_at_80x24(snap_compare):
    """strided.py at 80×24: the Findings view opened with f, its finding wrapped to the width."""

    async def open_findings(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("f")
        await pilot.pause()

    assert snap_compare(
        IrscopeApp(snapshot_source(kernel_path("strided.py")), target="sm_90"),
        terminal_size=(80, 24),
        run_before=open_findings,
    )


def test_findings_jumped_to_at_200x50(snap_compare):
    """strided.py at 200×50: the view open on start; f and Enter put every pane on line 26."""

    async def jump(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("f", "enter")
        await pilot.pause()

    assert snap_compare(
        IrscopeApp(snapshot_source(kernel_path("strided.py")), target="sm_90"),
        terminal_size=(200, 50),
        run_before=jump,
    )


def test_coalescing_panel_focused_and_maximised_at_80x24(snap_compare):
    """strided.py at 80×24: the gather's Coalescing panel reached with Tab and maximised with m; it scrolls."""

    async def maximise(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("i", "i", "i", "i", "g", *"26", "enter")
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.press("tab", "tab", "m")
        await pilot.pause()

    assert snap_compare(
        IrscopeApp(snapshot_source(kernel_path("strided.py")), target="sm_90"),
        terminal_size=(80, 24),
        run_before=maximise,
    )


def test_diff_misaligned_launches_at_80x24(snap_compare):
    """misaligned.py, D on launch 0: launch 0 against launch 1 at PTX, the cursor on the x load with its causes."""
    from test_diff_and_pipeline_views import open_diff, wait_for_doc

    async def diff(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("enter")  # the picker: launch 0
        await pilot.pause(0.2)
        await _loaded(pilot)
        await wait_for_doc(pilot, await open_diff(pilot))
        await pilot.pause()

    assert snap_compare(
        IrscopeApp(snapshot_source(kernel_path("misaligned.py")), target="sm_90"),
        terminal_size=(80, 24),
        run_before=diff,
    )


def test_pipeline_add_line_26_at_160x40(snap_compare):
    """add.py, P on source line 26: the passes that changed it marked, the coalesce pass's diff."""
    from test_diff_and_pipeline_views import open_pipeline_on_line

    async def pipeline(pilot) -> None:
        await _loaded(pilot)
        await open_pipeline_on_line(pilot, 26)
        await pilot.press("down")
        await pilot.pause()

    assert snap_compare(
        IrscopeApp(snapshot_source(kernel_path("add.py")), target="sm_90"),
        terminal_size=(160, 40),
        run_before=pipeline,
    )
