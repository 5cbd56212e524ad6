"""Shared pieces of the TUI tests: open the app headless on a real kernel and wait until it shows it."""

from __future__ import annotations

import asyncio
import functools
import time

from irscope.tui.app import IrscopeApp


async def wait_until_shown(app: IrscopeApp, pilot, timeout: float = 240.0) -> None:
    """Wait for the worker to open, compile and show the kernel (or to report a failure)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if (
            app.main.shown is not None
            or app.main.failure is not None
            or app.screen is not app.screen_stack[0]
        ) and not app.main.busy:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the app did not show {app.path} within {timeout} s")


def pane_showing(app: IrscopeApp, stage: str):
    for pane in app.main.linked.panes:
        if pane.stage == stage and pane.display:
            return pane
    raise AssertionError(
        f"no visible pane shows {stage}: {[p.stage for p in app.main.linked.panes if p.display]}"
    )


def source_line_of(path: str, needle: str) -> int:
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if needle in line:
                return number
    raise AssertionError(f"{needle!r} not in {path}")


def run_async(test):
    """Run an async test with asyncio.run (no pytest plugin needed)."""

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return wrapper


def open_view(path: str, target: str = "sm_90"):
    """A real worker that opened `path`, and its first compilation, prepared (texts, resources) as the TUI
    gets it. Close the session when done."""
    import os

    from irscope.worker.remote import open_session

    session = open_session(path)
    _, comps = session.request(
        "open",
        path=os.path.abspath(path),
        target=target,
        run_main=True,
        defines=[],
        arg_types=[],
        kernel=None,
        config=None,
    )
    return session, session.request("prepare", key=comps[0].key)
