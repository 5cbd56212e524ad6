"""Pilot tests of the TUI on real kernels: navigation, linking, stages, layouts, errors, reload."""

from __future__ import annotations

import shutil
import threading

from conftest import fixture_path, kernel_path
from tui_helpers import pane_showing, run_async, source_line_of, wait_until_shown

from irscope.tui.app import IrscopeApp

ADD = kernel_path("add.py")


async def _search(pilot, text: str) -> None:
    await pilot.press("slash")
    await pilot.press(*text)
    await pilot.press("enter")
    await pilot.pause()


async def _focus(app, pilot, stage: str) -> None:
    pane = pane_showing(app, stage)
    for _ in range(6):
        if app.main.linked.active_pane == pane.number and pane.view.has_focus:
            return
        await pilot.press("tab")
        await pilot.pause()
    raise AssertionError(f"could not focus the {stage} pane")


@run_async
async def test_ptx_load_links_to_source_load_and_back():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        assert app.main.shown is not None and app.main.shown.comp.ok
        source, ptx = pane_showing(app, "source"), pane_showing(app, "ptx")
        x_load = source_line_of(ADD, "x = tl.load(")

        # PTX cursor on the first ld.global: the source cursor lands on `x = tl.load(...)`.
        await _focus(app, pilot, "ptx")
        await _search(pilot, "ld.global")
        assert "ld.global" in ptx.view.text.lines[ptx.view.cursor_index]
        assert source.view.cursor_index == x_load - 1
        assert x_load - 1 in source.view.linked
        assert ptx.view.cursor_index in ptx.view.linked

        # And back: the source cursor on `y = tl.load(...)` moves the PTX cursor to its ld.global.
        y_load = source_line_of(ADD, "y = tl.load(")
        await _focus(app, pilot, "source")
        await pilot.press("g", *str(y_load), "enter")
        await pilot.pause()
        assert source.view.cursor_index == y_load - 1
        linked_ptx = [ptx.view.text.lines[i] for i in sorted(ptx.view.linked)]
        assert any("ld.global" in line for line in linked_ptx)
        assert ptx.view.cursor_index in ptx.view.linked
        # every linked PTX line maps back to the y load
        links = app.main.shown.links
        assert all(y_load in links.chain("ptx", i) for i in ptx.view.linked)
        # ... and the TTGIR pane shows its tt.load
        ttgir = pane_showing(app, "ttgir")
        assert any("tt.load" in ttgir.view.text.lines[i] for i in ttgir.view.linked)


@run_async
async def test_arrow_keys_move_and_link_every_pane():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        source = pane_showing(app, "source")
        await _focus(app, pilot, "source")
        store = source_line_of(ADD, "tl.store(")
        await pilot.press("g", *str(store - 2), "enter", "down", "down")
        await pilot.pause()
        assert source.view.cursor_index == store - 1
        for stage in ("ttgir", "ptx"):
            view = pane_showing(app, stage).view
            assert view.linked, f"{stage} shows no lines for tl.store"
            assert view.cursor_index in view.linked
            top, bottom = view.visible_rows()
            assert top <= view.cursor_row < bottom, f"{stage} did not scroll its lines into view"


@run_async
async def test_block_jumps_stay_on_the_same_source_line():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        ptx = pane_showing(app, "ptx")
        await _focus(app, pilot, "ptx")
        await _search(pilot, "ld.global")
        src = app.main.shown.links.source_line("ptx", ptx.view.cursor_index)
        blocks = ptx.view.block_rows(app.main.shown.links.ir_lines("ptx", src))
        assert len(blocks) > 1, "the x load should lower to several PTX blocks"
        first = ptx.view.cursor_row
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert ptx.view.cursor_row != first
        assert app.main.shown.links.source_line("ptx", ptx.view.cursor_index) == src
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert app.main.shown.links.source_line("ptx", ptx.view.cursor_index) == src


@run_async
async def test_stage_cycling_maximise_layout_and_debug_toggle():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        await _focus(app, pilot, "ttgir")
        pane = app.main.linked.panes[app.main.linked.active_pane]
        rows_hidden = len(pane.view.rows)
        assert not any(pane.view.text.lines[i].startswith("#loc") for i in pane.view.rows)
        await pilot.press("d")
        await pilot.pause()
        assert len(pane.view.rows) > rows_hidden
        assert any(pane.view.text.lines[i].startswith("#loc") for i in pane.view.rows)
        await pilot.press("d", "s")
        await pilot.pause()
        assert pane.stage == "llir"
        await pilot.press("4")  # 4 = llir, 6 = sass
        await pilot.press("6")
        await pilot.pause()
        assert pane.stage == "sass"
        await pilot.press("m")
        await pilot.pause()
        assert [p.number for p in app.main.linked.panes if p.display] == [pane.number]
        await pilot.press("m", "l", "l")  # auto -> columns -> rows
        await pilot.pause()
        assert app.main.linked.layout_mode == "rows"
        assert app.query_one("#panes").has_class("-rows")
        await pilot.press("c")
        await pilot.pause()
        assert not pane.view.colouring


