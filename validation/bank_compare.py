"""The comparison behind validation/ncu_bank_conflicts.py: irscope's prediction from a recorded launch
against Nsight Compute's per-instruction counts, row by row (source line and kind of access).

Instructions of one source line and kind are paired in sorted order (ptxas reorders them); a row fails
when the counts differ in number or any pair is more than 5% apart. HGMMA (wgmma) reads are not modelled:
their row counts them per launch (ptxas attributes HGMMA to other source lines than the wgmma it came from)
and checks that the measured wavefronts equal their ideal, as irscope assumes.

Inductor writes each kernel into a module named by a hash of its code (`c<51 letters and digits>.py`), and
the GPU run generates its modules afresh: the same kernel's source lines come under another module name
there. Rows pair such lines by kernel, config and line number ("Inductor module:56"), and a launch whose
recorded PTX is not one Nsight Compute saw says so in its kernel column ("other PTX").
"""

from __future__ import annotations

import functools
import json
import os
import re

from ncu_shared import measured_launches, read_rows

TOLERANCE = 0.05
NCU_LAUNCHES = (
    8  # what the GPU run profiles per file (ncu -c): with fewer measured, every launch must be
)
_NOT_CODE = (".loc", ".file", ".section", "//", "$L__", "{", "}")
_PER_LAUNCH = ("wgmma", "bulk")
_INDUCTOR_MODULE = re.compile(r"^c[a-z0-9]{51}\.py$")
NOTES: list[str] = []  # said, not failed on


def source_file(name: str) -> str:
    """A source file's name as rows show it: an Inductor module's hash name is not the kernel's identity."""
    return "Inductor module" if _INDUCTOR_MODULE.match(name) else name


def ptx_locations(ptx: str) -> list[tuple[str, int] | None]:
    """Per PTX line, the (file base name, line) of the last `.loc` before it: what ptxas saw."""
    files = {
        int(m.group(1)): source_file(os.path.basename(m.group(2)))
        for m in re.finditer(r'\.file\s+(\d+)\s+"([^"]+)"', ptx)
    }
    out, current = [], None
    for line in ptx.splitlines():
        m = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)", line)
        if m:
            current = (
                (files.get(int(m.group(1)), "?"), int(m.group(2))) if int(m.group(2)) else None
            )
        out.append(current)
    return out


def predicted_groups(doc: dict, launch: dict) -> tuple[dict, list[str]]:
    """(file, line, kind) -> [(wavefronts, ideal, executions, modelled)] for one recorded launch."""
    from irscope.analysis.banks.conflicts import LaunchInputs, predict

    ptx = doc["ptx"][launch["ptx"]]
    inputs = LaunchInputs(tuple(launch["grid"]), launch["threads"], launch["params"])
    report = predict(_parsed(ptx), inputs)
    where = ptx_locations(ptx)
    groups: dict = {}
    for r in report.accesses:
        file_line = (
            ("all lines", 0) if r.access.kind in _PER_LAUNCH else where[r.access.line] or ("?", 0)
        )
        value = (
            r.wavefronts,
            r.ideal,
            r.executions,
            r.access.not_modelled is None and not r.unknown,
        )
        groups.setdefault((*file_line, r.access.kind), []).append(value)
    return groups, report.stops


@functools.lru_cache(maxsize=64)
def _measured(stem_path: str) -> list[dict]:
    """Nsight Compute's pages of one file, read once for the same reason as `_parsed` (only read here)."""
    return measured_launches(stem_path)


@functools.lru_cache(maxsize=64)
def _parsed(ptx: str):
    """The parsed program of one PTX text, once: a search over counting rules (cp_async_rules.py) predicts the
    same launches once per rule, and the prediction only reads the program."""
    from irscope.analysis.ptx.program import parse_program

    return parse_program(ptx)


def pair_launches(measured: list[dict], recorded: list[dict]) -> list[tuple[dict, dict | None]]:
    """Each measured launch with a recorded launch of the same kernel, grid and block: launches that no
    autotuner repeats are taken in order, each once; an autotuned config's launch stands for all of its
    benchmark runs (the same binary), registers breaking a tie between configs."""
    out, used = [], set()
    for m in measured:
        same = [
            r
            for r in recorded
            if r["kernel"] == m["kernel"]
            and "grid" in r
            and tuple(r["grid"]) == tuple(m["grid"] or ())
            and r["threads"] == (m["block"] or (0,))[0]
            and (r.get("config") is not None or id(r) not in used)
        ]
        if len(same) > 1 and m.get("registers") is not None:
            same = [r for r in same if r.get("registers") == m["registers"]] or same
        if same:
            used.add(id(same[0]))
        out.append((m, same[0] if same else None))
    return out


def close(measured: int | None, predicted: int | None) -> bool:
    if measured is None or predicted is None:
        return False
    return abs(predicted - measured) <= TOLERANCE * measured


