"""The stepper screen with Pilot: recording in a worker, moving, breakpoints, values, program chooser."""

import asyncio

import pytest
from conftest import fixture_path, kernel_path, snapshot_source
from stepper_harness import StepperHarness, wait_recorded
from tui_helpers import open_view

from irscope.tui.stepper_text import draw_mask

SIZE = (150, 48)


_sessions = []


def opened(path):
    """(session, view): the worker stays open until the module's tests end."""
    session, view = open_view(path)
    _sessions.append(session)
    return session, view


@pytest.fixture(scope="module", autouse=True)
def _close_workers():
    yield
    while _sessions:
        _sessions.pop().close()


@pytest.fixture(scope="module")
def add():
    # a path the same on every machine and from any directory
    return opened(snapshot_source(kernel_path("add.py")))


def test_step_locals_and_linked_ir(add):
    async def scenario():
        ws, comp = add
        app = StepperHarness(ws, comp, (1,))
        async with app.run_test(size=SIZE) as pilot:
            screen = await wait_recorded(pilot)
            assert screen.stepper is not None and screen.stepper.step.line == 22
            for _ in range(3):
                await pilot.press("s")
            assert screen.stepper.step.line == 26
            assert "offsets" in screen.query_one("#stepper-locals").names
            ir = str(screen.query_one("#stepper-ir").render())
            assert "tt.load" in ir
            assert "load x_ptr + [1024 .. 2047]" in str(
                screen.query_one("#stepper-accesses").render()
            )
            await pilot.press("b")
            assert screen.stepper.step.line == 25
            await pilot.press("e")
            assert screen.stepper.at_end

    asyncio.run(scenario())


def test_breakpoint_continue_and_masks():
    async def scenario():
        ws, comp = opened(kernel_path("softmax.py"))
        app = StepperHarness(ws, comp, (2,))
        async with app.run_test(size=SIZE) as pilot:
            screen = await wait_recorded(pilot)
            source = screen.query_one("#stepper-source")
            source.move_to(29)  # line 30: the store
            await pilot.press("space")
            assert 30 in screen.stepper.breakpoints
            await pilot.press("c")
            assert screen.stepper.step.line == 30
            locals_view = screen.query_one("#stepper-locals")
            x_row = str(locals_view.row_text(locals_view.names.index("x")))
            assert "Inf×243" in x_row  # the -inf padding lanes are flagged
            screen._show_value("mask")
            drawn = str(screen.query_one("#stepper-mask").render())
            assert drawn.count("█") == 781 and drawn.count("·") == 243
            await pilot.press("r")
            assert screen.stepper.step.index == 0

    asyncio.run(scenario())


def test_program_chooser_rerecords(add):
    async def scenario():
        ws, comp = add
        app = StepperHarness(ws, comp)
        async with app.run_test(size=SIZE) as pilot:
            screen = await wait_recorded(pilot)
            await pilot.press("p")
            # outside the grid: refused, stays open
            await pilot.press("ctrl+a", "ctrl+k", "9", "enter")
            error = app.screen.query_one("#chooser-error")
            assert "outside the launch's grid" in str(error.render())
            await pilot.pause()
            assert error.size.height >= 2  # the whole message, wrapped: it ends with the fix
            await pilot.press("backspace", "3", "enter")
            screen = await wait_recorded(pilot)
            for _ in range(10):
                if screen.stepper.recording.program_id == (3, 0, 0):
                    break
                await pilot.pause(0.1)
            assert screen.stepper.recording.program_id == (3, 0, 0)

    asyncio.run(scenario())


def test_out_of_bounds_shows_the_failing_line():
    async def scenario():
        ws, comp = opened(fixture_path("out_of_bounds.py"))
        app = StepperHarness(ws, comp, (1,))
        async with app.run_test(size=SIZE) as pilot:
            screen = await wait_recorded(pilot)
            await pilot.press("e")
            assert screen.stepper.step.event == "exception" and screen.stepper.step.line == 12
            assert "x_ptr[256]" in str(screen.query_one("#stepper-status").render())
            drawn = str(screen.query_one("#stepper-accesses").render())
            assert drawn.count("✗") == 1 and drawn.count("█") == 127

    asyncio.run(scenario())


