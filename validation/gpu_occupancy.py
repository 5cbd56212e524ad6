"""Check irscope's theoretical occupancy against the CUDA driver's own calculation.

On the GPU machine (plain Triton, no irscope needed), from the repository root:

    python3 validation/gpu_occupancy.py --collect $OUT/h100_occupancy.json

runs every kernel file, and for each kernel the JIT compiled asks the driver
(`cuOccupancyMaxActiveBlocksPerMultiprocessor`) how many blocks fit on one SM, with the kernel's own
dynamic shared memory and with 8000 / 20000 bytes more (to make shared memory the limit). It records
the driver's registers, static shared size and local size per thread, the Triton and torch versions, and
the kernel's cubin (base64), so that irscope's own extraction can be checked against the driver offline.

Here (no GPU):

    python validation/gpu_occupancy.py --compare validation/data/h100_occupancy.json

runs irscope's own path on each recorded cubin — registers, static shared memory (the reserved 1 KB
subtracted on sm_90) — and its occupancy formula, and compares each with the driver's; a row without a
cubin (data from the older collector) fails. tests/functional/test_validation_occupancy_driver.py compares irscope's own compile
on the CPU with the same driver rows.
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
    import base64
    import runpy

    import torch
    import triton
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
                                     "extra": extra, "blocks": blocks.value, "rc": rc, **attrs,
                                     "cubin": base64.b64encode(kernel.asm["cubin"]).decode(),
                                     "triton": triton.__version__, "torch": torch.__version__})
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)
    print(f"{len(rows)} cases written to {out}")


def compare(path: str, arch: str = "sm_90") -> int:
    """irscope's own extraction from each recorded cubin, and its occupancy from that, against the driver."""
    import base64

    sys.path.insert(0, ROOT)
    from irscope.analysis.occupancy import nvidia_occupancy
    from irscope.engine.toolchain import cubin_resources

    with open(path) as f:
        rows = json.load(f)
    capability = int(arch.removeprefix("sm_"))
    bad = 0
    print("| kernel | Triton | registers driver / irscope | static shared driver / irscope | dynamic + extra B | "
          "driver blocks/SM | irscope blocks/SM | limited by |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "cubin" not in r or "static_shared" not in r:
            bad += 1
            print(f"| {r['f']} {r['k']} | - | no cubin or static shared size recorded: re-collect | | | | | |")
            continue
        mine = cubin_resources(base64.b64decode(r["cubin"]), r["shared"], capability)
        static = mine.shared_bytes - r["shared"]
        occ = nvidia_occupancy(arch, mine.registers, r["warps"], mine.shared_bytes + r["extra"])
        ok = (mine.registers, static, occ.blocks_per_sm) == (r["registers"], r["static_shared"], r["blocks"])
        bad += not ok
        print(f"| {r['f']} {r['k']} | {r.get('triton', '?')} | {r['registers']} / {mine.registers} | "
              f"{r['static_shared']} / {static} | {r['shared']} + {r['extra']} | {r['blocks']} | "
              f"{occ.blocks_per_sm}{'' if ok else ' MISMATCH'} | {occ.limited_by} |")
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
