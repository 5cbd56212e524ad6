"""The info panels as places the user goes (Pilot, real kernels): Tab and a click focus a panel, its
keys scroll it, `m` maximises it, and at 80×24 everything it says can be read; the panels follow the
focused pane."""

from __future__ import annotations

from conftest import kernel_path
from tui_helpers import pane_showing, run_async, source_line_of, wait_until_shown

from irscope.analysis.coalescing.picture import LABEL_END, warp_picture_lines
from irscope.tui.app import IrscopeApp
from irscope.tui.panels.coalescing import CoalescingPanel
from irscope.tui.panels.info import LineInfoPanel

STRIDED = kernel_path("strided.py")
ADD = kernel_path("add.py")
GATHER = source_line_of(STRIDED, "x = tl.load(")


def screen_text(app) -> str:
    """The whole screen as drawn, lines joined: what is cut off or scrolled away is missing here."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def static_text(static, width: int = 160) -> str:
    import io

    from rich.console import Console

    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(static.content)
    return console.export_text()


def words(text: str) -> str:
    return " ".join(text.split())


async def _open_panel(app, pilot, title: str) -> None:
    for _ in range(6):
        panel = app.main.panel_area.shown_panel()
        if panel is not None and panel.panel_title == title:
            return
        await pilot.press("i")
        await pilot.pause()
    raise AssertionError(f"the {title} panel never showed")


async def _settle(app, pilot) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


@run_async
async def test_at_80x24_tab_reaches_the_coalescing_panel_which_scrolls_and_maximises_to_show_everything():
    app = IrscopeApp(STRIDED, target="sm_90")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until_shown(app, pilot)
        await _open_panel(app, pilot, "Coalescing")
        app.main.linked.panes[0].view.move_cursor_to_index(GATHER - 1, notify=True)
        await _settle(app, pilot)
        panel = app.query_one(CoalescingPanel)
        access = next(
            a for a in panel._analyses[app.main.shown.comp.key].accesses if a.source_line == GATHER
        )
        assert access.fix and access.diagnosis and access.picture is not None
        # Tab goes round the two panes, then the panel
        await pilot.press("tab", "tab")
        await pilot.pause()
        assert panel.has_focus and app.main.linked.active_pane == 1
        assert panel.max_scroll_y > 0 and panel.size.height < 10  # it does not fit: it scrolls
        await pilot.press("pagedown")
        await pilot.pause()
        assert panel.scroll_y > 0
        await pilot.press("m")
        await pilot.pause()
        assert app.main.panel_area.is_maximised and not app.query_one("#panes").display
        assert panel.size.height >= 17
        # page by page, every word of the verdict, the fix and each row of the picture is on screen once
        await pilot.press("home")
        seen = ""
        for _ in range(12):
            await pilot.pause()
            seen += screen_text(app) + "\n"
            if panel.scroll_y >= panel.max_scroll_y:
                break
            await pilot.press("pagedown")
        flat = words(seen)
        assert words(access.fix)[:60] in flat and words(access.fix)[-40:] in flat
        assert words(access.diagnosis)[-40:] in flat
        rows = warp_picture_lines(access.picture, access.elem_bytes)
        # lane numbers, active lanes, a row per sector
        assert len(rows) == 3 + access.picture.sectors
        for row in rows[3:]:  # the whole warp: each sector's row, as drawn
            label, _, lanes = row.partition(LABEL_END)
            assert f"{label.strip()} {lanes}" in seen, row
        await pilot.press("m")
        await pilot.pause()
        assert (
            not app.main.panel_area.is_maximised
            and app.query_one("#panes").display
            and panel.has_focus
        )
        # maximised, then Tab: the panes come back and the focus is on the first
        await pilot.press("m", "tab")
        await pilot.pause()
        assert not app.main.panel_area.is_maximised and app.query_one("#panes").display
        assert app.main.linked.panes[0].view.has_focus
        await pilot.press("tab", "tab", "escape")  # Esc on the panel: back to the pane it describes
        await pilot.pause()
        assert app.main.linked.panes[1].view.has_focus and not panel.has_focus


@run_async
async def test_a_click_focuses_a_panel_and_i_on_a_focused_panel_takes_the_focus_along():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        await _open_panel(app, pilot, "Info")
        info = app.query_one(LineInfoPanel)
        await pilot.click(LineInfoPanel, offset=(5, 1))
        await pilot.pause()
        assert info.has_focus
        keys = {k.key_display for k in app.query("FooterKey")}
        # the panel's own keys are named while it has the focus
        assert "m" in keys and "esc" in keys
        await pilot.press("i")  # the next panel, with the focus
        await _settle(app, pilot)
        assert (
            app.main.panel_area.shown_panel().panel_title == "Explain"
            and app.main.panel_area.shown_panel().has_focus
        )
        for _ in range(3):
            await pilot.press("i")
            await pilot.pause()
        await pilot.press("i")  # after the last: hidden, and the focus back on a pane
        await pilot.pause()
        assert not app.query_one("#panels").display
        assert app.main.linked.panes[app.main.linked.active_pane].view.has_focus


@run_async
async def test_the_panels_follow_the_focused_pane():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        await _open_panel(app, pilot, "Info")
        info = app.query_one(LineInfoPanel)

        def said() -> str:  # the cursor row's text
            return words(static_text(info.query_one("#line-info")).split("cursor", 1)[1])

        assert said().startswith("source line")
        ptx = pane_showing(app, "ptx")
        for _ in range(4):
            if app.main.linked.active_pane == ptx.number:
                break
            await pilot.press("tab")
            await pilot.pause()
        assert ptx.view.has_focus
        assert said().startswith(f"ptx line {ptx.view.cursor_index + 1}")
        ttgir = pane_showing(app, "ttgir")
        await pilot.click(f"#view-{ttgir.number}", offset=(10, 2))  # a click on another pane
        await pilot.pause()
        assert said().startswith(f"ttgir line {ttgir.view.cursor_index + 1}")


def _lines_under_cursors(app) -> dict[str, int | None]:
    """Each visible pane's stage -> the source line its cursor is on."""
    links = app.main.shown.links
    return {
        pane.stage: links.source_line(pane.stage, pane.view.cursor_index)
        for pane in app.main.linked.panes
        if pane.display and pane.view.cursor_index is not None
    }


