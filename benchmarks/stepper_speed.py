"""How fast is the interpreter stepper?

  record  = record_program(launch, pid) with every line's locals (what the stepper needs), median of runs
  access  = record_program(..., with_locals=False): loads and stores only (what coalescing runs per program)
  step    = one move through the recording plus the text of every local at the new step (what a screen
            redraw needs), worst over every step of the recording
  tui     = the stepper screen (Textual, headless, 150x48): a key press `s` until the screen has handled it
            and repainted, over every step of the recording: CPU time of the process (what the screen
            costs; robust on a shared machine) and wall time (includes Pilot's idle waits and, on a busy
            machine, waiting for a core); "key" is the same for a key with no binding: Pilot's own cost
Targets (issue 7): add (BLOCK=1024) record ≤ 0.5 s; a step ≤ 50 ms; one matmul program ≤ 3 s.
    python benchmarks/stepper_speed.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

CASES = [
    ("kernels/add.py", (1,), 0.5),
    ("kernels/softmax.py", (3,), None),
    ("kernels/helper.py", (2,), None),
    ("kernels/matmul.py", (1, 1), 3.0),
]


def timed(fn, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from irscope.analysis.recording.stepper import Stepper
    from irscope.analysis.recording.text import values_text
    from irscope.engine.recording import record_program
    from irscope.engine.session import open_file

    print(
        f"{'kernel':<20} {'program':<8} {'steps':>6} {'record s':>9} {'access s':>9} {'step ms':>8}  target"
    )
    ok = True
    for path, pid, target in CASES:
        ws = open_file(os.path.join(ROOT, path))
        launch = ws.launches_of(ws.kernel(None))[0]
        record_program(launch, pid)  # first run rewrites the kernel's source for the interpreter
        record_s, rec = timed(lambda: record_program(launch, pid), args.runs)
        access_s, _ = timed(lambda: record_program(launch, pid, with_locals=False), args.runs)
        stepper = Stepper(rec)
        worst = 0.0
        while not stepper.at_end:
            start = time.perf_counter()
            step = stepper.step_into()
            for value in step.locals.values():
                value.summary()
                values_text(value)
            worst = max(worst, time.perf_counter() - start)
        verdict = ""
        if target is not None:
            good = record_s <= target and worst <= 0.05
            ok &= good
            verdict = f"record ≤ {target} s, step ≤ 50 ms: {'met' if good else 'MISSED'}"
        print(
            f"{os.path.basename(path):<20} {','.join(map(str, pid)):<8} {len(rec.steps):>6} {record_s:>9.3f} "
            f"{access_s:>9.3f} {worst * 1e3:>8.2f}  {verdict}"
        )
    print()
    print(
        f"{'kernel':<20} {'tui cpu median':>15} {'cpu worst':>10} {'wall median':>12} {'key cpu':>8} "
        f"{'key wall':>9}  ms"
    )
    for path, pid, _ in CASES:
        ws = open_file(os.path.join(ROOT, path))
        comp = ws.compile_all()[0]
        cpu, wall, key, key_wall = tui_step_times(ws, comp, pid)
        good = statistics.median(cpu) <= 0.05
        ok &= good
        print(
            f"{os.path.basename(path):<20} {statistics.median(cpu) * 1e3:>15.1f} {max(cpu) * 1e3:>10.1f} "
            f"{statistics.median(wall) * 1e3:>12.1f} {statistics.median(key) * 1e3:>8.1f} "
            f"{statistics.median(key_wall) * 1e3:>9.1f}  "
            f"step ≤ 50 ms (cpu median): {'met' if good else 'MISSED'}"
        )
    return 0 if ok else 1


def tui_step_times(ws, comp, pid) -> tuple[list[float], list[float], list[float], list[float]]:
    import asyncio

    from textual.app import App

    from irscope.tui.stepper import StepperScreen

    class Harness(App):
        def on_mount(self) -> None:
            self.push_screen(StepperScreen(ws, comp, pid))

    cpu: list[float] = []
    wall: list[float] = []
    key: list[float] = []
    key_wall: list[float] = []

    async def scenario() -> None:
        app = Harness()
        async with app.run_test(size=(150, 48)) as pilot:
            screen = app.screen
            while screen.stepper is None and screen.failure is None:
                await pilot.pause(0.02)
            await pilot.pause()
            for _ in range(10):
                start, start_wall = time.process_time(), time.perf_counter()
                await pilot.press("x")
                key.append(time.process_time() - start)
                key_wall.append(time.perf_counter() - start_wall)
            for _ in range(3):
                screen.action_restart()
                await pilot.pause()
                while not screen.stepper.at_end:
                    start, start_wall = time.process_time(), time.perf_counter()
                    await pilot.press("s")
                    cpu.append(time.process_time() - start)
                    wall.append(time.perf_counter() - start_wall)

    asyncio.run(scenario())
    return cpu, wall, key, key_wall


if __name__ == "__main__":
    sys.exit(main())
