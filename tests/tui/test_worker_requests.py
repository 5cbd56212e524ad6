"""The main screen's requests to the worker: an answer to an older request is dropped, `busy` is whether
a request's worker runs, and a failure is shown on the screen by one handler (fatal: the panes say why;
not fatal: the compilation shown stays)."""

from __future__ import annotations

import threading

from conftest import kernel_path
from tui_helpers import run_async, wait_until_shown

from irscope.tui.app import IrscopeApp
from irscope.tui.loader import OpenFailure
from irscope.tui.messages import Failed, Progress, Request

ADD = kernel_path("add.py")


@run_async
async def test_an_answer_to_an_older_request_is_dropped():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        main = app.main
        older = Request(main._serial, "load")  # the request that showed the kernel
        main.recompile_in_background(defines={"num_warps": 8})
        await wait_until_shown(app, pilot)
        # late answers to it
        main.post_message(Failed(older, OpenFailure("an old failure [M=64, N=32]")))
        main.post_message(Progress(older, "an old progress line", 0.5))
        await pilot.pause()
        assert (
            main.failure is None
            and main.shown.comp.num_warps == 8
            and main.edits == {"num_warps": 8}
        )
        assert "old" not in str(app.query_one("#status-text").content)
        # the same failure, answering the newest request: shown
        current = Request(main._serial, "recompile")
        main.post_message(Failed(current, OpenFailure("a new failure [M=64, N=32]")))
        await pilot.pause()
        assert main.failure is not None and app.is_running
        assert "a new failure [M=64, N=32]" in str(app.query_one("#status-text").content)


@run_async
async def test_busy_is_whether_a_request_runs_and_a_failure_that_is_not_fatal_keeps_the_panes():
    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        main = app.main
        assert not main.busy
        gate = threading.Event()
        main.run_worker(gate.wait, thread=True, group="load")
        assert main.busy and main.still_working()
        gate.set()
        await app.workers.wait_for_complete()
        assert not main.busy
        shown = main.shown
        main.post_message(
            Failed(
                Request(main._serial, "recompile"),
                OpenFailure("no [b]such[/b] target"),
                fatal=False,
            )
        )
        await pilot.pause()
        assert main.shown is shown and main.failure is None
        assert "✗ no [b]such[/b] target" in str(app.query_one("#status-text").content)


@run_async
async def test_a_views_stale_answer_is_dropped_and_its_failure_comes_back_to_it_through_the_main_screen():
    from irscope.base.errors import IrscopeError
    from irscope.tui.messages import CoalescingAnalysed
    from irscope.tui.panels import CoalescingPanel
    from irscope.tui.panels.coalescing import _analyse

    def refused(request, comp):
        raise IrscopeError("no [b]interpreter[/b] here")

    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        main, panel = app.main, app.query_one(CoalescingPanel)
        comp = main.shown.comp
        older = panel.ask("coalescing", refused, comp, about=comp.key)
        # the newer request: its answer counts
        panel.ask("coalescing", _analyse, comp, about=comp.key)
        await app.workers.wait_for_complete()
        await pilot.pause()
        result = panel._analyses.get(comp.key)
        # the failure was stale
        assert result is not None and not isinstance(result, str) and result.accesses
        panel.post_message(CoalescingAnalysed(older, "a stale result"))
        await pilot.pause()
        assert panel._analyses.get(comp.key) is result
        panel._analyses.clear()
        panel.ask("coalescing", refused, comp, about=comp.key)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert (
            panel._analyses.get(comp.key)
            == "coalescing analysis failed: no [b]interpreter[/b] here"
        )
        # the screen goes on
        assert main.failure is None and main.shown.comp is comp and app.is_running


@run_async
async def test_only_young_objects_are_collected_while_a_compile_runs_and_all_once_it_is_shown():
    import gc

    from irscope.tui.main.heap import COLLECT, YOUNG_ONLY

    app = IrscopeApp(ADD, target="sm_90")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until_shown(app, pilot)
        assert gc.isenabled() and gc.get_threshold() == COLLECT
        app.main.recompile_in_background(defines={"num_warps": 2})
        assert gc.get_threshold() == YOUNG_ONLY and app.main.busy
        await wait_until_shown(app, pilot)
        await pilot.pause()
        assert (
            gc.isenabled() and gc.get_threshold() == COLLECT and app.main.shown.comp.num_warps == 2
        )
