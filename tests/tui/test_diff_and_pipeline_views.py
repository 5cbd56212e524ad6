"""Diff mode (D) and the pipeline view (P), driven headless on real compilations."""

from __future__ import annotations

import asyncio
import re
import shutil
import time

from conftest import fixture_path, kernel_path
from tui_helpers import pane_showing, run_async, source_line_of, wait_until_shown

from irscope.tui.app import IrscopeApp
from irscope.tui.diffview import DiffScreen
from irscope.tui.diffview.sides import SideScreen
from irscope.tui.pipeline import PipelineScreen


async def wait_for(pilot, check, what: str, timeout: float = 240.0) -> None:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            await pilot.pause()
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {timeout} s")


async def open_diff(pilot) -> DiffScreen:
    await pilot.press("D")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, DiffScreen)
    return screen


async def wait_for_doc(pilot, screen: DiffScreen, old=None) -> dict:
    await wait_for(pilot, lambda: screen.doc is not None and screen.doc is not old, "the diff")
    return screen.doc


async def open_pipeline_on_line(pilot, line: int) -> PipelineScreen:
    """P with the source pane's cursor on `line`; waits for the capture."""
    app = pilot.app
    app.main.linked.focus_pane(0)
    pane_showing(app, "source").view.move_cursor_to_index(line - 1, notify=True)
    await pilot.pause()
    await pilot.press("P")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, PipelineScreen) and screen.line == line
    await wait_for(pilot, lambda: screen.steps is not None, "the pass capture")
    return screen


def group_text(screen: DiffScreen, source_line: int) -> str:
    """Everything the two panes show for one source line, as plain text."""
    rows = [n for n, r in enumerate(screen.doc["lines"]) if r["source_line"] == source_line]
    return "\n".join(
        text.plain for text, row in screen.query_one("#diff-rows").lines if row in rows
    )


@run_async
async def test_misaligned_launch_0_against_1_shows_the_load_lines_with_their_causes():
    path = kernel_path("misaligned.py")
    app = IrscopeApp(path, target="sm_90")
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("enter")  # the picker: launch 0
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        screen = await open_diff(pilot)
        doc = await wait_for_doc(pilot, screen)
        assert (
            screen.sides[0].view.key == app.main.comps[0].key
            and screen.sides[1].view.key == app.main.comps[1].key
        )
        assert doc["stage"] == "ptx" and "x_ptr specialization [D] -> [-]" in doc["changes"]
        x_line = source_line_of(path, "x = tl.load(")
        x = group_text(screen, x_line)
        # both sides load 4 bytes per thread; the cause differs: the tail mask on the left, the x[1:] view on the right
        assert "load x_ptr: 8 × 4 B, 15.62 sect/req  →  8 × 4 B, 16.24 sect/req  (changed)" in x
        assert "left not vectorized: the mask is built from n_elements = 1000" in x
        assert "right not vectorized: x_ptr is not known to be 16-byte aligned" in x
        assert "ld.global.b32" in x and "ld.global.v4" not in x
        # PTX separates opcode and operands with a tab; drawn raw, a terminal jumps over stale cells
        drawn = [text.plain for text, _ in screen.query_one("#diff-rows").lines]
        assert not any("\t" in row for row in drawn)
        dividers = {
            row.index(" │ ")
            for row in drawn
            if row.startswith(("  ", "- ", "+ "))
            and " │ " in row
            and not re.match(r"[* ] +(\d+|-) │ ", row)
        }  # (a source line's header: `  25 │ x = ...`)
        assert len(dividers) == 1  # the right side's column starts at one place on every row
        assert {(f["rule"], f["source_line"]) for f in doc["findings"]["added"]} == {
            ("not-vectorized", x_line),
            ("not-vectorized", x_line + 1),
        }
        await pilot.press("s")  # the next stage both sides have: SASS
        doc = await wait_for_doc(pilot, screen, doc)
        assert doc["stage"] == "sass" and "LDG.E" in group_text(screen, x_line)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]


