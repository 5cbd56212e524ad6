"""Does ptxas give one SASS for one PTX? For a compilation irscope shows of FILE, its PTX is assembled again by the
ptxas Triton uses for its target, RUNS times under one file name and RUNS times under fresh temporary names (as
Triton's `make_cubin` names it), with Triton's options (`-lineinfo -v --gpu-name=...`); each cubin is
disassembled with cuobjdump (`sass_listing.cuobjdump_instructions`) and its instructions hashed. More than one hash means ptxas itself gives either text, and no
tool can promise one run's SASS (Gluon tutorial 06 of Triton 3.6, for sm_100a: issue 33).

    python validation/ptxas_sass_variants.py FILE [--compilation N] [--runs R]
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from validation.sass_listing import cuobjdump_instructions  # noqa: E402


def sass_hash(ptxas: str, cuobjdump: str, ptx_path: str, arch: str) -> str:
    """The hash of the SASS that ptxas makes of the PTX at `ptx_path`, as `cuobjdump -sass` lists it."""
    cubin = ptx_path + ".o"
    subprocess.run(
        [ptxas, "-lineinfo", "-v", f"--gpu-name={arch}", ptx_path, "-o", cubin],
        check=True,
        capture_output=True,
    )
    with open(cubin, "rb") as f:
        listing = cuobjdump_instructions(f.read(), cuobjdump)
    return hashlib.sha1(repr(sorted(listing.items())).encode()).hexdigest()[:12]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--compilation", type=int, default=0)
    parser.add_argument("--runs", type=int, default=8)
    args = parser.parse_args()
    import triton
    import triton.backends.nvidia.compiler as nvidia

    from irscope.engine.session import open_file

    comp = open_file(args.file, compile_ahead=False).compile_all()[args.compilation]
    capability = int(str(comp.target).removeprefix("sm_"))
    ptxas = nvidia.get_ptxas(capability).path
    cuobjdump = shutil.which("cuobjdump") or os.path.join(os.path.dirname(ptxas), "cuobjdump")
    arch = nvidia.sm_arch_from_capability(capability)
    print(
        f"{args.file}, compilation {args.compilation} ({comp.kernel.name}, {comp.target}), Triton "
        f"{triton.__version__}, {ptxas}"
    )
    hashes = collections.Counter()
    with tempfile.TemporaryDirectory(prefix="ptxas-variants-") as scratch:
        fixed = os.path.join(scratch, "kernel.ptx")
        with open(fixed, "w") as f:
            f.write(comp.asm["ptx"])
        shown = sass_hash(ptxas, cuobjdump, fixed, arch)
        hashes[shown] += 1
        for where in ("one file name", "fresh names"):
            row = []
            for _ in range(args.runs):
                path = fixed
                if where == "fresh names":
                    with tempfile.NamedTemporaryFile("w", suffix=".ptx", dir=scratch, delete=False) as f:
                        f.write(comp.asm["ptx"])
                    path = f.name
                row.append(sass_hash(ptxas, cuobjdump, path, arch))
            hashes.update(row)
            print(f"{where}: {' '.join(row)}")
    print(f"{len(hashes)} SASS text(s) from one PTX in {sum(hashes.values())} runs: {dict(hashes)}")
    print(f"the first run's: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
