"""irscope's launch statistics (waves, the partial wave, small grids) against Nsight Compute's, launch by launch.

On the GPU machine, from the repository root (ncu needed, irscope not):

    python3 validation/ncu_launch_stats.py measure --out $OUT/launch_stats FILE...

profiles every launch of each file with ncu's Launch Statistics and Occupancy sections (and the DRAM bytes and
duration of each launch, kept for the traffic model) and keeps, per file, the raw page
(`NAME.raw.csv.gz`: grid, registers, waves per SM, block limits) and the details page with the rules'
messages (`NAME.details.txt.gz`).

Here (no GPU), irscope's own path, as a user runs it, on the same files:

    python validation/ncu_launch_stats.py predict --out DIR FILE...

writes `irscope report --json` of each file (`NAME.report.json.gz`; the capture's quiet time raised, so that
every grid of a sweep is captured), and

    python validation/ncu_launch_stats.py compare DIR

matches each launch ncu profiled to irscope's compilation of the same kernel, grid, registers and block size,
works irscope's launch statistics out again from the report's registers, shared memory and warps with the
current model (so a change to the model is checked against ncu too), and prints one row per launch: blocks
per SM, waves (ncu prints two decimals), the tail-effect rule (ncu's "N full waves and a partial wave of M
thread blocks" against irscope's `tail-effect` finding) and the small-grid rule, both directions. It exits 1
unless every matched row agrees. tests/functional/test_validation_launch_stats.py rebuilds the table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from irscope.analysis.launch_stats import TAIL_SHARE_SHOWN, LaunchStats  # noqa: E402
from irscope.analysis.measured.ncu_parse import number, parse_raw_page  # noqa: E402
from irscope.analysis.occupancy import NVIDIA_LIMITS, nvidia_occupancy  # noqa: E402

METRICS = "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum"
# The floating-point work Nsight Compute's roofline counts (instructions executed by active threads, per type;
# tensor-core math ops by source and destination type), asked for with --flops where this ncu knows them.
FLOP_METRICS = [
    f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum"
    for op in ("fadd", "fmul", "ffma", "hadd", "hmul", "hfma", "dadd", "dmul", "dfma")
] + [
    f"sm__ops_path_tensor_src_{src}.sum"
    for src in (
        "fp16_dst_fp32",
        "fp16_dst_fp16",
        "bf16_dst_fp32",
        "tf32_dst_fp32",
        "fp8_dst_fp32",
        "fp64",
    )
]


def held_registers(in_cubin: int) -> int:
    """What ncu's `launch__registers_per_thread` reads for a kernel whose cubin says `in_cubin`: at least
    measured mode's MIN_ALLOCATED_REGISTERS (a TMA tile copy's 10 read 16 too). Imported here: `measure`
    runs on the GPU machine without irscope."""
    from irscope.findings.agreement import MIN_ALLOCATED_REGISTERS

    return max(MIN_ALLOCATED_REGISTERS, in_cubin)


def known_metrics(names: list[str]) -> list[str]:
    """The names this ncu can collect (`ncu --query-metrics` lists their base names): an unknown one would fail
    the whole run. Every tensor-path counter it lists (`sm__ops_path_tensor_src_*`, sparsity variants left out,
    which count the same ops again) is added: their names change between chips and releases."""
    listed = subprocess.run(["ncu", "--query-metrics"], capture_output=True, text=True).stdout
    bases = {line.split()[0] for line in listed.splitlines() if line.strip()}
    tensor = sorted(
        f"{base}.sum"
        for base in bases
        if base.startswith("sm__ops_path_tensor_src_") and "sparsity" not in base
    )
    return list(dict.fromkeys([name for name in names if name.rsplit(".", 1)[0] in bases] + tensor))


LIMITS = ("blocks", "registers", "shared_mem", "warps", "barriers")
HEADER = re.compile(r"^  (\S.*?) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\), Context \d+")
TAIL = re.compile(r"results in (\d+) full waves and a partial wave of (\d+) thread blocks")
SMALL = re.compile(r"configured to execute only (\d+) blocks?, which is less than the GPU's (\d+)")
OCCUPANCY = re.compile(r"theoretical occupancy \(([\d.]+)%\) is limited by (.*?)\.(?:\s|$)")
# ncu's words for what limits occupancy, and irscope's names for the same limits
LIMITERS = {
    "registers": "registers",
    "shared memory": "shared_memory",
    "blocks that can fit": "blocks",
    "warps": "warps",
}


def _name(path: str) -> str:
    return os.path.splitext(os.path.relpath(os.path.abspath(path), ROOT))[0].replace(os.sep, "__")


def measure(files: list[str], out: str, launch_count: int, flops: bool = False) -> None:
    os.makedirs(out, exist_ok=True)
    metrics = METRICS
    if flops:
        metrics = ",".join([METRICS, *known_metrics(FLOP_METRICS)])
    for path in files:
        name = _name(path)
        report = os.path.join(out, name)
        cmd = [
            "ncu",
            "--section",
            "LaunchStats",
            "--section",
            "Occupancy",
            "--metrics",
            metrics,
            "--launch-count",
            str(launch_count),
            "-f",
            "-o",
            report,
            sys.executable,
            path,
        ]
        with tempfile.TemporaryDirectory(prefix="ncu-inductor-") as cache:
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
        with open(report + ".log", "w") as f:
            f.write(done.stdout[-20000:] + "\n--- stderr\n" + done.stderr[-20000:])
        for page, suffix, extra in (("raw", "raw.csv", ["--csv"]), ("details", "details.txt", [])):
            text = subprocess.run(
                ["ncu", "-i", report + ".ncu-rep", "--page", page, *extra],
                capture_output=True,
                text=True,
            ).stdout
            with gzip.open(f"{report}.{suffix}.gz", "wt") as f:
                f.write(text)
        if os.path.exists(report + ".ncu-rep"):
            os.remove(report + ".ncu-rep")
        print(f"{name}: rc {done.returncode}", flush=True)


def predict(files: list[str], out: str, on_gpu: bool = False) -> None:
    """irscope's report of each file: offline, for the virtual sm_90 (an H100); or, with on_gpu, on this
    machine's GPU, which the report then describes (its SMs, L2 and bandwidth as the driver gives them)."""
    os.makedirs(out, exist_ok=True)
    env = dict(
        os.environ,
        IRSCOPE_CAPTURE_QUIET="120",
        IRSCOPE_CAPTURE_LIMIT="600",
        PYTHONPATH=ROOT,
    )
    if not on_gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    for path in files:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "irscope",
                "report",
                os.path.abspath(path),
                "--json",
                *([] if on_gpu else ["--target", "sm_90"]),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
        )
        with gzip.open(os.path.join(out, _name(path) + ".report.json.gz"), "wt") as f:
            f.write(done.stdout)
        print(f"{_name(path)}: rc {done.returncode} {done.stderr.strip()[-300:]}", flush=True)


