"""The edit dialog (`e`): values checked before anything compiles, one line naming the field, and the
reset to the launch's own values (Pilot on add.py, and the checks on their own)."""

from __future__ import annotations

import pytest
from conftest import kernel_path
from tui_helpers import run_async, wait_until_shown

from irscope.tui.app import IrscopeApp
from irscope.tui.edit import check

ADD = kernel_path("add.py")


@pytest.mark.parametrize(
    "name, text, old, kind, said",
    [
        (
            "BLOCK_SIZE",
            "abc",
            1024,
            "constexpr",
            "BLOCK_SIZE: 'abc' is not a whole number (it was 1024)",
        ),
        (
            "BLOCK_SIZE",
            "2.5",
            1024,
            "constexpr",
            "BLOCK_SIZE: '2.5' is not a whole number (it was 1024)",
        ),
        (
            "BLOCK_SIZE",
            "  ",
            1024,
            "constexpr",
            "BLOCK_SIZE: empty — type a value (it was 1024), or Esc to cancel",
        ),
        ("EVEN", "yes", True, "constexpr", "EVEN: 'yes' is not True or False (it was True)"),
        ("EVEN", "1", True, "constexpr", "EVEN: '1' is not True or False (it was True)"),
        ("scale", "x", 0.5, "constexpr", "scale: 'x' is not a number (it was 0.5)"),
        ("num_warps", "3", 4, "launch option", "num_warps: 3 is not a power of two from 1 to 32"),
        ("num_warps", "64", 4, "launch option", "num_warps: 64 is not a power of two from 1 to 32"),
        (
            "num_warps",
            "four",
            4,
            "launch option",
            "num_warps: 'four' is not a whole number (it was 4)",
        ),
        ("num_stages", "-1", 3, "launch option", "num_stages: -1 is negative"),
        (
            "stride",
            "True",
            1,
            "argument; the JIT folded its value 1 into the code",
            "stride: 'True' is not a whole number (it was 1)",
        ),
    ],
)
def test_a_wrong_value_is_one_line_naming_the_field(name, text, old, kind, said):
    value, wrong = check(name, text, old, kind)
    assert value is None and wrong == said and "\n" not in wrong


@pytest.mark.parametrize(
    "text, old, kind, value",
    [
        ("256", 1024, "constexpr", 256),
        (" 8 ", 4, "launch option", 8),
        ("False", True, "constexpr", False),
        ("2", 0.5, "constexpr", 2.0),
        ("tl.float16", "tl.float32", "constexpr", "tl.float16"),  # text for a text value (a dtype)
        ("3", 1, "argument; the JIT folded its value 1 into the code", 3),
    ],
)
def test_a_right_value_comes_back_typed(text, old, kind, value):
    got, wrong = check("X", text, old, kind)
    assert wrong == "" and got == value and type(got) is type(value)


@run_async
async def test_abc_for_an_int_constexpr_is_refused_in_the_dialog_and_reset_goes_back_to_the_launch():
    from textual.widgets import Button, Input, Label, Static

    from irscope.tui.screens import EditScreen

    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        launch_comp = app.main.shown.comp
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        # nothing edited: no reset
        assert isinstance(dialog, EditScreen) and not dialog.query("#reset")
        field = dialog.query_one("#field-BLOCK_SIZE", Input)
        field.value = "abc"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is dialog and not app.main.busy  # nothing compiles
        error = dialog.query_one("#edit-error", Static)
        assert (
            error.display
            and str(error.content) == "BLOCK_SIZE: 'abc' is not a whole number (it was 1024)"
        )
        assert field.has_focus
        field.value = "256"
        await pilot.press("enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.constexprs["BLOCK_SIZE"] == 256 and app.main.edits == {
            "BLOCK_SIZE": 256
        }

        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        assert "(edited)" in str(dialog.query_one("#label-BLOCK_SIZE", Label).content)
        assert "Reset" in str(dialog.query_one("#reset", Button).label)
        await pilot.press("ctrl+r")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.screen is app.screen_stack[0] and app.main.edits == {}
        assert (
            app.main.shown.comp.constexprs["BLOCK_SIZE"] == 1024
            and app.main.shown.comp.key == launch_comp.key
        )

        # edited, then reloaded (a new worker): the reset runs the file again, without the edits
        app.main.recompile_in_background(defines={"num_warps": 8})
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        await pilot.press("r")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.num_warps == 8
        await pilot.press("e")
        await pilot.pause()
        await pilot.click("#reset")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.num_warps == 4 and app.main.edits == {}