def compare_file(stem_path: str) -> tuple[list[dict], list[str]]:
    """Rows (one per launch, source line and kind) and problems for one file's recorded and measured data."""
    with open(stem_path + ".launches.json") as f:
        doc = json.load(f)
    problems = [
        f"{doc['file']}: launch {r['launch']} ({r['kernel']}): {r['error']}"
        for r in doc["launches"]
        if r.get("error")
    ]
    measured = _measured(stem_path)
    ptx_page = stem_path + ".source_ptx.csv"
    modules = None
    if os.path.exists(ptx_page) or os.path.exists(ptx_page + ".gz"):
        modules = _modules(read_rows(ptx_page))
        for module in modules:
            if not any(_same_code(module, text) for text in doc["ptx"].values()):
                NOTES.append(
                    f"{doc['file']}: a PTX module Nsight Compute saw is not one irscope recorded "
                    f"({len(module)} lines); the rows compare irscope's own PTX"
                )
    rows, cache = [], {}
    pairs = pair_launches(measured, doc["launches"])
    seen = {id(rec) for _, rec in pairs}
    if (
        len(measured) < NCU_LAUNCHES
    ):  # Nsight Compute measured every launch: each recorded one must be there
        problems += [
            f"{doc['file']}: recorded launch {r['launch']} of {r['kernel']} was not measured"
            for r in doc["launches"]
            if id(r) not in seen and not r.get("error")
        ]
    for index, (m, rec) in enumerate(pairs):
        if rec is None:
            problems.append(
                f"{doc['file']}: measured launch {index} of {m['kernel']} (grid {m['grid']}) has no "
                f"recorded launch"
            )
            continue
        key = (rec["ptx"], json.dumps(rec["params"]), tuple(rec["grid"]))
        if key not in cache:
            cache[key] = predicted_groups(doc, rec)
        groups, stops = cache[key]
        other_ptx = modules is not None and not any(
            _same_code(mod, doc["ptx"][rec["ptx"]]) for mod in modules
        )
        problems += [f"{doc['file']}: {m['kernel']}: {s}" for s in stops]
        measured_groups: dict = {}
        for r in m["rows"]:
            if r.never:
                if r.wavefronts:
                    problems.append(
                        f"{doc['file']}: {r.text} never executes yet has {r.wavefronts} wavefronts"
                    )
                continue
            file_line = (
                ("all lines", 0)
                if r.kind in _PER_LAUNCH
                else (source_file(r.file or "?"), r.line or 0)
            )
            measured_groups.setdefault((*file_line, r.kind), []).append(r)
        for key3 in sorted(set(groups) | set(measured_groups), key=lambda k: (k[0], k[1], k[2])):
            rows.append(
                _row(
                    doc,
                    m,
                    rec,
                    index,
                    key3,
                    groups.get(key3, []),
                    measured_groups.get(key3, []),
                    other_ptx,
                )
            )
    return rows, problems


def _modules(rows: list[list[str]]) -> list[list[str]]:
    """The PTX modules of a `--print-source ptx` page (numbered rows; each module starts at `.version`),
    as code lines."""
    modules: list[list[str]] = []
    for row in rows:
        if len(row) < 2 or not row[0].strip().isdigit():
            continue
        text = row[1].strip()
        if text.startswith(".version") or not modules:
            modules.append([])
        if text and not text.startswith(_NOT_CODE):
            modules[-1].append(text)
    return [m for m in modules if m]


def _same_code(ran: list[str], recorded: str) -> bool:
    mine = [t.strip() for t in recorded.splitlines()]
    mine = [t for t in mine if t and not t.startswith(_NOT_CODE)]
    return mine == ran


def _row(doc, m, rec, index, key, predicted, measured, other_ptx=False) -> dict:
    file, line, kind = key
    meas = sorted(measured, key=lambda r: (r.wavefronts or 0, r.executed))
    pred = sorted(predicted, key=lambda p: (p[0], p[2]))
    if kind in _PER_LAUNCH:
        ok = len(meas) == len(pred) and all(r.wavefronts == r.ideal for r in meas)
    else:
        ok = len(meas) == len(pred) and all(
            p[3] and close(r.wavefronts, p[0]) for r, p in zip(meas, pred)
        )
    return {
        "file": doc["file"],
        "kernel": m["kernel"],
        "config": rec.get("config"),
        "other_ptx": other_ptx,
        "launch": index,
        "source": file if not line else f"{file}:{line}",
        "kind": kind,
        "measured_n": len(meas),
        "predicted_n": len(pred),
        "measured": sum(r.wavefronts or 0 for r in meas),
        "measured_ideal": sum(r.ideal or 0 for r in meas),
        "predicted": sum(p[0] for p in pred),
        "predicted_ideal": sum(p[1] for p in pred),
        "executed": sum(r.executed for r in meas),
        "predicted_executed": sum(p[2] for p in pred),
        "ok": ok,
    }


def table(rows: list[dict]) -> list[str]:
    """Markdown, identical launches (autotuner benchmark runs) folded into one row with their count."""
    out = [
        "| file | kernel | source line | kind | instr. (measured/irscope) | executed (measured/irscope) | "
        "wavefronts measured (ideal) | wavefronts irscope (ideal) | launches | within 5% |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    folded: dict = {}
    for r in rows:
        key = tuple((k, v) for k, v in r.items() if k != "launch")
        folded[key] = folded.get(key, 0) + 1
    for key, launches in folded.items():
        r = dict(key)
        kind = r["kind"] + (" (not modelled: no excess)" if r["kind"] in _PER_LAUNCH else "")
        said = [f"config {r['config']}"] if r["config"] is not None else []
        said += ["other PTX"] if r["other_ptx"] else []
        cfg = f" ({', '.join(said)})" if said else ""
        irscope = "-" if r["kind"] in _PER_LAUNCH else f"{r['predicted']} ({r['predicted_ideal']})"
        out.append(
            f"| {r['file']} | {r['kernel']}{cfg} | {r['source']} | {kind} | {r['measured_n']}/{r['predicted_n']} "
            f"| {r['executed']}/{r['predicted_executed']} | {r['measured']} ({r['measured_ideal']}) | {irscope} "
            f"| {launches} | {'yes' if r['ok'] else 'NO'} |"
        )
    return out
