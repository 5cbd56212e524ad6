"""What does irscope cost on top of Triton's own compiler, for a user who opens a kernel for the first time?

For each example kernel, in fresh processes, side by side:
  cold  plain    = triton.compile(...) of the very specialization the file's launch gets, fresh Triton cache
        capture  = the file run and its launches captured by irscope with nothing compiled, then the launch
                   specialized as Triton's JIT does before it compiles (before plain's clock starts, in the
                   same process; the first specialization imports part of Triton); issue 12 asks that
                   IR ready ≤ capture + plain
        +nvdisasm = the same, then nvdisasm on its cubin: what a user runs to see SASS without irscope
                   (nvdisasm has a fixed start-up of ~0.4 s at sm_90 whatever the kernel)
        irscope  = open the file (run its launch in the interpreter), specialize, compile, every stage ready,
                   with every cache empty, irscope's own too (the memo of Triton's install hash, which plain
                   triton.compile computes inside its timing as well): what a new user meets. "IR" = up to
                   the cubin, against plain; "+SASS" = also disassembled, against plain + nvdisasm. Without a
                   GPU, irscope compiles each launch in a forked child while the file still runs
                   (irscope/engine/compile/ahead.py), so the file's run and the compile overlap.
  warm  reopen   = a whole process that opens the file again on warm caches and has every stage ready (SASS
                   and resources included), minus the time of `python -c "import torch, triton"`, paired run by
                   run so that the machine's drift cancels
        cli      = the same through the real command line, `irscope dump FILE --stage sass`: the front end
                   process, and the worker process that runs the file (irscope/worker), minus the same import
Cold times are medians of --repeat runs; warm ones the median of 2 × --repeat pairs. The script ends with
its verdict on each target, in the words docs/validation.md quotes.
Targets (issues 2, 12 and 18): cold ratio ≤ 1.10 (IR against triton.compile; SASS against triton.compile +
nvdisasm); IR ready ≤ capture + triton.compile (issue 12: the worker and the virtual GPU cost nothing over
capturing and compiling one after the other); warm reopen ≤ 0.3 s over the import, through the command line too.
    python benchmarks/compile_overhead.py [kernels/add.py ...] [--target sm_90] [--repeat 3]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child_plain(path: str, target: str) -> dict:
    """Time only triton.compile, then nvdisasm on its cubin; the specialization comes from irscope before
    the clock starts."""
    sys.path.insert(0, ROOT)
    from irscope.engine.session import open_file
    from irscope.engine.triton_compat import compile_specialized, compiled_asm, specialize

    start = time.perf_counter()
    # nothing in the cache before the clock
    ws = open_file(path, target=target, run_main=True, compile_ahead=False)
    # the file's run and its launches captured, nothing compiled
    capture = time.perf_counter() - start
    launch = ws.launches_of(
        ws.kernel(None) if len({la.kernel.name for la in ws.launches}) == 1 else ws.kernels[0]
    )[0]
    start = time.perf_counter()
    spec = specialize(launch.kernel.jit, launch.args, launch.kwargs, ws.target)
    capture += time.perf_counter() - start  # what Triton's JIT does at a launch before it compiles
    start = time.perf_counter()
    compiled = compile_specialized(launch.kernel.jit, spec, ws.target)
    plain = time.perf_counter() - start
    out = {"plain": plain, "plain_sass": plain, "capture": capture}
    cubin = compiled_asm(compiled).get("cubin")
    if cubin:
        from irscope.engine.toolchain import NVDISASM_FLAGS, _run_on_cubin

        start = time.perf_counter()
        _run_on_cubin("nvdisasm", NVDISASM_FLAGS, cubin)
        out["plain_sass"] = plain + time.perf_counter() - start
    return out


def child_irscope(path: str, target: str) -> dict:
    sys.path.insert(0, ROOT)
    from irscope.engine.session import (
        open_file,  # imports torch and triton: not counted, as for plain
    )

    start = time.perf_counter()
    ws = open_file(path, target=target)
    kernel = ws.kernel(None) if len({la.kernel.name for la in ws.launches}) == 1 else ws.kernels[0]
    comp = ws.compile(kernel)[0]
    for stage in comp.stage_names:
        if stage != "sass":
            comp.stage(stage)
    _ = comp.resources
    ir_ready = time.perf_counter() - start
    out = {"irscope_ir": ir_ready, "irscope_sass": ir_ready, "kernel": kernel.name}
    if "sass" in comp.stage_names:
        comp.stage("sass")
        out["irscope_sass"] = time.perf_counter() - start
    return out


def _run_child(mode: str, path: str, target: str, cache: str, own_cache: str) -> dict:
    env = dict(os.environ, TRITON_CACHE_DIR=cache, IRSCOPE_CACHE_DIR=own_cache, PYTHONPATH=ROOT)
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, path, target],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{mode} {path}: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _wall(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, capture_output=True, check=True, cwd=ROOT)
    return time.perf_counter() - start


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        mode, path, target = sys.argv[2:5]
        print(
            json.dumps(
                child_plain(path, target) if mode == "plain" else child_irscope(path, target)
            )
        )
        return 0
    parser = argparse.ArgumentParser(
        description="irscope's compile overhead over plain triton.compile"
    )
    parser.add_argument("files", nargs="*")
    parser.add_argument("--target", default="sm_90")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="cold runs per kernel (medians); warm pairs: twice this",
    )
    args = parser.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py")))

    print(
        f"target {args.target}; times in seconds; cold = fresh process, every cache empty (irscope's too)"
    )
    print(
        f"{'kernel':<16}{'plain':>7}{'+nvdisasm':>10}{'irscope IR':>11}{'ratio':>6}{'+SASS':>7}{'ratio':>6}"
        f"{'capture':>8}{'IR/(cap+plain)':>15}{'import':>7}{'reopen':>7}{'over':>6}{'cli':>6}{'over':>6}"
    )
    med = statistics.median
    ir_ratios, sass_ratios, overs_all, cli_all, sequential = [], [], [], [], []
    for path in files:
        name = os.path.basename(path)
        plain, plain_sass, ir, sass, captures = [], [], [], [], []
        for _ in range(args.repeat):
            with (
                tempfile.TemporaryDirectory() as a,
                tempfile.TemporaryDirectory() as b,
                tempfile.TemporaryDirectory() as empty_a,
                tempfile.TemporaryDirectory() as empty_b,
            ):
                theirs = _run_child("plain", path, args.target, a, empty_a)
                plain.append(theirs["plain"])
                plain_sass.append(theirs["plain_sass"])
                captures.append(theirs["capture"])
                ours = _run_child("irscope", path, args.target, b, empty_b)
                ir.append(ours["irscope_ir"])
                sass.append(ours["irscope_sass"])
        with tempfile.TemporaryDirectory() as warm, tempfile.TemporaryDirectory() as own:
            env = dict(os.environ, TRITON_CACHE_DIR=warm, IRSCOPE_CACHE_DIR=own, PYTHONPATH=ROOT)
            reopen_cmd = [sys.executable, __file__, "--child", "irscope", path, args.target]
            cli_cmd = [
                sys.executable,
                "-m",
                "irscope",
                "dump",
                path,
                "--stage",
                "sass",
                "--target",
                args.target,
            ]
            # fills the caches
            kernel = json.loads(
                subprocess.run(
                    reopen_cmd, env=env, capture_output=True, text=True, check=True, cwd=ROOT
                )
                .stdout.strip()
                .splitlines()[-1]
            )["kernel"]
            cli_cmd += ["--kernel", kernel]  # the kernel the reopen shows (a file may have several)
            bases, overs, cli_overs = [], [], []
            for _ in range(2 * args.repeat):
                base = _wall([sys.executable, "-c", "import torch, triton"], env)
                bases.append(base)
                overs.append(_wall(reopen_cmd, env) - base)
                cli_overs.append(_wall(cli_cmd, env) - base)
        p, ps = med(plain), med(plain_sass)
        ir_ratios.append(med(ir) / p)
        sass_ratios.append(med(sass) / ps)
        sequential.append(med(ir) / (med(captures) + p))
        overs_all.append(med(overs))
        cli_all.append(med(cli_overs))
        print(
            f"{name:<16}{p:>7.2f}{ps:>10.2f}{med(ir):>11.2f}{ir_ratios[-1]:>6.2f}{med(sass):>7.2f}"
            f"{sass_ratios[-1]:>6.2f}{med(captures):>8.2f}{sequential[-1]:>15.2f}{med(bases):>7.2f}"
            f"{med(bases) + med(overs):>7.2f}{med(overs):>6.2f}"
            f"{med(bases) + med(cli_overs):>6.2f}{med(cli_overs):>6.2f}",
            flush=True,
        )
    print()
    for what, values, limit, unit in (
        ("cold, IR ready against triton.compile", ir_ratios, 1.10, "×"),
        ("cold, SASS ready against triton.compile + nvdisasm", sass_ratios, 1.10, "×"),
        ("cold, IR ready against capture + triton.compile", sequential, 1.0, "×"),
        ("warm reopen over `import torch, triton`", overs_all, 0.3, " s"),
        ("warm reopen through the command line over the import", cli_all, 0.3, " s"),
    ):
        verdict = "met" if max(values) <= limit else "NOT met"
        print(
            f"{what}: {min(values):.2f}–{max(values):.2f}{unit} (target ≤ {limit:g}{unit}): {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
