"""Is a TTGIR difference between a real launch and irscope's offline compile Triton's own doing?

For each row of a gpu_fidelity.py table whose TTIR is identical and whose TTGIR differs, compile that TTIR
with plain Triton (triton.compile of the .ttir text, no irscope) in several fresh processes, each with an
empty cache, and collect the TTGIR texts they give. If plain Triton gives both the real launch's TTGIR and
irscope's among its variants, the difference is Triton's nondeterminism, not irscope's; if it always gives
one text, the difference is not explained, and the row says so.

    python validation/triton_ttgir_variants.py FIDELITY.json OFFLINE.json REAL_RECORD.json.xz [--runs 12]

(OFFLINE.json: gpu_fidelity.py's FIDELITY_OFFLINE_SAVE; the record: FIDELITY_REAL_RECORD.) Run with the
paths the record was made with (validation/h200_tutorial09_fidelity.sh): the IR's debug locations hold them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import subprocess
import sys
import tempfile

_COMPILE = """
import json, os, sys, tempfile
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
import triton
from triton.backends.compiler import GPUTarget
path, warps, stages = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
k = triton.compile(path, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages})
print(json.dumps({"ttgir": k.asm["ttgir"], "num_warps": k.metadata.num_warps, "shared": k.metadata.shared}))
"""


def _compile(ttir_path: str, warps: int, stages: int) -> dict:
    done = subprocess.run([sys.executable, "-c", _COMPILE, ttir_path, str(warps), str(stages)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def _config_warps(ttir_path: str, stages: int, meta: dict) -> int:
    """The config's num_warps, which the metadata does not hold (warp-specialized partitions add theirs to
    it): the one whose compile gives the metadata's total warps and shared memory."""
    for warps in (1, 2, 4, 8, 16):
        compiled = _compile(ttir_path, warps, stages)
        if (str(compiled["num_warps"]), str(compiled["shared"])) == (meta["num_warps"], meta["shared"]):
            return warps
    raise RuntimeError(f"no num_warps gives {meta['num_warps']} warps and {meta['shared']} bytes of shared memory")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fidelity")
    parser.add_argument("offline")
    parser.add_argument("record")
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--out", help="the rows as JSON")
    args = parser.parse_args()
    rows = json.load(open(args.fidelity))
    offline = {c["hash"]: c for c in json.load(open(args.offline))["compilations"] if "hash" in c}
    with lzma.open(args.record, "rt", encoding="utf-8") as f:
        real = {k["hash"]: k for k in json.load(f)["kernels"]}
    results = []
    for row in rows:
        if row.get("ttir") != "identical" or row.get("ttgir") != "DIFFERENT":
            continue
        mine = offline[row["raw"]["offline"]["hash"]]
        theirs = real[row["raw"]["real"]["hash"]]
        meta = mine["metadata"]
        with tempfile.NamedTemporaryFile("w", suffix=".ttir", delete=False) as f:
            f.write(mine["stages"]["ttir"])
        stages = int(meta["num_stages"])
        warps = _config_warps(f.name, stages, meta)
        variants: dict[str, int] = {}
        for _ in range(args.runs):
            text = _compile(f.name, warps, stages)["ttgir"]
            variants[_digest(text)] = variants.get(_digest(text), 0) + 1
        os.unlink(f.name)
        real_digest, offline_digest = _digest(theirs["stages"]["ttgir"]), _digest(mine["stages"]["ttgir"])
        explained = real_digest in variants and offline_digest in variants
        results.append({"kernel": row["kernel"], "num_warps": warps, "num_stages": stages,
                        "plain Triton's TTGIR variants (digest: runs)": variants,
                        "real launch's TTGIR": real_digest, "irscope's TTGIR": offline_digest,
                        "explained": explained})
        print(f"{row['kernel']}: {len(variants)} TTGIR variant(s) in {args.runs} plain compiles {variants}; "
              f"real {real_digest} {'among them' if real_digest in variants else 'NOT among them'}, "
              f"irscope {offline_digest} {'among them' if offline_digest in variants else 'NOT among them'}",
              flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    print(f"{sum(r['explained'] for r in results)} of {len(results)} differences are among plain Triton's own variants")
    return 0 if all(r["explained"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
