"""The process Nsight Compute profiles: it opens the file as irscope does (its launches run for real,
unprofiled), then launches the chosen compilation once more inside the NVTX range `irscope_measure`,
the only range ncu is told to profile.

    python -m irscope.engine.measure.ncu_child FILE KERNEL CONFIG INDEX [--spec S] [--also K C I S ...]
                                             [--no-run] [-D N=V ...] [--arg N:T ...]

With `--also`, one run of the file serves several compilations: the file stops once every wanted
specialization has launched, then each is launched in its own range, in the order given, and each launch is
said on stderr (`irscope_measure: launched #N`, N its place in that order) so that the parent can tell
ncu's results apart; one that cannot be found is said (`irscope_measure: not launched #N: why`) and skipped.
A file's run under ncu costs as much as the parent's: run once per compilation, a tutorial with six
compilations took six times as long (06-fused-attention: 390 s on the H100).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys

from irscope.base.errors import IrscopeError
from irscope.engine.capture.budget import CaptureBudget
from irscope.engine.overrides import Overrides
from irscope.engine.session import open_file
from irscope.engine.triton_compat import kernel_source, local_gpu_target, specialize
from irscope.engine.triton_compat.measure import relaunch

RANGE = "irscope_measure"
INDUCTOR_MODULES = "torch._inductor."  # the modules Inductor writes kernels into, named per run
# The capture budget of the profiled run (engine/capture/budget.py). Under ncu the file runs slower than it did for the
# parent (ncu follows every process the file starts and intercepts each CUDA call), and a budget spent on the
# wall clock can stop the child before a launch the parent captured: FlagGems' add, the last launch of
# flag_gems_use_gems.py, was missing from the child of the H100's call 4 while the two launches before it were
# there. ncu_run.py gives the child 600 s in all; the budget stays inside that. IRSCOPE_CAPTURE_QUIET /
# IRSCOPE_CAPTURE_LIMIT, when set, still decide.
CHILD_QUIET_S = 60.0
CHILD_LIMIT_S = 480.0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("kernel")
    parser.add_argument("config", type=int)
    parser.add_argument("index", type=int)
    parser.add_argument("--no-run", action="store_true")
    parser.add_argument("-D", dest="defines", action="append")
    parser.add_argument("--arg", dest="args", action="append")
    parser.add_argument(
        "--spec", help="the compilation's spec_id: stop the file once it is launched"
    )
    parser.add_argument(
        "--also",
        nargs=4,
        action="append",
        default=[],
        metavar=("KERNEL", "CONFIG", "INDEX", "SPEC"),
        help="one more compilation to launch in the same run",
    )
    args = parser.parse_args(argv)
    wanted = [(args.kernel, args.config, args.index, args.spec)] + [
        (k, int(c), int(i), s) for k, c, i, s in args.also
    ]

    import torch

    budget = CaptureBudget(
        args.file,
        quiet_s=None if "IRSCOPE_CAPTURE_QUIET" in os.environ else CHILD_QUIET_S,
        limit_s=None if "IRSCOPE_CAPTURE_LIMIT" in os.environ else CHILD_LIMIT_S,
    )
    specs = [w[3] for w in wanted]
    single = len(wanted) == 1
    # measure_all asks for one kernel's compilations a child
    one_kernel = len({w[0] for w in wanted}) == 1
    ws = open_file(
        args.file,
        run_main=not args.no_run,
        overrides=Overrides.parse(args.defines, args.args),
        compile_ahead=False,
        kernel_name=args.kernel if one_kernel else None,
        budget=budget,
        on_launch=stop_at_all([w[0] for w in wanted], specs, budget) if all(specs) else None,
    )
    run = (
        "; ".join([*ws.notes, *([ws.run_warning] if ws.run_warning else [])]) or "it ran to its end"
    )
    launches = []
    for place, (qualified, config, index, spec) in enumerate(wanted):
        try:  # where the launch is missing, the one line says how the child's run went (the parent shows it)
            launches.append((place, _launch_of(ws, qualified, config, index, spec, run, relaunch)))
        except (IrscopeError, _Missing) as exc:
            if single:
                raise SystemExit(
                    f"irscope_measure: {exc}; this run of the file: {run}"
                    if isinstance(exc, IrscopeError)
                    else f"irscope_measure: {exc}"
                ) from None
            print(f"irscope_measure: not launched #{place}: {exc}", file=sys.stderr)
    # the virtual GPU (tests): found and ready, and nothing to profile
    if local_gpu_target() is None:
        for place, _launch in launches:
            name = wanted[place][0].rpartition(":")[2]
            print(
                f"irscope_measure: found {name} and its arguments; no GPU to launch it on",
                file=sys.stderr,
            )
        return 0
    for place, launch in launches:
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(RANGE)
        launch()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        print(f"irscope_measure: launched #{place}", file=sys.stderr)
    return 0


class _Missing(Exception):
    """A wanted compilation the file's run did not launch."""