@run_async
async def test_one_launch_says_nothing_to_diff_then_a_typed_spec_shows_the_vector_load_turn_scalar():
    path = kernel_path("add.py")
    app = IrscopeApp(path, target="sm_90")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_shown(app, pilot)
        screen = await open_diff(pilot)
        await pilot.pause()
        assert screen.doc is None and "nothing to diff yet" in str(
            screen.query_one("#diff-status").render()
        )
        await pilot.press("b")
        await pilot.pause()
        assert isinstance(app.screen, SideScreen)
        app.screen.query_one("#diff-side-spec").focus()
        await pilot.press(*"n_elements=1000", "enter")
        doc = await wait_for_doc(pilot, screen)
        x_line = source_line_of(path, "x = tl.load(")
        access = next(a for a in doc["accesses"] if a["source_line"] == x_line)
        assert access["left"]["widths"] == [16] and access["right"]["widths"] == [4]
        x = group_text(screen, x_line)
        assert "right not vectorized: the mask is built from n_elements = 1000" in x
        assert "- @%p1 ld.global.v4.b32" in x and "+ @%p" in x and "ld.global.b32" in x


@run_async
async def test_the_compilation_before_a_reload_is_kept_for_the_diff(tmp_path):
    path = str(tmp_path / "add.py")
    shutil.copyfile(kernel_path("add.py"), path)
    app = IrscopeApp(path, target="sm_90")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_shown(app, pilot)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace("x + y, mask=mask", "x * y, mask=mask"))
        before = app.main.shown.comp.key
        await pilot.press("r")
        await pilot.pause(0.5)
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.key != before and app.main.previous_comp.key == before
        screen = await open_diff(pilot)
        doc = await wait_for_doc(pilot, screen)
        assert screen.sides[0].view.key == before
        assert doc["left"]["coalescing_error"].startswith(
            "not interpreted: this compilation is from before the reload"
        )
        store_line = source_line_of(path, "tl.store(")
        row = next(r for r in doc["lines"] if r["source_line"] == store_line)
        assert row["changed"] and any(
            "add.f32" in i["text"] for i in row["left"] if i["mark"] == "-"
        )
        assert any("mul.f32" in i["text"] for i in row["right"] if i["mark"] == "+")


@run_async
async def test_pipeline_names_the_passes_that_changed_line_26():
    path = kernel_path("add.py")
    app = IrscopeApp(path, target="sm_90")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_shown(app, pilot)
        assert not app.main.pass_captures  # nothing captured on open
        screen = await open_pipeline_on_line(pilot, 26)
        touching = [s["name"] for s in screen.steps if 26 in s["source_lines"]]
        assert {
            "convert-triton-to-tritongpu",
            "tritongpu-coalesce",
            "convert-triton-gpu-to-llvm",
        } <= set(touching)
        title = screen.query_one("#pipe-title").render().plain
        assert "source line 26: convert-triton-to-tritongpu, tritongpu-coalesce" in title
        passes = screen.query_one("#pipe-passes")
        # the cursor starts on the first of them
        assert passes.step["name"] == "convert-triton-to-tritongpu"
        await pilot.press("l")
        await pilot.pause()
        assert [s["name"] for s in passes.steps] == touching
        await pilot.press("down")
        await pilot.pause()
        diff = screen.query_one("#pipe-diff")
        assert (
            diff.lines[0].plain.startswith("pass ") and "tritongpu-coalesce" in diff.lines[0].plain
        )
        assert any(
            t.plain.startswith("+ #blocked1 = #ttg.blocked<{sizePerThread = [4]")
            for t in diff.lines
        )


@run_async
async def test_pipeline_and_diff_on_a_compile_error_say_so():
    app = IrscopeApp(fixture_path("compile_error.py"), target="sm_90")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("P")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        assert any("did not compile" in str(n.message) for n in app._notifications)


@run_async
async def test_leaving_before_the_worker_answers_is_harmless():
    app = IrscopeApp(kernel_path("add.py"), target="sm_90")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until_shown(app, pilot)
        screen = await open_diff(pilot)
        await pilot.press("b")
        await pilot.pause()
        app.screen.query_one("#diff-side-spec").focus()
        # a compile starts; the view is left at once
        await pilot.press(*"num_warps=8", "enter", "escape")
        await pilot.press("P", "escape")  # so is a pass capture
        await pilot.pause()
        # on a loaded machine the compile may answer before escape is handled: what the view held when it was
        # left is what it holds after every later answer
        assert app.screen is app.screen_stack[0]
        seen = screen.doc
        await app.workers.wait_for_complete()
        for _ in range(30):  # the worker's answers arrive after the screens are gone
            await asyncio.sleep(0.1)
        await pilot.pause()
        assert app.is_running and app.screen is app.screen_stack[0] and screen.doc is seen
