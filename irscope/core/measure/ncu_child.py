"""The process Nsight Compute profiles: it opens the file as irscope does (its launches run for real,
unprofiled), then launches the chosen compilation once more inside the NVTX range `irscope_measure`,
the only range ncu is told to profile.

    python -m irscope.core.measure.ncu_child FILE KERNEL CONFIG INDEX [--no-run] [-D N=V ...] [--arg N:T ...]
"""

from __future__ import annotations

import argparse
import sys

RANGE = "irscope_measure"
INDUCTOR_MODULES = "torch._inductor."  # the modules Inductor writes kernels into, named per run


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("kernel")
    parser.add_argument("config", type=int)
    parser.add_argument("index", type=int)
    parser.add_argument("--no-run", action="store_true")
    parser.add_argument("-D", dest="defines", action="append")
    parser.add_argument("--arg", dest="args", action="append")
    args = parser.parse_args(argv)

    import torch

    from ..session import Overrides, open_file
    from ..triton_compat import local_gpu_target
    from ..triton_compat.measure import relaunch

    ws = open_file(args.file, run_main=not args.no_run, overrides=Overrides.parse(args.defines, args.args),
                   compile_ahead=False, kernel_name=args.kernel)
    kernel = find_kernel(ws, args.kernel)
    comp = ws.compilation_at(kernel, None if args.config < 0 else args.config, args.index)
    launch = relaunch(kernel.jit, comp.launch.args, comp.launch.kwargs, comp.launch.grid)
    if local_gpu_target() is None:  # the virtual GPU (tests): found and ready, and nothing to profile
        print(f"irscope_measure: found {kernel.name} and its arguments; no GPU to launch it on", file=sys.stderr)
        return 0
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(RANGE)
    launch()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"irscope_measure: launched {kernel.name} once", file=sys.stderr)
    return 0


def find_kernel(ws, qualified: str):
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
    found = [k for k in ws.kernels if k.name == name and k.qualified_name.startswith(INDUCTOR_MODULES)]
    if len(found) != 1:
        raise SystemExit(f"irscope_measure: {len(found)} kernels named {name} in Inductor's modules; "
                         f"cannot tell which one the parent measured")
    return found[0]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
