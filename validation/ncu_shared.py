"""Nsight Compute's per-instruction shared-memory counts, read from its source-page CSVs.

`ncu --import R.ncu-rep --page source --csv --print-source sass` gives one table per profiled launch
(after a "Kernel Name" row): per SASS instruction its address, text, "Instructions Executed" and the
L1 shared wavefront columns. `--print-source cuda,sass` lists the same instructions under the source
line (and file) they came from; `--page raw --csv` one row per launch with its grid and block. Files
may be gzip-compressed (`.csv.gz`), as the committed copies are.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from irscope.analysis.measured.ncu_parse import (
    INSTRUCTIONS,
    WAVEFRONTS,
    WAVEFRONTS_IDEAL,
    number,
    parse_raw_page,
    parse_source_page,
)
from irscope.engine.measure.ncu_run import ncu_machine_lock  # noqa: E402

# SASS opcode stem -> the PTX access kind irscope predicts for it
SASS_KINDS = {"LDS": "load", "STS": "store", "LDSM": "ldmatrix", "STSM": "stmatrix", "LDGSTS": "cp.async",
              "ATOMS": "atomic", "HGMMA": "wgmma", "UTMALDG": "bulk", "UTMASTG": "bulk", "UBLKCP": "bulk"}


# Hold the machine's Nsight Compute lock while profiling: two ncu processes profiling at once make the second
# fail ("a driver resource was unavailable"). irscope's measured mode takes the same lock.
one_ncu_at_a_time = ncu_machine_lock


@dataclass
class SassRow:
    address: str
    text: str
    kind: str                 # as in SASS_KINDS
    executed: int
    wavefronts: int | None
    ideal: int | None
    never: bool               # guarded by !PT: ptxas' placeholder, never executes
    file: str | None = None   # base name of the source file, from the cuda,sass page
    line: int | None = None


def read_text(path: str) -> str:
    """The CSV at `path`, or at `path + '.gz'`, from its first quoted field (ncu may print ==PROF== lines first)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        text = f.read()
    return text[max(text.find('"'), 0):]


def read_rows(path: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(read_text(path))))


def _int(text: str | None) -> int | None:
    value = number(text or "")
    return None if value is None else int(value)


def sass_kind(text: str) -> tuple[str | None, bool]:
    """The access kind of a SASS instruction's text, and whether it is guarded by !PT."""
    tokens = text.split()
    never = bool(tokens) and tokens[0] == "@!PT"
    if tokens and tokens[0].startswith("@"):
        tokens = tokens[1:]
    stem = tokens[0].split(".")[0] if tokens else ""
    return SASS_KINDS.get(stem), never


def launches_sass(path: str) -> list[tuple[str, list[SassRow]]]:
    """Per profiled launch, in order: the kernel's name and its shared-memory instructions (the source page
    read by irscope's own reader, irscope/analysis/measured/ncu_parse.py)."""
    out: list[tuple[str, list[SassRow]]] = []
    for page in parse_source_page(read_text(path)):
        rows = []
        for r in page.rows:
            kind, never = sass_kind(r.text)
            if kind is not None:
                rows.append(SassRow(r.values["Address"], r.text, kind, _int(r.values.get(INSTRUCTIONS)) or 0,
                                    _int(r.values.get(WAVEFRONTS)), _int(r.values.get(WAVEFRONTS_IDEAL)), never))
        out.append((page.kernel, rows))
    return out


def source_lines(path: str) -> dict[str, tuple[str, int]]:
    """SASS address -> (source file base name, line), from a `cuda,sass` source page."""
    out: dict[str, tuple[str, int]] = {}
    file, line = None, None
    for row in read_rows(path):
        if not row:
            continue
        if row[0] == "File Path":
            file = os.path.basename(row[1])
        elif row[0] in ("Function Name", "Line No"):
            continue
        elif row[0].strip():
            line = _int(row[0])
        elif len(row) > 2 and row[2].startswith("0x") and file is not None and line is not None:
            out[row[2]] = (file, line)
    return out


def launches_raw(path: str) -> list[dict]:
    """Per profiled launch: kernel name, grid and block (x, y, z), registers per thread."""
    return [{"kernel": got.get("Kernel Name"), "grid": _triple(got.get("Grid Size", "")),
             "block": _triple(got.get("Block Size", "")), "registers": _int(got.get("launch__registers_per_thread"))}
            for got in parse_raw_page(read_text(path))]


def _triple(text: str) -> tuple[int, ...] | None:
    numbers = re.findall(r"\d+", text)
    return tuple(int(n) for n in numbers) if numbers else None


def measured_launches(stem_path: str) -> list[dict]:
    """Everything measured for one file (`stem_path` = DIR/name): per launch its kernel, grid, block,
    registers and shared instructions, each with its source file and line."""
    sass = launches_sass(stem_path + ".source_sass.csv")
    lines = source_lines(stem_path + ".source_cuda_sass.csv")
    raw = launches_raw(stem_path + ".raw.csv")
    out = []
    for i, (kernel, rows) in enumerate(sass):
        for r in rows:
            r.file, r.line = lines.get(r.address, (None, None))
        facts = raw[i] if i < len(raw) and raw[i]["kernel"] == kernel else {}
        out.append({"kernel": kernel, "rows": rows, **{k: facts.get(k) for k in ("grid", "block", "registers")}})
    return out
