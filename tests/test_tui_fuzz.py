"""Random keys and resizes must never end the app: every binding, printable characters (markup's `[ ] \\ /`
included), prompts and pickers opened and typed into, on a kernel, on a compile error and on a file whose
text carries escape sequences and brackets. The seed is fixed per file, so a failure replays."""

from __future__ import annotations

import random
import string

import pytest
from conftest import fixture_path, kernel_path
from tui_helpers import run_async, wait_until_shown

from irscope.tui.app import IrscopeApp

KEYS = (
    [
        "tab",
        "shift+tab",
        "up",
        "down",
        "left",
        "right",
        "pageup",
        "pagedown",
        "home",
        "end",
        "enter",
        "escape",
        "backspace",
        "space",
        "ctrl+t",
        "ctrl+p",
        "question_mark",
        "slash",
        "left_square_bracket",
        "right_square_bracket",
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "7",
    ]
    + list("sSmlcdnNgteipxfMDP")
    + list("[]\\/=<>'\"#:,.")
    + list(string.ascii_lowercase.replace("q", ""))
)
SIZES = [(80, 24), (220, 50), (120, 40), (100, 30), (60, 20)]
PRESSES = 700


@pytest.mark.parametrize(
    "path, seed",
    [
        (kernel_path("add.py"), 1),
        (fixture_path("compile_error.py"), 2),
        (fixture_path("escapes.py"), 3),
        (kernel_path("strided.py"), 4),
    ],
)
@run_async
async def test_random_keys_and_resizes_never_end_the_app(path, seed):
    rng = random.Random(seed)
    app = IrscopeApp(path, target="sm_90")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_shown(app, pilot)
        for n in range(PRESSES):
            if rng.random() < 0.04:
                await pilot.resize_terminal(*rng.choice(SIZES))
            else:
                key = rng.choice(KEYS)
                await pilot.press(key)
            assert app.is_running, f"the app ended after press {n} (seed {seed})"
            prompt_open = app.query_one("#prompt").display
            if (app.screen is not app.screen_stack[0] or prompt_open) and rng.random() < 0.4:
                # leave a picker, a prompt, the stepper
                await pilot.press(rng.choice(["escape", "enter"]))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running and app.return_code in (None, 0)


@run_async
async def test_one_resize_gives_the_layout_of_the_new_size_and_a_search_for_markup_is_plain_text():
    app = IrscopeApp(kernel_path("add.py"), target="sm_90")
    async with app.run_test(size=(220, 50)) as pilot:
        await wait_until_shown(app, pilot)
        assert (
            app.main.linked.effective_layout() == "columns"
            and sum(p.display for p in app.main.linked.panes) == 4
        )
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert (
            app.main.linked.effective_layout() == "rows"
            and sum(p.display for p in app.main.linked.panes) == 2
        )
        await pilot.press("slash", *"[a=", "enter")
        await pilot.pause()
        assert app.is_running and app.main.search_term == "[a="
