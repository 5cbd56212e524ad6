"""Opening a file again in the TUI (`r`, or a new file in the same session of irscope): a new worker runs the
file, and the compilation shown has every stage ready. With the warm process (worker/warm.py) the worker is
a fork of a process that loaded torch and Triton once; without it (IRSCOPE_WARM=0) a new Python process
imports them each time. Both are timed in one run, alternating, beside `python -c "import torch, triton"`
on the same machine; the first open of each mode (which starts the warm process) is left out.

    python benchmarks/reopen.py [kernels/add.py kernels/attention.py] [--repeat 10] [--target sm_90]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from irscope.worker import remote  # noqa: E402


def reopen(path: str, target: str) -> float:
    """One open as the TUI's `r` does it: a new session, the file run, the first compilation prepared."""
    start = time.perf_counter()
    session = remote.open_session(path)
    try:
        _ws, comps = session.request(
            "open",
            None,
            path=path,
            target=target,
            run_main=True,
            defines=[],
            arg_types=[],
            kernel=None,
            config=None,
            file_args=[],
        )
        view = session.request("prepare", None, key=comps[0].key)
        assert view.texts.get("ptx"), "no PTX came back"
        return time.perf_counter() - start
    finally:
        session.close()


def import_time() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch, triton"], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", default=["kernels/add.py", "kernels/attention.py"])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--target", default="sm_90")
    args = parser.parse_args()
    print(
        f"{'file':<24}{'import':>8}{'fresh p50':>11}{'p95':>7}{'warm p50':>10}{'p95':>7}{'ratio':>7}"
    )
    for name in args.files:
        path = os.path.join(ROOT, name)
        times: dict[str, list[float]] = {"0": [], "1": [], "import": []}
        for mode in ("0", "1"):  # each mode's first open: caches filled, the warm process started
            os.environ["IRSCOPE_WARM"] = mode
            reopen(path, args.target)
        for _ in range(args.repeat):
            for mode in ("0", "1"):
                os.environ["IRSCOPE_WARM"] = mode
                times[mode].append(reopen(path, args.target))
            times["import"].append(import_time())

        def p95(values: list[float]) -> float:
            return sorted(values)[max(0, round(0.95 * len(values)) - 1)]

        fresh, warm = times["0"], times["1"]
        print(
            f"{name:<24}{statistics.median(times['import']):>7.2f}s"
            f"{statistics.median(fresh):>10.2f}s{p95(fresh):>6.2f}s"
            f"{statistics.median(warm):>9.2f}s{p95(warm):>6.2f}s"
            f"{statistics.median(fresh) / statistics.median(warm):>6.1f}x"
        )


if __name__ == "__main__":
    main()
