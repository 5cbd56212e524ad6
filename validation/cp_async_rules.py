"""Candidate rules for cp.async (LDGSTS) shared-memory wavefronts, each tried against every committed H100 row.

    python validation/cp_async_rules.py            # every rule, a summary line each and the rows each breaks
    python validation/cp_async_rules.py --table    # and each rule's whole table, row by row
    python validation/cp_async_rules.py --facts    # the per-instruction facts behind the verdict (no rule)

The data: every directory of per-instruction Nsight Compute pages committed for validation/ncu_bank_conflicts.py
(`validation/data/bank_conflicts`, and bank_conflict.py's and the probe's runs under `h100_measure2`). Rows are
built the way that script builds them (bank_compare.py: per source line and kind, instructions paired in sorted
order, 5% tolerance); only the cp.async rule changes, so LDS/STS/LDSM/STSM rows read the same under every rule.

The probe's recorded launches (`call3/probe/cp_async_probe.launches.json`) all hold the first launch's
arguments, though the probe launched K = 256 second and A shifted by 64 bytes fourth (see
validation/probes/cp_async_probe.py); the record is corrected here from the probe's own source before
predicting, so those rows compare like with like.

irscope's rule ("now", irscope/analysis/banks/model.py): 128 bytes of lane data a phase, a phase takes as many
wavefronts as its busiest bank on either side, shared (where it writes) or global (the bank of each byte's offset
in its 128-byte line), and a 16-byte copy's zero-filled lanes are written apart. Each other rule is a grouping of
the lanes within a phase (each group written in wavefronts of its own, shared banks only) and a number of lanes
in a phase; the first of them is irscope's rule before the fourth H100 run (fla's 4-byte copies of one float
every 16 bytes, tests/functional/test_validation_measured_run4.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import bank_compare  # noqa: E402

from irscope.analysis.banks import conflicts as bank_conflicts  # noqa: E402
from irscope.analysis.banks import model as bank_model

LINE = np.uint64(bank_model.LINE_BYTES)
DATA = os.path.join(HERE, "data")
SOURCES = sorted(os.path.join(DATA, "bank_conflicts", f[:-len(".launches.json")])
                 for f in os.listdir(os.path.join(DATA, "bank_conflicts")) if f.endswith(".launches.json"))
SOURCES += [os.path.join(DATA, "h100_measure2", "call1", "bank", "bank_conflict"),
            os.path.join(DATA, "h100_measure2", "call2", "bank_again", "bank_conflict"),
            os.path.join(DATA, "h100_measure2", "call3", "probe", "cp_async_probe")]


def _probe_fix(doc: dict) -> dict:
    """The probe's four launches as its source makes them: (K, stages, shift) = (128, 3, 0), (256, 3, 0),
    (128, 2, 0), (128, 3, 16); A is a (128, K + 32) float32 tensor's columns shift..shift + K."""
    for launch, (k, shift) in zip(doc["launches"], ((128, 0), (256, 0), (128, 0), (128, 16))):
        p = launch["params"]
        p["probe_kernel_param_0"] = bank_conflicts.POINTER_STRIDE + 4 * shift
        p["probe_kernel_param_3"] = k
        p["probe_kernel_param_4"] = k + 32
    return doc


FIXES = {"cp_async_probe": _probe_fix}


