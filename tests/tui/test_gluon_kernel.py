"""A Gluon kernel in the app (Pilot, real compile): kernels/gluon_copy.py's first launch, whose layout loads 16
bytes per thread. Its panes link source and PTX both ways, the TTIR key says why a Gluon kernel has none,
and the Coalescing panel counts its sectors from addresses the PTX computes (the interpreter does not run
Gluon)."""

from __future__ import annotations

import asyncio
import time

from conftest import kernel_path
from tui_helpers import pane_showing, run_async, source_line_of, wait_until_shown

from irscope.base.names import ALL_STAGES
from irscope.tui.app import IrscopeApp
from irscope.tui.panels.coalescing import CoalescingPanel

GLUON_COPY = kernel_path("gluon_copy.py")
LOAD_LINE = source_line_of(GLUON_COPY, "tile = gl.load(")


def _panel_text(panel) -> str:
    import io

    from rich.console import Console

    console = Console(width=160, file=io.StringIO(), record=True, color_system=None)
    console.print(panel.query_one("#coalescing-body").content)
    return " ".join(console.export_text().split())


@run_async
async def test_gluon_copy_links_its_16_byte_loads_and_says_what_it_lacks():
    app = IrscopeApp(GLUON_COPY, target="sm_90")
    async with app.run_test(size=(160, 44)) as pilot:
        await wait_until_shown(app, pilot)
        # two compilations (one per layout): the picker asks; the first is the layout along the rows
        await pilot.press("enter")
        await pilot.pause(0.2)
        await wait_until_shown(app, pilot)
        comp = app.main.shown.comp
        assert comp is app.main.comps[0] and "size_per_thread=[1, 4]" in comp.constexprs["layout"]
        assert comp.ok and comp.kernel.language == "gluon"
        assert "ttir" not in app.main.shown.stages
        header = str(app.main.query_one("#header").render())
        assert "not run (Gluon)" in header and "interpreter failed" not in header

        # source -> PTX: the load line's PTX lines hold its 16-byte vector loads
        source, ptx = pane_showing(app, "source"), pane_showing(app, "ptx")
        source.view.move_cursor_to_index(LOAD_LINE - 1, notify=True)
        await pilot.pause()
        linked = [ptx.view.text.lines[i] for i in sorted(ptx.view.linked)]
        assert sum("ld.global.v4.b32" in line for line in linked) == 8
        assert not any("ld.global.b32" in line for line in linked)
        # PTX -> source: a vector load's line leads back to the load
        first = next(i for i in sorted(ptx.view.linked) if "ld.global.v4" in ptx.view.text.lines[i])
        ptx.view.move_cursor_to_index(first, notify=True)
        await pilot.pause()
        assert source.view.cursor_index == LOAD_LINE - 1

        # the TTIR key: a warning that says why, the pane keeps its stage
        stage_before = app.main.linked.panes[app.main.linked.active_pane].stage
        await pilot.press(str(ALL_STAGES.index("ttir") + 1))
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert any("ttir does not exist for a Gluon kernel" in n for n in said), said
        assert app.main.linked.panes[app.main.linked.active_pane].stage == stage_before

        # the Coalescing panel: the addresses come from the PTX, counted as for a Triton kernel
        panel = app.query_one(CoalescingPanel)
        for _ in range(8):
            shown = app.main.panel_area.shown_panel()
            if shown is panel:
                break
            await pilot.press("i")
            await pilot.pause()
        assert app.main.panel_area.shown_panel() is panel
        source.view.move_cursor_to_index(LOAD_LINE - 1, notify=True)
        start = time.monotonic()
        while "sectors/request" not in _panel_text(panel):
            assert time.monotonic() - start < 120, _panel_text(panel)
            await asyncio.sleep(0.1)
            await pilot.pause()
        text = _panel_text(panel)
        assert "line 33 load src_ptr" in text and "16.0 sectors/request" in text, text
        load_at = next(
            n for n, line in enumerate(comp.stage("ttgir").splitlines(), 1) if "tt.load" in line
        )
        assert "sizePerThread [1, 4]" in text and f"tt.load (ttgir line {load_at})" in text, text
