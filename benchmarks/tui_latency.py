"""How fast the TUI responds, on the biggest example kernel (kernels/attention.py).

Prints three numbers and their targets:
  1. process start -> first paint of the real `python -m irscope FILE` in a pseudo-terminal;
  2. cursor move latency: a key press -> every visible pane repainted with the new links
     (p50 / p95 over 500 moves at 200x50, panes: source | TTGIR | LLIR | PTX; half of the moves in
     the source pane, where every move relinks and scrolls all panes, half in the LLIR pane);
  3. peak RSS of the app's process with every stage loaded and shown (and, beside it, of the worker
     process that runs the file, where torch and Triton live).

The latency counts the key's handling, the linking of every pane, every widget turning its refresh
requests into screen updates, and Textual's compositing of the changed lines. It does not count the
wait for Textual's next 60 fps frame tick (up to 16.7 ms, which a real terminal adds to every app):
the benchmark forces that frame at once. It does count its own waiting (two rounds of Pilot's
"every widget has handled its messages"), about 4 ms, printed separately.

    python benchmarks/tui_latency.py [--kernel kernels/attention.py] [--moves 500]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pty
import re
import resource
import select
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\x1b[=>]")


def first_paint_seconds(path: str, size=(120, 40), timeout: float = 30.0) -> float:
    """Start `python -m irscope FILE` on a pty; time until the screen shows the file's name."""
    leader, follower = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(size[0]), "LINES": str(size[1])}
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "irscope", path], stdin=follower, stdout=follower,
                             stderr=follower, cwd=ROOT, env=env, close_fds=True)
    os.close(follower)
    seen = b""
    name = os.path.basename(path).encode()
    painted = None
    try:
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([leader], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    break
                seen += chunk
                if name in ANSI.sub(b"", seen):
                    painted = time.perf_counter() - start
                    break
        if painted is None:
            raise RuntimeError(f"no paint within {timeout} s; got {ANSI.sub(b'', seen)[-300:]!r}")
        os.write(leader, b"q")
        deadline = time.perf_counter() + 30
        while child.poll() is None and time.perf_counter() < deadline:
            select.select([leader], [], [], 0.05)
            try:
                os.read(leader, 65536)
            except OSError:
                break
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        os.close(leader)
    return painted


async def move_latencies(path: str, moves: int, size=(200, 50)) -> tuple[list[float], list[float], int, dict]:
    from irscope.tui.app import IrscopeApp
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from tui_helpers import wait_until_shown

    app = IrscopeApp(path, target="sm_90")
    forced: list[float] = []
    observed: list[float] = []
    async with app.run_test(size=size) as pilot:
        await wait_until_shown(app, pilot)
        # every stage through a pane once, so all are loaded and rendered; then the benchmark layout
        for stage in app.main.shown.stages:
            app.main.action_set_stage(stage)
            await pilot.pause()
        for number, stage in enumerate(("source", "ttgir", "llir", "ptx")):
            app.main.focus_pane(number)
            app.main.action_set_stage(stage)
        await pilot.pause()
        screen = app.screen
        kernel_line = app.main.shown.comp.kernel.line
        # Half the moves in the source pane over the kernel's body (each move relinks every pane and
        # scrolls them), half in the LLIR pane (the biggest stage; mostly moves inside one block).
        for pane, start in ((0, kernel_line), (2, None)):
            app.main.focus_pane(pane)
            view = app.main.panes[pane].view
            if start is None:
                body = app.main.shown.links.ir_lines("llir", kernel_line + 10)
                start = (body[0] if body else len(view.rows) // 3) + 1
            view.move_cursor_to_index(start - 1, center=True)
            await pilot.pause()
            for n in range(moves // 2):
                key = "down" if (n // 40) % 2 == 0 else "up"
                forced.append(await _timed_key(app, pilot, screen, key))
                if n % 10 == 0:
                    begin = time.perf_counter()
                    await pilot.press(key)
                    await pilot.pause()
                    observed.append((time.perf_counter() - begin) * 1000)
        overhead = []  # what the waiting itself costs with nothing to do: included in the numbers above
        for _ in range(50):
            await asyncio.sleep(0.005)
            begin = time.perf_counter()
            for _ in range(2):
                await pilot._wait_for_screen()
            screen._on_timer_update()
            overhead.append((time.perf_counter() - begin) * 1000)
        counts = {stage: len(text) for stage, text in app.main.shown.texts.items()}
        counts["overhead_ms"] = statistics.median(overhead)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        counts["worker_rss_mb"] = _peak_rss_mb(app.main.session.proc.pid) if hasattr(app.main.session, "proc") else None
    return forced, observed, rss, counts


def _peak_rss_mb(pid: int) -> int | None:
    """A process's peak resident set (VmHWM), in MB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


async def _timed_key(app, pilot, screen, key: str) -> float:
    """Milliseconds from a key event reaching the app to the screen composed with the new links.
    Pilot.press is not used for this: it sleeps in 20 ms steps until the process looks idle."""
    from textual import events

    before = app.main.links_done
    start = time.perf_counter()
    app._driver.send_message(events.Key(key, None))
    while app.main.links_done == before:  # the key was dispatched, the cursor moved, every pane relinked
        await asyncio.sleep(0)
    for _ in range(2):  # widgets turn refresh requests into messages to the screen: two rounds
        await pilot._wait_for_screen()
    screen._on_timer_update()        # compose and paint now instead of at the next frame tick
    return (time.perf_counter() - start) * 1000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", default=os.path.join("kernels", "attention.py"))
    parser.add_argument("--moves", type=int, default=500)
    args = parser.parse_args()
    path = args.kernel

    paints = [first_paint_seconds(path) for _ in range(3)]
    forced, observed, rss, counts = asyncio.run(move_latencies(path, args.moves))
    worker_rss = counts.pop("worker_rss_mb")
    p50, p95 = statistics.median(forced), percentile(forced, 0.95)
    half = len(forced) // 2
    in_source, in_llir = forced[:half], forced[half:]
    overhead = counts.pop("overhead_ms")
    print(f"kernel: {path}   lines: " + "  ".join(f"{s} {n}" for s, n in counts.items()))
    print(f"{'measure':<44}{'value':>12}{'target':>12}  ok")
    rows = [
        ("process start -> first paint (best of 3)", f"{min(paints):.2f} s", "1.00 s", min(paints) <= 1.0),
        ("process start -> first paint (median)", f"{statistics.median(paints):.2f} s", "", None),
        (f"cursor move -> all panes repainted, p50", f"{p50:.1f} ms", "", None),
        (f"cursor move -> all panes repainted, p95", f"{p95:.1f} ms", "16 ms", p95 <= 16),
        ("  moves in the source pane, p50 / p95", f"{statistics.median(in_source):.1f} / "
                                                   f"{percentile(in_source, 0.95):.1f} ms", "", None),
        ("  moves in the LLIR pane, p50 / p95", f"{statistics.median(in_llir):.1f} / "
                                                f"{percentile(in_llir, 0.95):.1f} ms", "", None),
        ("  of which the measuring itself (idle), p50", f"{overhead:.1f} ms", "", None),
        ("same through Pilot.press + pause, p50", f"{statistics.median(observed):.1f} ms", "", None),
        ("peak RSS of the UI process, all stages loaded", f"{rss} MB", "250 MB", rss <= 250),
        ("peak RSS of its worker (torch, Triton, the file)", f"{worker_rss} MB", "", None),
    ]
    for label, value, target, ok in rows:
        print(f"{label:<44}{value:>12}{target:>12}  {'' if ok is None else ('yes' if ok else 'NO')}")
    print(f"cpu cores: {os.cpu_count()}  load average: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