# ----------------------------------------------------------------------------------------------- the rules
def by_line_fetching(source, fetching, width):
    """irscope's rule now: fetching lanes grouped by global line, zero-filled lanes one group."""
    return np.where(fetching, (source // LINE).astype(np.int64), -1)


def by_line_all(source, fetching, width):
    """Every lane grouped by the global line of its address, zero-filled lanes included (their address is
    computed though nothing is read)."""
    return (source // LINE).astype(np.int64)


def by_line_zfill_apart(source, fetching, width):
    """Lines for both, but a zero-filled lane never shares a wavefront with a fetching lane of its line."""
    line = (source // LINE).astype(np.int64)
    return np.where(fetching, 2 * line, 2 * line + 1)


def banks_only(source, fetching, width):
    """No line grouping: the phase's shared addresses alone (as a plain st.shared)."""
    return np.zeros(source.shape, np.int64)


def fetch_apart(source, fetching, width):
    """No line grouping, but fetching and zero-filled lanes in wavefronts of their own."""
    return np.where(fetching, 0, 1).astype(np.int64)


RULES = {  # name -> (grouping, lanes per phase for 16-byte copies); None: irscope's own rule
    "now: banks on both sides, zero-fill apart, 8-lane phases": (None, 8),
    "lines of fetching lanes, 8-lane phases": (by_line_fetching, 8),
    "lines of every lane (zero-fill too), 8-lane phases": (by_line_all, 8),
    "lines, zero-fill apart from fetching, 8-lane phases": (by_line_zfill_apart, 8),
    "banks only, 8-lane phases": (banks_only, 8),
    "fetching / zero-fill apart, 8-lane phases": (fetch_apart, 8),
    "lines of fetching lanes, 16-lane phases": (by_line_fetching, 16),
    "lines of every lane, 16-lane phases": (by_line_all, 16),
    "lines of every lane, 4-lane phases": (by_line_all, 4),
}


@contextlib.contextmanager
def rule(grouping, lanes16: int):
    """Run irscope's prediction with another cp.async grouping and phase size in place of its own: copies of 8
    bytes or more grouped by `grouping`, shared banks only (4-byte copies: shared banks, no grouping)."""
    if grouping is None:
        yield
        return
    saved = bank_conflicts.count, bank_conflicts.copy_phase_size

    def count(addresses, on, width, phase_of_lane=None, group=None, source=None, fetching=None):
        if source is not None:  # a copy: `source` holds each lane's global address (relative to a line)
            group = grouping(source.astype(np.uint64), fetching, width) if width >= 8 else None
        return saved[0](addresses, on, width, phase_of_lane, group)

    def phase_size(width):
        return lanes16 if width == 16 else saved[1](width)

    bank_conflicts.count, bank_conflicts.copy_phase_size = count, phase_size
    try:
        yield
    finally:
        bank_conflicts.count, bank_conflicts.copy_phase_size = saved


def staged_sources(tmp: str) -> list[str]:
    """Each source's stem path, a corrected copy where its record needs one (CSV pages linked beside it)."""
    out = []
    for stem in SOURCES:
        name = os.path.basename(stem)
        if name not in FIXES:
            out.append(stem)
            continue
        with open(stem + ".launches.json") as f:
            doc = FIXES[name](json.load(f))
        copy = os.path.join(tmp, name)
        with open(copy + ".launches.json", "w") as f:
            json.dump(doc, f)
        for page in os.listdir(os.path.dirname(stem)):
            if page.startswith(name + ".") and not page.endswith(".launches.json"):
                shutil.copy(os.path.join(os.path.dirname(stem), page), os.path.join(tmp, page))
        out.append(copy)
    return out


def evaluate(stems: list[str]) -> list[dict]:
    rows = []
    for stem in stems:
        got, _problems = bank_compare.compare_file(stem)
        committed = os.path.commonpath([os.path.abspath(stem), DATA]) == DATA  # else a corrected copy in a temp folder
        origin = os.path.relpath(os.path.dirname(stem), DATA) if committed \
            else "h100_measure2/call3/probe (record corrected)"
        rows += [{**r, "data": origin} for r in got]
    return rows


def _describe(r: dict) -> str:
    return (f"{r['data']}: {os.path.basename(r['file'])} launch {r['launch']} {r['source']} {r['kind']}: "
            f"measured {r['measured']} ({r['measured_ideal']}), rule {r['predicted']} ({r['predicted_ideal']}), "
            f"executed {r['executed']}/{r['predicted_executed']}")


def _patterns(stem: str) -> dict:
    """Per recorded launch and source line: each PTX cp.async in program order with its executions' address
    patterns, as signatures that ignore where the tile lies (addresses relative to the execution's first
    shared byte and first global line) but keep everything a per-address rule could use: the lanes that
    take part, which of them fetch, each lane's shared offset, its global line and its byte within the line."""
    from irscope.analysis.banks.ptxas import ptxas_view
    from irscope.analysis.ptx.machine import Machine
    from irscope.analysis.ptx.program import parse_program
    with open(stem + ".launches.json") as f:
        doc = json.load(f)
    out: dict = {}
    for index, launch in enumerate(doc["launches"]):
        if "grid" not in launch:
            continue
        program = parse_program(doc["ptx"][launch["ptx"]])
        where = bank_compare.ptx_locations(doc["ptx"][launch["ptx"]])
        copies = {a.index: a for a in ptxas_view(program, bank_conflicts.find_accesses(program))
                  if a.kind == "cp.async"}
        sigs: dict = {i: [] for i in copies}

        def watch(machine, state, ins):
            a = copies[state.pc]
            on = machine.guard_lanes(state, ins) & state.active
            shared = machine.address(state, a.address).bits.astype(np.int64)
            source = machine.address(state, a.global_address).bits.astype(np.int64)
            fetching, _known = bank_conflicts.fetching_lanes(machine, state, a, on)
            for w in np.nonzero(state.active.reshape(-1, 32).any(axis=1))[0]:
                o, sh, so, fe = (x.reshape(-1, 32)[w] for x in (on, shared, source, fetching))
                base, line0 = (sh[o].min(), (so[o] // 128).min()) if o.any() else (0, 0)
                sigs[state.pc].append(hash((tuple(np.where(o, sh - base, -1)), tuple(np.where(o, so // 128 - line0, -1)),
                                            tuple(np.where(o, so % 128, -1)), tuple(fe & o))))

        g = tuple(launch["grid"])
        ctas = [(i % g[0], (i // g[0]) % g[1], i // (g[0] * g[1])) for i in range(g[0] * g[1] * g[2])]
        shared = {name: 0 for name in bank_conflicts._shared_symbols(program)}
        Machine(program, launch["params"], g, ctas, launch["threads"],
                {i: [a.address, a.global_address, a.src_size] for i, a in copies.items()}, watch, shared).run()
        for i, got in sigs.items():
            line = where[copies[i].line]
            out.setdefault(index, {}).setdefault(line[1] if line else 0, []).append(tuple(sorted(got)))
    return out


def facts(stems: list[str]) -> None:
    """Per measured LDGSTS (paired with the PTX cp.async of its line in program order, executions checked):
    wavefronts per execution, and whether another instruction with the same address patterns measured
    otherwise, which no rule of addresses alone can fit."""
    from ncu_shared import measured_launches
    table = []
    for stem in stems:
        patterns = _patterns(stem)
        with open(stem + ".launches.json") as f:
            doc = json.load(f)
        pairs = bank_compare.pair_launches(measured_launches(stem), doc["launches"])
        for index, (launch, rec) in enumerate(pairs):
            rows = [r for r in launch["rows"] if r.kind == "cp.async" and not r.never]
            if not rows or rec is None:
                continue
            name = os.path.basename(stem)
            by_line: dict = {}
            for r in rows:
                by_line.setdefault(r.line, []).append(r)
            for line, got in by_line.items():
                ptx = patterns.get(doc["launches"].index(rec), {}).get(line, [])
                for n, r in enumerate(got):
                    sigs = ptx[n] if n < len(ptx) and len(ptx[n]) == r.executed else None
                    table.append((name, index, line, r, sigs))
    for name, index, line, r, sigs in table:
        per = (r.wavefronts or 0) / max(1, r.executed)
        same = [t for t in table if sigs is not None and t[4] == sigs and t[3] is not r]
        clash = [t for t in same if (t[3].wavefronts or 0) * r.executed != (r.wavefronts or 0) * t[3].executed]
        note = "unpaired" if sigs is None else (
            "CLASH: same addresses measured " + ", ".join(
                f"{t[0]} launch {t[1]} {t[3].text.split(',')[-1].strip()} {(t[3].wavefronts or 0) / t[3].executed:.1f}"
                for t in clash[:2]) if clash else "")
        print(f"{name} launch {index} line {line}: {r.text.strip()[:58]:58} executed {r.executed:4} "
              f"wavefronts/exec {per:4.1f} (ideal {(r.ideal or 0) / max(1, r.executed):.1f}) {note}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", action="store_true", help="print each rule's whole table")
    parser.add_argument("--facts", action="store_true", help="print the measured per-instruction LDGSTS counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        stems = staged_sources(tmp)
        if args.facts:
            facts(stems)
            return 0
        for name, (grouping, lanes) in RULES.items():
            with rule(grouping, lanes):
                rows = evaluate(stems)
            bad = [r for r in rows if not r["ok"]]
            copies = [r for r in rows if r["kind"] == "cp.async"]
            print(f"### {name}: {len(rows) - len(bad)} of {len(rows)} rows within 5% "
                  f"(cp.async {len(copies) - sum(not r['ok'] for r in copies)} of {len(copies)})")
            for r in bad:
                print("  off:", _describe(r))
            if args.table:
                print("\n".join(bank_compare.table(rows)))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