def rule_messages(details: str) -> list[tuple[str, tuple[int, ...], str]]:
    """(kernel, grid, every rule message joined) per launch of a details page, in profile order."""
    launches: list[tuple[str, tuple[int, ...], list[str]]] = []
    for line in details.splitlines():
        header = HEADER.match(line)
        if header:
            launches.append((header.group(1), tuple(int(g) for g in header.groups()[1:4]), []))
        elif launches:
            launches[-1][2].append(line.strip())
    return [(kernel, grid, " ".join(" ".join(lines).split())) for kernel, grid, lines in launches]


def _compilations(report: dict) -> list[dict]:
    return [
        k for k in report.get("kernels", []) if k.get("compiled") and k.get("registers") is not None
    ]


def irscope_stats(entry: dict, blocks: int) -> LaunchStats:
    """irscope's statistics for one launch, worked out again with the current model from the report's
    registers, shared memory and warps."""
    occ = nvidia_occupancy(
        "sm_90", entry["registers"], entry["block_warps"], entry["shared_bytes"] or 0
    )
    return LaunchStats((blocks, 1, 1), occ.blocks_per_sm, NVIDIA_LIMITS["sm_90"].chip, "SM")


def ncu_partial(blocks: int, waves: float) -> int:
    """Nsight Compute's own count of the partial wave's blocks: grid x (fraction / waves), rounded up, in
    floating point (its LaunchStatistics rule)."""
    fraction, _ = math.modf(waves)
    return math.ceil(blocks * (fraction / waves))


