"""What the front end keeps of the worker's answers: bounded, and dropped when new compilations come
(`r`, an edit, another target), so a long session holds the last few compilations' results, not all."""

from __future__ import annotations

import asyncio

from conftest import kernel_path
from tui_helpers import run_async, wait_until_shown

from irscope.tui import asker
from irscope.tui.app import IrscopeApp
from irscope.tui.panels import CoalescingPanel, ExplainPanel, MemoryPanel

ADD = kernel_path("add.py")


def cached_keys(main) -> dict[str, set]:
    """The compilation keys each cache holds something for (Explain keys by compilation and line)."""
    out = {
        "MainScreen.measured_lines": set(main.measured_lines),
        "MainScreen.pass_captures": set(main.pass_captures),
    }
    for view in main.askers():
        for name, cache in view.caches().items():
            out[f"{type(view).__name__}.{name}"] = {
                k[0] if isinstance(k, tuple) else k for k in cache
            }
    return out


async def until(pilot, done, what: str, timeout: float = 120.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if done():
            await pilot.pause()
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {timeout} s")


async def fill_every_panel(app, pilot) -> int:
    """Each panel asked about the line under the cursor, and their answers in: the compilation's key."""
    main = app.main
    key = main.shown.comp.key
    ctx = main.linked.cursor_context()
    for panel_cls in (ExplainPanel, MemoryPanel, CoalescingPanel):
        app.query_one(panel_cls).show_context(ctx)
    coalescing = app.query_one(CoalescingPanel)
    await until(pilot, lambda: coalescing._analyses.get(key) is not None, "the coalescing analysis")
    await until(pilot, lambda: len(app.query_one(ExplainPanel)._stories), "the explanation")
    await until(
        pilot, lambda: main.query_one("#findings").findings_of(key) is not None, "the findings"
    )
    return key


@run_async
async def test_a_reload_drops_everything_kept_of_the_compilations_before_it():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 44)) as pilot:
        await wait_until_shown(app, pilot)
        main = app.main
        old = await fill_every_panel(app, pilot)
        main.pass_captures[old] = [{"name": "a pass"}]  # as P keeps its capture
        sizes = main.cache_sizes()
        for name in (
            "CoalescingPanel.analyses",
            "ExplainPanel.stories",
            "MemoryPanel.analysis",
            "FindingsView.findings",
            "MainScreen.pass_captures",
        ):
            assert sizes[name] >= 1, (name, sizes)
        await pilot.press("r")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        new = main.shown.comp.key
        assert new != old
        kept = cached_keys(main)
        assert not any(old in keys for keys in kept.values()), kept
        # the panels are hidden: nothing asked them again; the findings of the new compilation may be in
        assert all(not keys for name, keys in kept.items() if name != "FindingsView.findings"), kept
        assert kept["FindingsView.findings"] <= {new}


@run_async
async def test_picking_compilations_in_turn_keeps_only_the_last_few():
    # misaligned.py has two compilations
    asker.KEEP_COMPILATIONS, kept_before = (
        1,
        asker.KEEP_COMPILATIONS,
    )
    try:
        app = IrscopeApp(kernel_path("misaligned.py"), target="sm_90")
        async with app.run_test(size=(160, 44)) as pilot:
            await wait_until_shown(app, pilot)
            main = app.main
            await pilot.press("enter")  # the picker: the first compilation
            await pilot.pause(0.2)
            await wait_until_shown(app, pilot)
            first = await fill_every_panel(app, pilot)
            # `p`, the second one: not a new load, nothing dropped
            main.prepare_in_background(main.comps[1])
            await pilot.pause(0.2)
            await wait_until_shown(app, pilot)
            second = await fill_every_panel(app, pilot)
            assert first != second
            kept = cached_keys(main)
            for name in ("CoalescingPanel.analyses", "FindingsView.findings"):
                assert kept[name] == {second}, (name, kept)  # the bound, not a drop: it holds one
            # (the Explain panel keeps stories by source line, up to its own bound, of any compilation)
            assert all(
                len(keys) <= 1 for name, keys in kept.items() if name != "ExplainPanel.stories"
            ), kept
    finally:
        asker.KEEP_COMPILATIONS = kept_before


@run_async
async def test_edits_in_a_row_leave_the_last_compilation_alone_in_the_caches():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(160, 44)) as pilot:
        await wait_until_shown(app, pilot)
        main = app.main
        seen = [await fill_every_panel(app, pilot)]
        for warps in (2, 8):
            main.recompile_in_background(defines={"num_warps": warps})
            await pilot.pause(0.2)
            await wait_until_shown(app, pilot)
            seen.append(await fill_every_panel(app, pilot))
        assert len(set(seen)) == 3
        kept = cached_keys(main)
        assert all(keys <= {seen[-1]} for keys in kept.values()), kept
        assert kept["CoalescingPanel.analyses"] == {seen[-1]}
