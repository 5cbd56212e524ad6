"""The Findings view on real kernels (Pilot): what it lists, the gutter glyphs, Enter's jump, focus,
maximising, the empty state, plain text, and nothing cut at 80×24."""

from __future__ import annotations

import dataclasses

from conftest import fixture_path, kernel_path
from textual.geometry import Region
from tui_helpers import pane_showing, run_async, source_line_of, wait_until_shown

from irscope.tui.app import IrscopeApp
from irscope.tui.findings import FindingsView
from irscope.tui.findings.view import FindingRow

STRIDED = kernel_path("strided.py")


def row_text(view, index: int) -> str:
    row = view.row_of(index) - int(view.scroll_offset.y)
    return view.render_line(row).text


def shown_text(widget) -> str:
    """What a widget draws, its lines joined, blanks collapsed: text cut off would be missing here."""
    strips = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
    return " ".join(" ".join(strip.text for strip in strips).split())


def words(text: str) -> str:
    return " ".join(text.split())


@run_async
async def test_strided_lists_its_uncoalesced_gather_and_enter_shows_line_26_in_every_pane():
    app = IrscopeApp(STRIDED, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        view = app.query_one(FindingsView)
        gather = source_line_of(STRIDED, "x = tl.load(x_ptr + offs * 8")
        assert gather == 26
        first = view.findings[0]
        assert (first.rule, first.severity, first.source_line) == ("uncoalesced", "warning", gather)
        assert "32.0 sectors per request where 4.0 would do" in view.plain_text(160)
        # tall enough, and a warning: open on start, the focus left in the source pane
        assert view.mode == "open" and view.display and not view.has_focus
        source, ptx = pane_showing(app, "source"), pane_showing(app, "ptx")
        kernel_def = source_line_of(STRIDED, "def strided_gather_kernel(")
        # the gather, and the kernel's line: its test launch is under one wave (small-grid, info)
        assert source.view.finding_marks == {gather - 1: "warning", kernel_def - 1: "info"}
        assert "▲" in row_text(source.view, gather - 1) and "▲" not in row_text(source.view, gather)
        assert source.view.cursor_index != gather - 1

        await pilot.press("f")  # to the list
        assert view.has_focus
        await pilot.press("enter")
        await pilot.pause()
        assert source.view.cursor_index == gather - 1
        hits = app.main.shown.links.ir_lines("ptx", gather)
        assert hits and ptx.view.cursor_index in hits
        assert ptx.view.linked == frozenset(hits)
        assert any("ld.global" in ptx.view.text.lines[i] for i in hits)
        # the list keeps the focus: ↓ Enter goes on
        assert app.main.linked.source_line == gather and view.has_focus

        await pilot.press("escape")
        assert source.view.has_focus and view.mode == "open"


@run_async
async def test_tab_goes_round_the_panes_and_then_the_open_findings_list():
    app = IrscopeApp(STRIDED, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        view = app.query_one(FindingsView)
        assert view.mode == "open"  # a warning, tall enough: open on start
        count = app.main.linked.visible_count(app.main.linked.effective_layout())
        assert app.main.linked.panes[0].view.has_focus
        for n in range(1, count):
            await pilot.press("tab")
            assert app.main.linked.panes[n].view.has_focus and not view.has_focus
        await pilot.press("tab")  # past the last pane (no info panel shown): the list
        await pilot.pause()
        assert view.has_focus
        await pilot.press("enter")
        await pilot.pause()
        assert app.main.linked.source_line == view.findings[0].source_line
        await pilot.press("tab")  # round again: the first pane
        await pilot.pause()
        assert app.main.linked.panes[0].view.has_focus and not view.has_focus
        await pilot.press("shift+tab")  # and back
        await pilot.pause()
        assert view.has_focus


@run_async
async def test_at_80x24_it_is_one_line_until_f_then_it_wraps_everything_and_maximises():
    app = IrscopeApp(STRIDED, target="sm_90")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until_shown(app, pilot)
        view = app.query_one(FindingsView)
        # the layout stays the panes', and the one line names the finding
        assert view.mode == "collapsed" and view.region.height == 1
        assert "line 26 uncoalesced" in view.border_title
        await pilot.press("f")
        await pilot.pause()
        assert view.mode == "open" and view.has_focus and view.region.height > 3
        await pilot.press("m")
        await pilot.pause()
        assert not app.query_one("#panes").display and view.region.height >= 20
        f = view.findings[0]
        drawn = shown_text(view.query(FindingRow).first())
        for said in (f.message, f.cost.text, f.fix, f.what_if.text, f.source_text):
            assert words(said) in drawn, said  # wrapped, not cut
        await pilot.press("m")
        await pilot.pause()
        assert app.query_one("#panes").display and not view.maximised
        # maximised, then the focus moves to a pane: the panes come back
        await pilot.press("m", "tab")
        await pilot.pause()
        assert app.query_one("#panes").display and not view.has_focus
        await pilot.press("f", "f")  # to the list, and closed again: back to one line
        await pilot.pause()
        assert (
            view.mode == "collapsed"
            and app.main.linked.panes[app.main.linked.active_pane].view.has_focus
        )
        keys = {k.key_display for k in app.query("FooterKey")}
        assert "f" in keys


@run_async
async def test_a_kernel_with_nothing_to_find_says_what_was_checked():
    """A vector add launched with one whole wave: no finding about the kernel nor its launch's size."""
    app = IrscopeApp(fixture_path("add_one_wave.py"), target="sm_90")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_shown(app, pilot)
        view = app.query_one(FindingsView)
        assert view.findings == [] and view.mode == "hidden" and not view.display
        assert pane_showing(app, "source").view.finding_marks == {}
        await pilot.press("f")
        await pilot.pause()
        assert view.display and view.has_focus
        text = view.plain_text(120)
        assert "No findings for add_kernel on sm_90" in text
        assert "uncoalesced" in text and "no-tensor-core" in text and "compile-error" not in text


@run_async
async def test_finding_text_is_plain_text_never_markup():
    app = IrscopeApp(STRIDED, target="sm_90")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_shown(app, pilot)
        view = app.query_one(FindingsView)
        real = view.findings[0]
        odd = dataclasses.replace(
            real,
            message="a [M=64, N=32] tile [bold]not bold[/bold]",
            fix="[red]x[/red] \\[y]",
            rule="uncoalesced",
        )
        view._set(
            [odd, dataclasses.replace(real, severity="info", rule="layout-shuffle", source_line=27)]
        )
        for _ in range(20):  # the new rows mount, lay out and draw
            await pilot.pause(0.05)
            if len(view.query(FindingRow)) == 2 and shown_text(view.query(FindingRow).first()):
                break
        drawn = shown_text(view.query(FindingRow).first())
        assert "a [M=64, N=32] tile [bold]not bold[/bold]" in drawn
        assert "[red]x[/red] \\[y]" in drawn
        # the gutter follows the new list: the severest finding's glyph per line
        source = pane_showing(app, "source")
        assert source.view.finding_marks == {25: "warning", 26: "info"}
        await pilot.press("f", "down")
        await pilot.pause()
        assert view.selected == 1 and "layout-shuffle" in shown_text(view.query(FindingRow).last())