def _launch_of(ws, qualified: str, config: int, index: int, spec: str | None, run: str, relaunch):
    """The launch (a callable) of one wanted compilation, found in the child's own run."""
    kernel = find_kernel(ws, qualified, spec)
    config = None if config < 0 else config
    comp = next(
        (
            c
            for c in ws.compile(kernel, config=config)
            if spec and spec_id(c.spec, kernel.jit) == spec
        ),
        None,
    ) or ws.compilation_at(kernel, config, index)
    if comp.launch.origin != "captured" or not comp.launch.grid:
        raise _Missing(f"{kernel.name} was not launched in this run of the file: {run}")
    return relaunch(kernel.jit, comp.launch.args, comp.launch.kwargs, comp.launch.grid)


def spec_id(spec, jit=None) -> str:
    """A compilation as a short name both processes compute alike (it names no object): its specialization
    and, given the kernel's JITFunction, the kernel's source. Two of Inductor's modules can hold kernels of one
    name (triton_square.py's sweep: a static and a dynamic-shape `triton_poi_fused_pow_0`) with the same
    specialization; their source tells them apart."""
    key = spec.cache_key() + kernel_source(jit)  # "" without a kernel
    return hashlib.sha1(key.encode()).hexdigest()[:20]


def stop_at(qualified: str, wanted: str, budget, target=None):
    """A capture hook: once the file launches the wanted specialization, the rest of the file's run adds
    nothing (the child launches it again itself), so the run stops there. A tutorial's benchmark sweep under
    ncu took minutes per compilation before this (02-fused-softmax: five of them)."""
    return stop_at_all([qualified], [wanted], budget, target)


def stop_at_all(qualified: list[str], wanted: list[str], budget, target=None):
    """stop_at for several compilations: the run stops once every wanted specialization has launched."""
    names = {q.rpartition(":")[2] for q in qualified}
    left = set(wanted)
    target = target or local_gpu_target()

    def watch(raw) -> None:
        if target is None or raw.warmup or getattr(raw.jit, "__name__", None) not in names:
            return  # a warmup compiles the binary; the launch that runs it (tutorial 02's by hand) comes after
        try:
            left.discard(spec_id(specialize(raw.jit, raw.args, raw.kwargs, target), raw.jit))
        except Exception:  # noqa: BLE001 - not specializable here (Inductor's launches): run on as before
            return
        if not left:
            budget.stop_now()

    return watch


def find_kernel(ws, qualified: str, spec: str | None = None):
    """The kernel the parent named. Inductor names the module of each kernel it compiles (one of its own,
    or a user's @triton.jit called inside torch.compile) for a hash that differs from run to run: such a
    kernel is found by its name among the kernels of Inductor's modules, never confused with the user's
    module's kernel of the same name."""
    try:
        return ws.kernel(qualified)
    except Exception:  # noqa: BLE001 - not found under that module: the Inductor case below, or the error
        module, _, name = qualified.rpartition(":")
        if not module.startswith(INDUCTOR_MODULES):
            raise
    found = [
        k for k in ws.kernels if k.name == name and k.qualified_name.startswith(INDUCTOR_MODULES)
    ]
    # Inductor compiled it again (a new shape): the one with the parent's code
    if len(found) > 1 and spec:
        found = [
            k for k in found if any(spec_id(c.spec, k.jit) == spec for c in ws.compile(k))
        ] or found
        found = (
            found[:1]
            if all(kernel_source(k.jit) == kernel_source(found[0].jit) for k in found)
            else found
        )
    if len(found) != 1:
        raise _Missing(
            f"{len(found)} kernels named {name} in Inductor's modules; cannot tell which one the "
            f"parent measured"
        )
    return found[0]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
