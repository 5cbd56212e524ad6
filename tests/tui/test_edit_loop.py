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


@run_async
async def test_the_ptx_is_painted_before_nvdisasm_and_the_sass_then_fills_its_pane_alone():
    """prepare's first answer leaves the SASS to nvdisasm (its pane says so); the second fills the SASS pane,
    on the source line the others are linked to, and leaves every other pane's cursor and scroll as they were."""
    from irscope.tui.loader import prepare
    from irscope.worker.serve import SASS_PENDING

    app = IrscopeApp(kernel_path("add.py"), target="sm_90")
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_until_shown(app, pilot)
        key = app.main.shown.comp.key
        first = app.main.session.request("prepare", None, key=key, sass=False)
        assert first.pending == ("sass",) and first.texts["sass"] == SASS_PENDING
        assert "ld.global" in first.texts["ptx"] and first.resources.registers > 0
        whole = app.main.session.request("prepare", None, key=key)
        assert whole.pending == () and "LDG" in whole.texts["sass"]

        source = pane_showing(app, "source")
        source.view.move_cursor_to_index(
            source_line_of(kernel_path("add.py"), LOAD_X) - 1, notify=True
        )
        await pilot.pause()
        # the screen as prepare's first answer leaves it, then the second answer's SASS
        app.main.linked.complete_compilation(prepare(first, lambda *a: None), ("sass",))
        await pilot.pause()
        assert pane_showing(app, "sass").view.text.lines == SASS_PENDING.splitlines()
        kept = {
            p.stage: (p.view.cursor_index, p.view.scroll_offset.y)
            for p in app.main.linked.panes
            if p.display and p.stage != "sass"
        }
        app.main.linked.complete_compilation(prepare(whole, lambda *a: None), ("sass",))
        await pilot.pause()
        assert {
            p.stage: (p.view.cursor_index, p.view.scroll_offset.y)
            for p in app.main.linked.panes
            if p.display and p.stage != "sass"
        } == kept
        sass = pane_showing(app, "sass").view
        assert any("LDG" in line for line in sass.text.lines)
        linked = app.main.shown.links.ir_line_set("sass", app.main.linked.source_line)
        assert linked and sass.cursor_index in linked