@run_async
async def test_narrow_terminal_stacks_two_panes():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until_shown(app, pilot)
        shown = [p.stage for p in app.main.linked.panes if p.display]
        assert shown == ["source", "ttgir"]
        assert app.query_one("#panes").has_class("-rows")
        for pane in app.main.linked.panes[:2]:
            assert pane.view.size.height >= 6


@run_async
async def test_info_panel_describes_the_cursor_line():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("i")
        await pilot.pause()
        from irscope.tui.panels.info import LineInfoPanel

        panel = app.query_one(LineInfoPanel)
        assert panel.display
        from rich.console import Console

        console = Console(width=160, record=True)
        console.print(panel.query_one("#line-info").content)
        shown = console.export_text()
        assert "cursor" in shown and "mapped" in shown and "add.py:" in shown
        ctx = app.main.linked.cursor_context()
        assert ctx is not None and ctx.stage == "source" and ctx.source_line == ctx.index + 1


@run_async
async def test_compile_error_is_shown_with_its_line_marked_and_reload_fixes_it(tmp_path):
    broken = tmp_path / "kernel.py"
    shutil.copy(fixture_path("compile_error.py"), broken)
    app = IrscopeApp(str(broken), target="sm_90")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until_shown(app, pilot)
        assert app.main.shown is not None and not app.main.shown.comp.ok
        bad_line = source_line_of(str(broken), "tl.arange(0, 1000)")
        source = pane_showing(app, "source")
        assert bad_line - 1 in source.view.marks
        assert source.view.cursor_index == bad_line - 1
        assert app.query_one("#status").has_class("-error")
        # fix the file and reload without restarting
        broken.write_text(broken.read_text().replace("tl.arange(0, 1000)", "tl.arange(0, 1024)"))
        await pilot.press("r")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.ok
        assert not app.query_one("#status").display
        assert not pane_showing(app, "source").view.marks


