"""A launch whose interpreted run went out of bounds, in the app (Pilot, real capture and compile): the header says
so, and the findings panel lists the `out-of-bounds` error first, at the load's line."""

from __future__ import annotations

from conftest import fixture_path
from tui_helpers import run_async, wait_until_shown

from irscope.tui.app import IrscopeApp


@run_async
async def test_the_header_and_the_findings_say_the_launch_went_out_of_bounds():
    app = IrscopeApp(fixture_path("stores_past_end.py"), target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        header = str(app.main.query_one("#header").render())
        assert "out-of-bounds access" in header
        await pilot.press("f")
        await pilot.pause(0.5)
        screen_text = " ".join(
            str(w.render()) for w in app.screen.walk_children() if hasattr(w, "render")
        )
        assert "out-of-bounds" in screen_text
        app.save_screenshot("/tmp/oob_findings.svg")