def occupancy_rule(message: str) -> tuple[float, set[str]] | None:
    """ncu's theoretical-occupancy rule (it fires under 100%): the occupancy and what it names as the limits."""
    found = OCCUPANCY.search(message)
    if found is None:
        return None
    limits = {name for words, name in LIMITERS.items() if words in found.group(2)}
    return float(found.group(1)), limits


def compare(data: str) -> tuple[list[str], bool]:
    rows = [
        "| file | kernel | grid | regs | blocks/SM ncu | irscope | waves ncu | irscope | tail rule ncu | "
        "irscope | small-grid rule ncu | irscope | occupancy rule ncu | irscope | agree |",
        "|" + "---|" * 15,
    ]
    unmatched: list[str] = []
    ok = True
    # per rule: launches ncu's rule fired for, irscope's, and both
    fired = {
        rule: {"ncu": 0, "irscope": 0, "both": 0}
        for rule in ("tail-effect", "small-grid", "low-occupancy")
    }
    limits_named = [0, 0]  # launches both fired for, and those where ncu names irscope's limit too
    # ncu's occupancy rule under 50% naming registers or shared memory (irscope's threshold), and irscope's too
    under_half = [0, 0]
    for raw_file in sorted(f for f in os.listdir(data) if f.endswith(".raw.csv.gz")):
        name = raw_file[: -len(".raw.csv.gz")]
        with gzip.open(os.path.join(data, raw_file), "rt") as f:
            measured = parse_raw_page(f.read())
        with gzip.open(os.path.join(data, name + ".details.txt.gz"), "rt") as f:
            rules = rule_messages(f.read())
        try:
            with gzip.open(os.path.join(data, name + ".report.json.gz"), "rt") as f:
                comps = _compilations(json.loads(f.read() or "{}"))
        except FileNotFoundError:
            comps = []
        for index, row in enumerate(measured):
            kernel = row.get("Kernel Name", "")
            blocks = int(number(row["launch__grid_size"]) or 0)
            regs = int(number(row["launch__registers_per_thread"]) or 0)
            threads = int(number(row["launch__block_size"]) or 0)
            match = [
                c
                for c in comps
                if c["name"] == kernel
                and held_registers(c["registers"]) == regs
                and c["block_warps"] * 32 == threads
                and any(s["blocks"] == blocks for s in c.get("launch_stats") or [])
            ]
            if not match:
                if any(c["name"] == kernel for c in comps):
                    unmatched.append(f"{name} {kernel} grid {blocks} regs {regs}")
                continue  # a library's or torch's own kernel, not a Triton launch of the file
            stats = irscope_stats(match[0], blocks)
            per_sm = int(min(number(row[f"launch__occupancy_limit_{k}"]) or 0 for k in LIMITS))
            waves = number(row["launch__waves_per_multiprocessor"]) or 0.0
            message = rules[index][2] if index < len(rules) and rules[index][0] == kernel else ""
            tail = TAIL.search(message)
            small = SMALL.search(message)
            ncu_tail = f"{tail.group(1)} full + {tail.group(2)}" if tail else "-"
            ours_tail = (
                f"{stats.full_waves} full + {stats.partial_blocks} (ncu's rounding: "
                f"{ncu_partial(blocks, stats.waves)})"
                if stats.tail_share >= TAIL_SHARE_SHOWN
                else "-"
            )
            tail_agrees = (tail is None) == (stats.tail_share < TAIL_SHARE_SHOWN) and (
                tail is None
                or (
                    int(tail.group(1)) == stats.full_waves
                    and int(tail.group(2)) == ncu_partial(blocks, stats.waves)
                )
            )
            # ncu's small-grid rule is fewer blocks than SMs; irscope's `small-grid` is under one wave, which
            # holds for every grid ncu's holds for: agreement is ncu's => irscope's, and irscope's alone only
            # between the SM count and a wave
            small_agrees = (small is None or stats.small) and (
                small is not None or not stats.small or blocks >= stats.chip.units
            )
            # ncu's occupancy rule fires under 100% theoretical occupancy; irscope's `low-occupancy` under 50%
            # and only for a limit the user changes (registers, shared memory): irscope's => ncu's, same limit
            occ_rule = occupancy_rule(message)
            ours_low = any(f.get("rule") == "low-occupancy" for f in match[0].get("findings") or [])
            ours_limit = (match[0].get("occupancy") or {}).get("limited_by")
            occ_agrees = not ours_low or (occ_rule is not None and ours_limit in occ_rule[1])
            if (
                occ_rule is not None
                and occ_rule[0] < 50
                and occ_rule[1] & {"registers", "shared_memory"}
            ):
                under_half[0] += 1
                under_half[1] += ours_low
            if ours_low and occ_rule is not None:
                limits_named[0] += 1
                limits_named[1] += ours_limit in occ_rule[1]
            agrees = (
                per_sm == stats.blocks_per_sm
                and f"{waves:.2f}" == f"{stats.waves:.2f}"
                and tail_agrees
                and small_agrees
                and occ_agrees
            )
            ok = ok and agrees
            for rule, theirs, ours in (
                ("tail-effect", tail is not None, stats.tail_share >= TAIL_SHARE_SHOWN),
                ("small-grid", small is not None, stats.small),
                ("low-occupancy", occ_rule is not None, ours_low),
            ):
                fired[rule]["ncu"] += theirs
                fired[rule]["irscope"] += ours
                fired[rule]["both"] += theirs and ours
            rows.append(
                f"| {name.replace('__', '/')} | {kernel} | {blocks} | {regs} | {per_sm} | {stats.blocks_per_sm} | "
                f"{waves:.2f} | {stats.waves:.2f} | {ncu_tail} | {ours_tail} | {'yes' if small else '-'} | "
                f"{'yes' if stats.small else '-'} | "
                f"{'-' if occ_rule is None else f'{occ_rule[0]:g}% ' + '+'.join(sorted(occ_rule[1]))} | "
                f"{f'yes ({ours_limit})' if ours_low else '-'} | {'yes' if agrees else 'NO'} |"
            )
    rows.append("")
    rows.append(
        "Per rule, over the matched launches (recall: of ncu's, irscope's too; precision: of irscope's, ncu's too):"
    )
    for rule, n in fired.items():
        rows.append(
            f"- {rule}: ncu {n['ncu']}, irscope {n['irscope']}, both {n['both']}; recall {n['both']}/{n['ncu']}, "
            f"precision {n['both']}/{n['irscope']}"
        )
    rows.append(
        f"- low-occupancy, where both fired, ncu's message names irscope's limit: {limits_named[1]} of "
        f"{limits_named[0]} (ncu's rule fires under 100% theoretical occupancy, irscope's `low-occupancy` under 50% "
        f"and for registers or shared memory, the limits a kernel's author changes: its recall is low by design); "
        f"where ncu's rule says under 50% and names registers or shared memory, irscope's fired for "
        f"{under_half[1]} of {under_half[0]}"
    )
    if unmatched:
        rows.append("")
        rows.append(
            f"Launches of a kernel irscope showed, at a grid or registers it did not show ({len(unmatched)}):"
        )
        rows.extend(f"- {u}: {unmatched.count(u)} launch(es)" for u in dict.fromkeys(unmatched))
    return rows, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    m = sub.add_parser("measure")
    m.add_argument("files", nargs="+")
    m.add_argument("--out", required=True)
    m.add_argument("--launch-count", type=int, default=200)
    m.add_argument(
        "--flops", action="store_true", help="also the FP instruction and tensor-op counts"
    )
    p = sub.add_parser("predict")
    p.add_argument("files", nargs="+")
    p.add_argument("--out", required=True)
    p.add_argument(
        "--on-gpu", action="store_true", help="report on this machine's GPU, not the virtual sm_90"
    )
    c = sub.add_parser("compare")
    c.add_argument("data")
    args = parser.parse_args()
    if args.mode == "measure":
        measure(args.files, args.out, args.launch_count, args.flops)
        return 0
    if args.mode == "predict":
        predict(args.files, args.out, args.on_gpu)
        return 0
    rows, ok = compare(args.data)
    print("\n".join(rows))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
