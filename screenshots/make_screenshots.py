"""Regenerate the SVG screenshots in screenshots/ (used by the README and docs/user-guide.md).

    python screenshots/make_screenshots.py

Each shot opens the real app headless on an example kernel, waits for the compile, presses a few
keys and saves an SVG. Convert one to PNG with e.g. `rsvg-convert shot.svg -o shot.png`.
"""

from __future__ import annotations

import asyncio
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "tui"))

from tui_helpers import wait_until_shown  # noqa: E402

from irscope.tui.app import IrscopeApp  # noqa: E402

SHOTS = [
    # name, kernel, size, keys pressed after loading
    ("add_linked", "kernels/add.py", (160, 40), ["tab", "tab", "slash", *"ld.global", "enter"]),
    ("add_80x24", "kernels/add.py", (80, 24), []),
    ("attention_200x50", "kernels/attention.py", (200, 50), ["down"] * 10),
    ("helper_info_panel", "kernels/helper.py", (160, 45), ["down"] * 4 + ["i"]),
    ("compile_error", "tests/fixtures/compile_error.py", (120, 30), []),
]


async def shoot(name: str, path: str, size: tuple[int, int], keys: list[str]) -> str:
    app = IrscopeApp(os.path.join(ROOT, path), target="sm_90")
    async with app.run_test(size=size) as pilot:
        await wait_until_shown(app, pilot)
        if keys:
            await pilot.press(*keys)
        await pilot.pause()
        out = os.path.join(HERE, f"{name}.svg")
        app.save_screenshot(out)
    return out


async def shoot_memory_panel() -> str:
    """misaligned.py, launch 0 (n = 1000): scalar marks, and the Memory panel on the x load with the
    why, the fix and the what-if recompile."""
    from test_memory_panel import open_memory_panel, wait_for_what_if
    from tui_helpers import pane_showing, source_line_of

    from irscope.tui.panels.memory import MemoryPanel

    path = os.path.join(ROOT, "kernels", "misaligned.py")
    app = IrscopeApp(path, target="sm_90")
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        panel = await open_memory_panel(app, pilot)
        assert isinstance(panel, MemoryPanel)
        app.main.linked.focus_pane(0)
        pane_showing(app, "source").view.move_cursor_to_index(
            source_line_of(path, "x = tl.load(") - 1, notify=True
        )
        await pilot.pause()
        await wait_for_what_if(app, pilot, panel)
        await pilot.pause()
        out = os.path.join(HERE, "misaligned_memory_panel.svg")
        app.save_screenshot(out)
    return out


async def shoot_coalescing_panel() -> str:
    """strided.py: the Coalescing panel on the stride-8 load, one warp's lanes against its 32 sectors."""
    from test_coalescing_panel import wait_for_analysis
    from textual.widgets import TabbedContent
    from tui_helpers import pane_showing, source_line_of

    from irscope.tui.panels.coalescing import CoalescingPanel

    path = os.path.join(ROOT, "kernels", "strided.py")
    app = IrscopeApp(path, target="sm_90")
    async with app.run_test(size=(160, 60)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("i")
        await pilot.pause()
        tabs = app.query_one("#panels", TabbedContent)
        tabs.active = next(p.id for p in tabs.query("TabPane") if p.query(CoalescingPanel))
        await pilot.pause()
        app.main.linked.focus_pane(0)
        pane_showing(app, "source").view.move_cursor_to_index(
            source_line_of(path, "x = tl.load(") - 1, notify=True
        )
        await pilot.pause()
        app.main.refresh_panels()
        await wait_for_analysis(app, pilot)
        await pilot.pause()
        out = os.path.join(HERE, "strided_coalescing_panel.svg")
        app.save_screenshot(out)
    return out


async def shoot_explain_panel() -> str:
    """add.py: the PTX cursor on the 16-byte masked load of x; the Explain panel says what it does and
    tells the lowering story of its source line."""
    from test_explain_panel import explain_the_ptx_load_of_x

    path = os.path.join(ROOT, "kernels", "add.py")
    app = IrscopeApp(path, target="sm_90")
    async with app.run_test(size=(160, 48)) as pilot:
        await explain_the_ptx_load_of_x(pilot)
        out = os.path.join(HERE, "add_explain_panel.svg")
        app.save_screenshot(out)
    return out


async def shoot_stepper() -> str:
    """add.py: ctrl+t records program 0 in the interpreter; five steps reach the first tl.load."""
    from stepper_harness import wait_recorded

    path = os.path.join(ROOT, "kernels", "add.py")
    app = IrscopeApp(path, target="sm_90")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("ctrl+t")
        await pilot.pause()
        await wait_recorded(pilot)
        await pilot.press(*["s"] * 5)
        await pilot.pause()
        out = os.path.join(HERE, "add_stepper.svg")
        app.save_screenshot(out)
    return out


async def shoot_diff() -> str:
    """misaligned.py: D on launch 0, against launch 1 at PTX; the cursor on the x load, with why each side
    is not vectorized."""
    from test_diff_and_pipeline_views import open_diff, wait_for_doc

    app = IrscopeApp(os.path.join(ROOT, "kernels", "misaligned.py"), target="sm_90")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until_shown(app, pilot)
        await pilot.press("enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        await wait_for_doc(pilot, await open_diff(pilot))
        await pilot.pause()
        out = os.path.join(HERE, "misaligned_diff.svg")
        app.save_screenshot(out)
    return out


async def shoot_pipeline() -> str:
    """add.py: P on source line 26 (the y load); the passes that changed it marked, the coalesce pass's diff."""
    from test_diff_and_pipeline_views import open_pipeline_on_line

    app = IrscopeApp(os.path.join(ROOT, "kernels", "add.py"), target="sm_90")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until_shown(app, pilot)
        await open_pipeline_on_line(pilot, 26)
        await pilot.press("down")
        await pilot.pause()
        out = os.path.join(HERE, "add_pipeline.svg")
        app.save_screenshot(out)
    return out


def main() -> int:
    only = set(sys.argv[1:])
    for name, path, size, keys in SHOTS:
        if only and name not in only:
            continue
        print(asyncio.run(shoot(name, path, size, keys)))
    if not only or "misaligned_memory_panel" in only:
        print(asyncio.run(shoot_memory_panel()))
    if not only or "strided_coalescing_panel" in only:
        print(asyncio.run(shoot_coalescing_panel()))
    if not only or "add_explain_panel" in only:
        print(asyncio.run(shoot_explain_panel()))
    if not only or "add_stepper" in only:
        print(asyncio.run(shoot_stepper()))
    if not only or "misaligned_diff" in only:
        print(asyncio.run(shoot_diff()))
    if not only or "add_pipeline" in only:
        print(asyncio.run(shoot_pipeline()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