async def _recompiled(app, pilot) -> None:
    await pilot.pause(0.2)
    await wait_until_shown(app, pilot)
    await pilot.pause()


@run_async
async def test_t_e_and_r_keep_the_source_line_in_every_pane():
    from textual.widgets import Input, OptionList

    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        line = source_line_of(ADD, "y = tl.load(")
        app.main.linked.panes[0].view.move_cursor_to_index(line - 1, notify=True)
        ptx = pane_showing(app, "ptx")
        # the cursor's pane is the PTX: its line numbers change
        await pilot.click(f"#view-{ptx.number}")
        ptx.view.move_cursor_to_index(app.main.shown.links.ir_lines("ptx", line)[-1], notify=True)
        await pilot.pause()
        assert set(_lines_under_cursors(app).values()) == {line}

        await pilot.press("t")  # sm_90 -> sm_80
        await pilot.pause()
        app.screen.query_one(OptionList).highlighted = 0
        await pilot.press("enter")
        await _recompiled(app, pilot)
        assert str(app.main.shown.comp.target) == "sm_80"
        assert set(_lines_under_cursors(app).values()) == {line}, _lines_under_cursors(app)
        assert app.main.linked.source_line == line and ptx.view.has_focus

        await pilot.press("e")  # BLOCK_SIZE 1024 -> 256: other IR, the same source line
        await pilot.pause()
        app.screen.query_one("#field-BLOCK_SIZE", Input).value = "256"
        await pilot.press("enter")
        await _recompiled(app, pilot)
        assert app.main.shown.comp.constexprs["BLOCK_SIZE"] == 256
        assert set(_lines_under_cursors(app).values()) == {line}, _lines_under_cursors(app)

        await pilot.press("r")
        await _recompiled(app, pilot)
        assert set(_lines_under_cursors(app).values()) == {line}, _lines_under_cursors(app)


@run_async
async def test_p_keeps_the_source_line_when_another_launch_of_the_kernel_is_picked():
    misaligned = kernel_path("misaligned.py")
    app = IrscopeApp(misaligned, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("enter")  # the picker: the first launch
        await _recompiled(app, pilot)
        line = source_line_of(misaligned, "tl.store(")
        app.main.linked.panes[0].view.move_cursor_to_index(line - 1, notify=True)
        await pilot.pause()
        await pilot.press("p", "down", "enter")  # the second launch (x[1:])
        await _recompiled(app, pilot)
        assert app.main.shown.comp is app.main.comps[1]
        assert set(_lines_under_cursors(app).values()) == {line}, _lines_under_cursors(app)


@run_async
async def test_the_info_panel_says_the_mapped_share_the_json_report_gives(cli):
    import json

    code, out, _ = cli("report", ADD, "--target", "sm_90", "--json")
    stages = json.loads(out)["kernels"][0]["stages"]
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        await _open_panel(app, pilot, "Info")
        shown = words(static_text(app.query_one(LineInfoPanel).query_one("#line-info"), width=300))
    for stage in ("ttir", "ttgir", "llir", "ptx", "sass"):
        assert f"{stage} {stages[stage]['mapped_fraction']:.0%}" in shown, (stage, shown)
    assert "ptx 100%" in shown and "of instruction lines have a source line" in shown