def test_a_step_redraws_quickly():
    async def scenario():
        ws, comp = opened(kernel_path("matmul.py"))
        app = StepperHarness(ws, comp, (1, 1))
        async with app.run_test(size=SIZE) as pilot:
            screen = await wait_recorded(pilot)
            await pilot.press("s")
            assert screen.stepper.step.index == 1

    asyncio.run(scenario())


def test_draw_mask_rows():
    import numpy as np

    text = str(draw_mask(np.arange(128) < 100))
    assert (
        text.splitlines()[0].startswith("    0 ")
        and text.count("█") == 100
        and text.count("·") == 28
    )


def test_snapshot_add_stepper(snap_compare, add):
    ws, comp = add

    async def run_before(pilot):
        await wait_recorded(pilot)
        for _ in range(5):
            await pilot.press("s")  # stopped before the store; the value view shows y, just loaded
        await pilot.pause()

    assert snap_compare(StepperHarness(ws, comp, (1,)), terminal_size=SIZE, run_before=run_before)


def test_main_view_opens_the_stepper_with_ctrl_t_and_escape_returns():
    from tui_helpers import wait_until_shown

    from irscope.tui.app import IrscopeApp
    from irscope.tui.stepper import StepperScreen

    async def scenario():
        app = IrscopeApp(kernel_path("add.py"), target="sm_90")
        async with app.run_test(size=SIZE) as pilot:
            await wait_until_shown(app, pilot)
            main = app.screen
            await pilot.press("ctrl+t")
            screen = await wait_recorded(pilot)
            assert isinstance(screen, StepperScreen) and screen.stepper is not None
            assert screen.stepper.recording.kernel == "add_kernel"
            await pilot.press("s", "s", "s")
            assert screen.stepper.step.line == 26
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is main
            source = next(p for p in app.main.linked.panes if p.stage == "source")
            # the main view follows the line the stepper stopped at
            assert source.view.cursor_index == 25

    asyncio.run(scenario())


def test_snapshot_out_of_bounds_stepper(snap_compare):
    ws, comp = opened(snapshot_source(fixture_path("out_of_bounds.py")))

    async def run_before(pilot):
        await wait_recorded(pilot)
        await pilot.press("e")  # the failing load: its out-of-bounds lane marked under "memory"
        await pilot.pause()

    assert snap_compare(StepperHarness(ws, comp, (1,)), terminal_size=SIZE, run_before=run_before)


def test_question_mark_in_the_stepper_shows_the_steppers_keys():
    from tui_helpers import wait_until_shown

    from irscope.tui.app import IrscopeApp
    from irscope.tui.screens import HelpScreen
    from irscope.tui.stepper_text import STEPPER_HELP

    async def scenario():
        app = IrscopeApp(kernel_path("add.py"), target="sm_90")
        async with app.run_test(size=SIZE) as pilot:
            await wait_until_shown(app, pilot)
            await pilot.press("ctrl+t")
            stepper = await wait_recorded(pilot)
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen) and app.screen.text == STEPPER_HELP
            shown = str(app.screen.query_one("Static").content)
            assert "continue to the next breakpoint" in shown and "layout" not in shown
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is stepper
            await pilot.press("escape")  # and the main view's ? is still its own
            await pilot.pause()
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen) and "layout" in app.screen.text

    asyncio.run(scenario())


def test_the_stepper_footer_shows_its_main_keys_whole_at_80_columns():
    from tui_helpers import wait_until_shown

    from irscope.tui.app import IrscopeApp

    async def scenario():
        app = IrscopeApp(kernel_path("add.py"), target="sm_90")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until_shown(app, pilot)
            await pilot.press("ctrl+t")
            await wait_recorded(pilot)
            for width in (80, 100, 150):
                await pilot.resize_terminal(width, 24)
                await pilot.pause(0.2)
                keys = list(app.screen.query("FooterKey"))
                palette = next(k for k in keys if k.has_class("-command-palette"))
                listed = [k for k in keys if k is not palette]
                shown = {k.key_display for k in listed}
                assert {"s", "n", "c", "b", "space", "esc", "?"} <= shown, (width, shown)
                for key in listed:  # whole, left of the palette key: nothing cut off
                    assert key.region.width > 0 and key.region.right <= palette.region.x, (
                        width,
                        key.key_display,
                    )
                if width >= 150:
                    assert {"o", "r", "e", "p", "i", "q"} <= shown

    asyncio.run(scenario())
