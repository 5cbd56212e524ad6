"""Reading Nsight Compute's CSV pages: the source page per SASS instruction, and the raw page per launch.

`ncu --import R --page source --csv --print-source sass` prints, per profiled launch, a "Kernel Name" row,
a header row, then one row per SASS instruction: its address, its text, and counters (instructions
executed, global sectors and their ideal, shared wavefronts and their ideal, warp stall samples by
reason). `--page raw --csv` prints a header row, a units row, then one row of metrics per launch.
Numbers may carry thousands separators; "-" means the counter does not apply.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from irscope.ir import sass as ir_sass

INSTRUCTIONS = "Instructions Executed"
SPACE, OPERATION = "Address Space", "Access Operation"
SECTORS, SECTORS_IDEAL = "L2 Theoretical Sectors Global", "L2 Theoretical Sectors Global Ideal"
WAVEFRONTS, WAVEFRONTS_IDEAL = "L1 Wavefronts Shared", "L1 Wavefronts Shared Ideal"
SAMPLES = "Warp Stall Sampling (All Samples)"
_STALL = re.compile(r"^stall_(\w+)$")


def number(text: str) -> float | None:
    text = (text or "").strip().replace(",", "")
    if text in ("", "-", "n/a"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


@dataclass
class SassRow:
    offset: int  # bytes from the function's first instruction
    text: str  # the instruction as ncu disassembled it
    values: dict[str, str]

    def get(self, name: str) -> float:
        return number(self.values.get(name, "")) or 0.0

    @property
    def space(self) -> str:
        return self.values.get(SPACE, "-")

    @property
    def base(self) -> str:
        """The mnemonic without guard or modifiers (`@!P0 LDS.128 ...` -> `LDS`)."""
        return ir_sass.tokenize_text(self.text).base

    @property
    def operation(self) -> str:
        return self.values.get(OPERATION, "-")

    def stalls(self) -> dict[str, float]:
        out = {}
        for name, text in self.values.items():
            found = _STALL.match(name)
            value = number(text)
            if found and value:
                out[found.group(1)] = value
        return out


@dataclass
class SourcePage:
    kernel: str
    rows: list[SassRow] = field(default_factory=list)


def parse_source_page(text: str) -> list[SourcePage]:
    """Every launch's table in a `--page source --print-source sass` CSV, in order."""
    pages: list[SourcePage] = []
    header: list[str] | None = None
    base = None
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        if row[0] == "Kernel Name":
            pages.append(SourcePage(row[1] if len(row) > 1 else ""))
            header, base = None, None
            continue
        if not pages:
            continue
        if header is None:
            header = row
            continue
        values = dict(zip(header, row))
        address = values.get("Address", "")
        if not address.startswith("0x"):
            continue
        where = int(address, 16)
        base = where if base is None else base
        pages[-1].rows.append(SassRow(where - base, values.get("Source", "").strip(), values))
    return pages


# ncu prints each metric of the raw page in a unit of its choosing, per metric and per report (the units row):
# one kernel's gpu__time_duration in "us", a longer one's in "ms"; bytes in "byte", "Kbyte", "Mbyte". Times are
# kept in microseconds and sizes in bytes, whatever unit a page used (tutorial 02's 1.4 ms kernel was read
# as 1.4 µs on the H100 before this).
_SCALES = {
    "nsecond": ("usecond", 1e-3),
    "ns": ("usecond", 1e-3),
    "usecond": ("usecond", 1.0),
    "us": ("usecond", 1.0),
    "msecond": ("usecond", 1e3),
    "ms": ("usecond", 1e3),
    "second": ("usecond", 1e6),
    "s": ("usecond", 1e6),
    "byte": ("byte", 1.0),
    "Kbyte": ("byte", 1e3),
    "Mbyte": ("byte", 1e6),
    "Gbyte": ("byte", 1e9),
    "Tbyte": ("byte", 1e12),
}


def _in_base_unit(text: str, unit: str) -> str:
    scale = _SCALES.get(unit.strip())
    value = number(text)
    if scale is None or value is None or scale[1] == 1.0:
        return text
    return format(value * scale[1], ".10g")


def parse_raw_page(text: str) -> list[dict[str, str]]:
    """One dict of metric -> value per launch of a `--page raw --csv` output, times in microseconds and sizes
    in bytes (the units row read, then dropped)."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    start = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if start is None:
        return []
    header = rows[start]
    units = (
        rows[start + 1]
        if start + 1 < len(rows) and not rows[start + 1][0].strip().isdigit()
        else []
    )
    units = dict(zip(header, units))
    out = []
    for row in rows[start + 1 :]:
        if row and row[0].strip().isdigit():
            out.append(
                {
                    name: _in_base_unit(value, units.get(name, ""))
                    for name, value in zip(header, row)
                }
            )
    return out


def split_source_text(text: str) -> list[str]:
    """A source page of several launches, cut into one page each (at each "Kernel Name" row), in order."""
    chunks: list[list[str]] = []
    for line in text.splitlines(keepends=True):
        if line.startswith('"Kernel Name"') or line.startswith("Kernel Name"):
            chunks.append([])
        if chunks:
            chunks[-1].append(line)
    return ["".join(c) for c in chunks]


def split_raw_text(text: str) -> list[str]:
    """A raw page of several launches, as one page each: the header and units rows, then that launch's row."""
    lines = text.splitlines(keepends=True)
    start = next(
        (i for i, line in enumerate(lines) if line.startswith('"ID"') or line.startswith("ID,")),
        None,
    )
    if start is None:
        return []
    head = lines[start : start + 2]
    if len(head) == 2 and next(csv.reader([head[1]]), [""])[0].strip().isdigit():
        head = head[:1]  # no units row
    return [
        "".join(head + [line])
        for line in lines[start + len(head) :]
        if line.strip() and next(csv.reader([line]), [""])[0].strip().isdigit()
    ]
