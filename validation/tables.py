"""Rebuild two of docs/validation.md's tables from the raw data committed in the repository, with no GPU.

    python validation/tables.py fidelity validation/data/h100_kernels_fidelity.json
    python validation/tables.py sectors docs/ncu_raw.csv

`fidelity`: the table `validation/gpu_fidelity.py` wrote on the GPU, from its JSON rows; the parts that can be
re-derived from the raw numbers are, not copied: the cubin column from the two cubins' SHA-256, the registers
and spills columns from irscope's and the driver's counts, and the result from all of them. A row whose data
says a stage differs, or whose counts differ, cannot come out as PASS. Exits 1 unless every row is PASS.

`sectors`: Nsight Compute's sectors per request for the Triton kernels of each example (those the file
defines, and Inductor's generated `triton_*` kernels), from the CSV `validation/ncu_sectors.py` wrote.

The occupancy and coalescing tables are printed by their own scripts (`gpu_occupancy.py --compare`,
`ncu_coalescing.py --measured`), which re-run irscope's side; tests/functional/test_validation_tables.py checks all four.
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGES = ("ttir", "ttgir", "llir", "ptx", "sass", "sass (cuobjdump)")
FIDELITY_COLUMNS = ("file", "kernel", *STAGES, "cubin", "registers", "spills", "irscope on GPU", "compiled by",
                    "result", "note")


def _rederived(row: dict) -> dict:
    """The row with what its raw numbers decide computed again; a row with no comparison is kept as it is."""
    raw = row.get("raw") or {}
    mine, real = raw.get("offline"), raw.get("real")
    if not (mine and real):
        return dict(row)
    loaded = real.get("load_error") is None
    out = dict(row)
    out["cubin"] = "identical" if mine["cubin_sha256"] == real["cubin_sha256"] else "DIFFERENT"
    out["registers"] = f"{mine['registers']} / {real['n_regs'] if loaded else 'not loaded'}"
    out["spills"] = f"{mine['spills']} / {real['n_spills'] if loaded else 'not loaded'}"
    same = all(row.get(c) == "identical" for c in (*STAGES, "irscope on GPU")) and out["cubin"] == "identical"
    if not loaded:
        out["result"] = "identical, not loadable" if same else "FAIL"
    else:
        equal = (mine["registers"], mine["spills"]) == (real["n_regs"], real["n_spills"])
        out["result"] = "PASS" if same and equal and mine["hash"] == real["hash"] else "FAIL"
    return out


def fidelity_table(path: str) -> tuple[list[str], bool]:
    with open(path) as f:
        rows = [_rederived(row) for row in json.load(f)]
    lines = ["| " + " | ".join(FIDELITY_COLUMNS) + " |", "|" + "---|" * len(FIDELITY_COLUMNS)]
    for row in rows:
        cells = (str(row.get(c, "")).replace("|", "\\|").replace("\n", " ") for c in FIDELITY_COLUMNS)
        lines.append("| " + " | ".join(cells) + " |")
    return lines, all(row.get("result") == "PASS" for row in rows)


def _triton_kernels(rel: str) -> set[str]:
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return set(re.findall(r"^def (\w+)\(", f.read(), re.MULTILINE))


def sectors_table(path: str) -> list[str]:
    lines = ["| file | kernel | launch | ld sectors/request | st sectors/request | registers |",
             "|---|---|---|---|---|---|"]
    defined: dict[str, set[str]] = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            names = defined.setdefault(row["file"], _triton_kernels(row["file"]))
            if row["kernel"] not in names and not re.fullmatch(r"triton_\w+", row["kernel"]):
                continue

            def per_request(kind: str) -> str:
                requests = float(row[f"{kind}_requests"])
                return f"{float(row[f'{kind}_sectors']) / requests:.2f}" if requests else "-"
            lines.append(f"| {row['file']} | {row['kernel']} | {row['launch']} | {per_request('ld')} | "
                         f"{per_request('st')} | {row['registers']} |")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("fidelity", "sectors") or not os.path.isfile(argv[1]):
        print("usage: python validation/tables.py fidelity|sectors RAW_DATA_FILE", file=sys.stderr)
        return 2
    if argv[0] == "sectors":
        print("\n".join(sectors_table(argv[1])))
        return 0
    lines, all_pass = fidelity_table(argv[1])
    print("\n".join(lines))
    return 0 if all_pass else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
