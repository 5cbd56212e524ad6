"""The edit loop (Pilot, real compiles): a save of the opened file reloads it with no key pressed, the cursor
stays on its line, the changed line is marked in the source gutter, and one line says what moved in the
compiled code; `w` turns the watch off."""

from __future__ import annotations

import asyncio
import shutil
import time

from conftest import kernel_path
from tui_helpers import pane_showing, run_async, source_line_of, wait_until_shown

from irscope.tui.app import IrscopeApp

LOAD_X = "tl.load(x_ptr + offsets,"


async def _until(condition, timeout: float = 120.0) -> None:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError("waited in vain")
        await asyncio.sleep(0.05)


@run_async
async def test_a_save_reloads_by_itself_marks_the_changed_line_and_says_what_moved(tmp_path):
    path = tmp_path / "add.py"
    shutil.copy(kernel_path("add.py"), path)
    line = source_line_of(str(path), LOAD_X)
    app = IrscopeApp(str(path), target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        first = app.main.shown.comp
        pane_showing(app, "source").view.move_cursor_to_index(line - 1, notify=True)
        await pilot.pause()
        assert pane_showing(app, "source").view.changed_lines == frozenset()

        path.write_text(path.read_text().replace(LOAD_X, "tl.load(x_ptr + offsets + 1,"))
        await _until(lambda: app.main.shown.comp.key != first.key)  # no key pressed
        await wait_until_shown(app, pilot)
        source = pane_showing(app, "source")
        assert source.view.changed_lines == frozenset({line - 1})
        assert source.view.cursor_index == line - 1
        said = [
            n.message for n in app._notifications if n.message.startswith("since the last load")
        ]
        assert said and said[-1].startswith(f"since the last load: line {line}: ")
        assert "ld.global.v4.b32 → " in said[-1] and "ld.global.b32" in said[-1]

        await pilot.press("w")  # off: a save is left for `r`
        shown = app.main.shown.comp.key
        path.write_text(path.read_text().replace("offsets + 1,", "offsets,"))
        await pilot.pause(2.0)
        assert not app.main.busy and app.main.shown.comp.key == shown
        await pilot.press("r")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.key != shown
