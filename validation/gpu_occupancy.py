"""Check irscope's theoretical occupancy against the CUDA driver's own calculation.

On the GPU machine (plain Triton, no irscope needed), from the repository root:

    python3 validation/gpu_occupancy.py --collect $OUT/h100_occupancy.json

runs every kernel file, and for each kernel the JIT compiled asks the driver
(`cuOccupancyMaxActiveBlocksPerMultiprocessor`) how many blocks fit on one SM, with the kernel's own
dynamic shared memory and with 8000 / 20000 bytes more (to make shared memory the limit). It records
the driver's registers, static shared size and local size per thread too.

Here (no GPU):

    python validation/gpu_occupancy.py --compare validation/data/h100_occupancy.json

prints irscope's prediction from the same registers, warps and shared memory next to the driver's.
tests/test_occupancy.py checks the stored H100 data the same way.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXTRA_SHARED = (0, 8000, 20000)
_ATTR = {"static_shared": 1, "local_bytes": 3, "registers": 4}


def collect(out: str) -> None:
    import runpy

    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    cu = ctypes.CDLL("libcuda.so.1")
    rows = []
    for path in sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py"))):
        namespace = runpy.run_path(path, run_name="__main__")
        for value in list(namespace.values()):
            while isinstance(value, (Autotuner, Heuristics)):
                value = value.fn
            if not isinstance(value, JITFunction):
                continue
            for device_cache in value.device_caches.values():
                for kernel in device_cache[0].values():
                    kernel._init_handles()
                    function = ctypes.c_void_p(kernel.function)
                    attrs = {}
                    for name, number in _ATTR.items():
                        got = ctypes.c_int()
                        cu.cuFuncGetAttribute(ctypes.byref(got), number, function)
                        attrs[name] = got.value
                    warps = kernel.metadata.num_warps
                    for extra in EXTRA_SHARED:
                        blocks = ctypes.c_int()
                        rc = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                            ctypes.byref(blocks), function, warps * 32, ctypes.c_size_t(kernel.metadata.shared + extra))
                        rows.append({"f": os.path.relpath(path, ROOT), "k": value.fn.__name__, "regs": kernel.n_regs,
                                     "spills": kernel.n_spills, "warps": warps, "shared": kernel.metadata.shared,
                                     "extra": extra, "blocks": blocks.value, "rc": rc, **attrs})
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)
    print(f"{len(rows)} cases written to {out}")


def compare(path: str, arch: str = "sm_90") -> int:
    sys.path.insert(0, ROOT)
    from irscope.core.analysis.occupancy import nvidia_occupancy

    with open(path) as f:
        rows = json.load(f)
    bad = 0
    print("| kernel | registers | warps | shared B | driver blocks/SM | irscope blocks/SM | limited by |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        shared = r["shared"] + r["extra"] + r.get("static_shared", 0)
        mine = nvidia_occupancy(arch, r["regs"], r["warps"], shared)
        ok = mine.blocks_per_sm == r["blocks"]
        bad += not ok
        print(f"| {r['f']} {r['k']} | {r['regs']} | {r['warps']} | {shared} | {r['blocks']} | "
              f"{mine.blocks_per_sm}{'' if ok else ' MISMATCH'} | {mine.limited_by} |")
    print(f"\n{len(rows) - bad} of {len(rows)} agree")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--collect", metavar="OUT.json")
    parser.add_argument("--compare", metavar="DATA.json")
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args()
    if args.collect:
        collect(args.collect)
        return 0
    if args.compare:
        return compare(args.compare, args.arch)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