@run_async
async def test_several_compilations_open_the_picker_first():
    app = IrscopeApp(kernel_path("misaligned.py"), target="sm_90")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until_shown(app, pilot)
        from irscope.tui.screens import PickerScreen

        assert isinstance(app.screen, PickerScreen)
        await pilot.press("down", "enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.main.shown is app.main.shown and app.main.shown.comp is app.main.comps[1]
        ptx = "\n".join(app.main.shown.texts["ptx"].lines)
        assert "ld.global.b32" in ptx and "ld.global.v4" not in ptx  # x[1:]: no vector loads


@run_async
async def test_changing_target_recompiles_in_the_background():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        app.main.recompile_in_background(target="gfx942")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert str(app.main.shown.comp.target) == "gfx942"
        assert "amdgcn" in [p.stage for p in app.main.linked.panes if p.display]


@run_async
async def test_editing_a_constexpr_recompiles_with_it():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        from textual.widgets import Input

        from irscope.tui.screens import EditScreen

        assert isinstance(app.screen, EditScreen)
        field = app.screen.query_one("#field-BLOCK_SIZE", Input)
        field.value = "256"
        field.focus()
        await pilot.press("enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.constexprs["BLOCK_SIZE"] == 256
        assert "256" in "\n".join(app.main.shown.texts["ttir"].lines)


@run_async
async def test_palette_offers_commands_for_this_compilation():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Show SASS in this pane" in titles
        assert "Compile for gfx942" in titles and "Compile for sm_90" not in titles
        assert any(t.startswith("Jump to source line") for t in titles)


def test_every_registered_panel_follows_the_contract():
    from irscope.tui.panels import PANELS
    from irscope.tui.panels.base import InfoPanel

    assert PANELS
    for panel in PANELS:
        assert issubclass(panel, InfoPanel) and isinstance(panel.panel_title, str)
        assert callable(panel.show_context)


def test_irscope_file_with_a_bad_path_is_one_error_line(front):
    code, out, err = front("kernels/nope.py")
    assert code == 2 and out == ""
    assert (
        err.startswith("irscope: error: kernels/nope.py: no such file")
        and len(err.splitlines()) == 1
    )


@run_async
async def test_clicking_a_line_moves_the_cursor_and_links():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        source = pane_showing(app, "source")
        view = source.view
        store = source_line_of(ADD, "tl.store(")
        row = view.row_of(store - 1) - int(view.scroll_offset.y)
        await pilot.click(f"#{view.id}", offset=(10, row))
        await pilot.pause()
        assert view.cursor_index == store - 1
        ptx = pane_showing(app, "ptx").view
        assert any("st.global" in ptx.text.lines[i] for i in ptx.linked)


@run_async
async def test_a_file_that_does_not_parse_shows_the_line_in_the_app():
    app = IrscopeApp(fixture_path("syntax_error.py"), target="sm_90")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until_shown(app, pilot)
        assert app.main.shown is None and app.main.failure is not None
        assert "syntax error" in app.main.failure.message
        source = app.main.linked.panes[0].view
        assert source.stage == "source" and app.main.failure.line - 1 in source.marks
        assert app.query_one("#status").has_class("-error")
        status = str(app.query_one("#status-text").content)
        # the message itself says the fix
        assert status.endswith("(r reloads)") and "press r" not in status
        error = next(p.view for p in app.main.linked.panes[1:] if p.display)
        assert max(len(line) for line in error.text.lines) <= 34  # wrapped for a narrow pane


@run_async
async def test_a_file_that_raises_shows_its_traceback_in_the_app():
    app = IrscopeApp(fixture_path("raises.py"), target="sm_90")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until_shown(app, pilot)
        assert app.main.failure is not None and "ValueError" in app.main.failure.message
        marked = app.main.failure.line
        assert marked == source_line_of(fixture_path("raises.py"), "raise ValueError(")
        error_pane = app.main.linked.panes[1].view
        assert any("raise ValueError" in line for line in error_pane.text.lines)


@run_async
async def test_another_autotune_config_from_the_palette():
    app = IrscopeApp(kernel_path("matmul.py"), target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        first = dict(app.main.shown.comp.constexprs)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert any(t.startswith("Autotune config 1:") for t in titles)
        app.main.compile_config_in_background(1)
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.launch.autotune_index == 1
        assert dict(app.main.shown.comp.constexprs) != first
        # the picker now lists config 1's compilation, the one shown
        assert [comp.launch.autotune_index for comp in app.main.comps] == [1]
        assert app.main.comps[app.main.shown_index] is app.main.shown.comp


@run_async
async def test_the_palette_offers_the_configs_the_autotuners_pruning_leaves():
    """The pruner replaces the declared configs 0-2 with new ones; of those, 3 is shown and 4 is offered."""
    app = IrscopeApp(fixture_path("autotune_pruner_adds.py"), target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.launch.autotune_index == 3
        titles = [
            c.title
            for c in app.get_system_commands(app.screen)
            if c.title.startswith("Autotune config")
        ]
        assert len(titles) == 1 and titles[0].startswith(
            "Autotune config 4: BLOCK_M: 16, BLOCK_N: 64, num_warps: 4"
        )


@run_async
async def test_a_panel_that_raises_says_so_and_the_app_goes_on(monkeypatch):
    from irscope.ir import explain
    from irscope.tui.panels.explain import ExplainPanel
    from irscope.tui.panels.info import LineInfoPanel

    def broken(*args, **kwargs):
        raise ValueError("a bug in an analysis")

    monkeypatch.setattr(LineInfoPanel, "show_context", broken)
    # raises in the panel's job (its thread), read there
    monkeypatch.setattr(explain, "explain_line", broken)
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("i")
        await pilot.pause()
        assert "a bug in an analysis" in str(
            app.query_one(LineInfoPanel).query_one("#line-info").content
        )
        await pilot.press("i")  # the next panel: Explain
        await pilot.press("down")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "a bug in an analysis" in str(
            app.query_one(ExplainPanel).query_one("#explain-line").content
        )
        assert app.is_running


@run_async
async def test_i_opens_the_panels_then_steps_through_them_then_hides_them():
    from textual.widgets import TabbedContent

    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        panels = app.query_one("#panels", TabbedContent)
        seen = []
        for _ in range(6):
            await pilot.press("i")
            await pilot.pause()
            seen.append(panels.get_tab(panels.active).label.plain if panels.display else None)
        assert seen == ["Info", "Explain", "Memory", "Coalescing", "Measured", None]
        await app.workers.wait_for_complete()


@run_async
async def test_main_view_keys_are_off_while_a_dialog_is_in_front():
    from irscope.tui.screens import TargetScreen

    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("t")
        await pilot.pause()
        # edit, maximise, reload: they would act unseen behind the dialog
        await pilot.press("e", "m", "r")
        await pilot.pause()
        assert (
            isinstance(app.screen, TargetScreen)
            and not app.main.linked.pane_maximized
            and not app.main.busy
        )
        keys = app.screen.active_bindings  # the main screen's keys are not among the dialog's
        assert "e" not in keys and "m" not in keys and app.main.check_action("edit", ()) is False
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main and app.screen.active_bindings["e"].binding.action == "edit"
        assert app.main.check_action("edit", ()) is True


@run_async
async def test_an_edit_triton_refuses_names_the_value_not_an_internal_error():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        app.main.recompile_in_background(defines={"num_warps": 3})
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = str(app.query_one("#status-text").content)
        assert "num_warps=3" in status and "internal error" not in status and "press e" in status
        # the last good compilation stays
        assert app.main.shown is not None and app.main.shown.comp.num_warps == 4


def _notes(app) -> list[str]:
    return [n.message for n in app._notifications]


@run_async
async def test_reload_keeps_the_values_set_with_e_the_target_and_says_so():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        app.main.recompile_in_background(defines={"BLOCK_SIZE": 256})
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        app.main.recompile_in_background(target="sm_80")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert not any("reloaded" in n for n in _notes(app)), "only a reload says what it kept"
        await pilot.press("r")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        comp = app.main.shown.comp
        assert comp.constexprs["BLOCK_SIZE"] == 256 and str(comp.target) == "sm_80"
        assert any(
            "reloaded add.py" in n and "sm_80" in n and "BLOCK_SIZE=256" in n for n in _notes(app)
        )


@run_async
async def test_reload_keeps_the_compilation_picked():
    app = IrscopeApp(kernel_path("misaligned.py"), target="sm_90")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("down", "enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        first_spec = app.main.shown.comp.specialization
        await pilot.press("r")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.screen is app.screen_stack[0], "reload must not ask again which compilation"
        assert (
            app.main.shown.comp is app.main.comps[1]
            and app.main.shown.comp.specialization == first_spec
        )


@run_async
async def test_after_a_target_change_the_picker_lists_that_target_with_the_cursor_on_the_one_shown():
    from textual.widgets import DataTable

    from irscope.tui.screens import PickerScreen

    app = IrscopeApp(kernel_path("misaligned.py"), target="sm_90")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("down", "enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        app.main.recompile_in_background(target="gfx942")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert str(app.main.shown.comp.target) == "gfx942"
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        assert [row["target"] for row in app.screen.rows] == ["gfx942", "gfx942"]
        assert app.screen.query_one(DataTable).cursor_row == 1
        await pilot.press("enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert (
            str(app.main.shown.comp.target) == "gfx942" and app.main.shown.comp is app.main.comps[1]
        )


@run_async
async def test_edit_shows_an_int_the_jit_folded_as_an_argument_not_a_constexpr():
    from textual.widgets import Input, Label

    from irscope.tui.screens import EditScreen

    app = IrscopeApp(fixture_path("specialize.py"), target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("enter")  # strided_copy, launched with stride=1
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.specialization["stride"] == "constant"
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditScreen)
        label = str(app.screen.query_one("#label-stride", Label).content)
        assert "argument" in label and "folded" in label and "constexpr" not in label
        assert "constexpr" in str(app.screen.query_one("#label-BLOCK", Label).content)
        assert "launch option" in str(app.screen.query_one("#label-num_warps", Label).content)
        field = app.screen.query_one("#field-stride", Input)
        assert field.value == "1"
        field.value = "3"
        field.focus()
        await pilot.press("enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        comp = app.main.shown.comp
        # a runtime i32 now
        assert comp.specialization["stride"] == "" and "stride" not in comp.constexprs
        assert comp.signature["stride"] == "i32"


@run_async
async def test_the_footer_shows_the_main_keys_whole_at_80_columns_and_every_key_when_wide():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until_shown(app, pilot)
        for width in (80, 100, 115, 120, 121, 122, 160):
            await pilot.resize_terminal(width, 24)
            await pilot.pause(0.2)
            keys = list(app.query("FooterKey"))
            # ^p, the last to go
            palette = next((k for k in keys if k.has_class("-command-palette")), None)
            listed = [k for k in keys if k is not palette]
            shown = {k.key_display for k in listed}
            assert {"q", "?", "s", "/", "t", "e", "r", "i", "f"} <= shown, (width, shown)
            right = palette.region.x if palette is not None else width
            for key in listed:  # whole, left of the palette key: nothing cut off
                assert key.region.width > 0 and key.region.right <= right, (width, key.key_display)
            assert (palette is not None) == (width >= 100), width
            if width >= 160:
                assert {"]", "m", "l", "c", "d"} <= shown
                assert any(k.description == "Next block" for k in listed)


@run_async
async def test_while_busy_the_keys_that_start_work_wait_and_say_so():
    from irscope.tui.screens import PickerScreen

    app = IrscopeApp(kernel_path("misaligned.py"), target="sm_90")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        shown = app.main.shown.comp
        # a request that runs until the gate opens, as a compile in the worker
        gate = threading.Event()
        app.main.run_worker(gate.wait, thread=True, group="load")
        await pilot.pause()
        assert app.main.busy
        for key in ("p", "t", "e", "r"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is app.screen_stack[0] and not isinstance(app.screen, PickerScreen), (
                key
            )
        app.main.recompile_in_background(target="sm_80")
        app.main.compile_config_in_background(1)
        await pilot.pause(0.2)
        assert app.main.shown.comp is shown
        assert sum("still working" in n for n in _notes(app)) >= 4
        gate.set()
        await app.workers.wait_for_complete()
        assert not app.main.busy


@run_async
async def test_reload_drops_the_edits_when_the_file_now_has_another_kernel(tmp_path):
    path = tmp_path / "one_kernel.py"
    path.write_text(open(ADD).read())
    app = IrscopeApp(str(path), target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        app.main.recompile_in_background(defines={"BLOCK_SIZE": 256})
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.main.edits == {"BLOCK_SIZE": 256}
        path.write_text(open(ADD).read().replace("add_kernel", "sum_kernel"))
        await pilot.press("r")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.kernel.name == "sum_kernel"
        assert app.main.edits == {} and app.main.shown.comp.constexprs["BLOCK_SIZE"] == 1024


@run_async
async def test_rows_on_a_256_colour_terminal_take_greys_not_saturated_blocks():
    """A faint tint snaps to #5f0000 or #00005f on 256 colours (tmux's default): there, rows take the grey
    ramp, and the gutter bar keeps the source line's colour."""
    from rich.color import ColorSystem

    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        view = app.main.linked.panes[0].view
        view._eight_bit = lambda: False
        truecolor = {view._make_style(f"tint:{n}").bgcolor for n in range(8)}
        assert len(truecolor) == 8  # one tint per link colour
        view._eight_bit = lambda: True
        for key in (
            [f"tint:{n}" for n in range(8)] + [f"linked:{n}" for n in range(8)] + ["linked:"]
        ):
            colour = view._make_style(key).bgcolor
            assert colour.system == ColorSystem.EIGHT_BIT and 232 <= colour.number <= 255, (
                key,
                colour,
            )
        assert view._make_style("bar:0").color != view._make_style("bar:1").color


@run_async
async def test_the_picker_at_80_columns_shows_what_tells_a_kernels_rows_apart():
    """Two compilations of one kernel differ in a constexpr: at 80 columns, where the columns after the grid
    are off screen, the picker still shows it (it comes right after the kernel's name)."""
    from irscope.tui.screens import PickerScreen

    app = IrscopeApp(fixture_path("autotune_key_leaves_out.py"), target="sm_90")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        screen = app.export_screenshot()
        assert "STAGE=3" in screen and "STAGE=1" in screen


@run_async
async def test_a_launch_whose_config_only_timing_picks_is_a_picker_row_compiled_when_chosen():
    """The STAGE=1 launch of a key tuned at STAGE=3 compiles whichever config a GPU's timing chose: the picker
    lists it, not compiled, and Enter compiles it (its first config, as `--launch 1` does)."""
    from textual.widgets import DataTable

    from irscope.tui.screens import NOT_COMPILED, PickerScreen

    app = IrscopeApp(fixture_path("autotune_key_leaves_out.py"), target="sm_90")
    async with app.run_test(size=(160, 36)) as pilot:
        await wait_until_shown(app, pilot)
        assert [c.constexprs["STAGE"] for c in app.main.comps] == [3]
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        title = str(app.screen.query_one("#picker-title").content)
        assert title == "1 compilation(s); ○ 1 named, not compiled — Enter compiles one"
        assert [bool(row.get("named")) for row in app.screen.rows] == [False, True]
        assert app.screen.rows[1]["named"]["why"] == "timing"
        assert [row["constexprs"] for row in app.screen.rows] == ["STAGE=3", "STAGE=1"]
        assert NOT_COMPILED in str(app.screen.query_one(DataTable).get_row_at(1)[0])
        await pilot.press("down", "enter")
        for _ in range(100):
            await pilot.pause(0.1)
            if len(app.main.comps) == 2:
                break
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.constexprs["STAGE"] == 1
        assert app.main.ws.named[0]["compiled"]
