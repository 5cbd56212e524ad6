"""Where a prediction meets a measurement: both side by side, and a finding when they disagree by more
than 5% (a wrong prediction is a defect of irscope's, and the user should not have to trust it).

Compared: the sectors of each source line's global loads and stores over the whole launch (when the
coalescing analysis ran every program) and their sectors per request (coalescing analysis vs ncu's
theoretical sectors over instructions executed; ncu's per-instruction count includes executions with
every lane masked off, which issue no request, so where those exist in the launch, or in the programs a
sampled prediction ran, the ratio is shown, not compared),
registers per thread (the cubin vs
`launch__registers_per_thread`), theoretical occupancy (irscope's model vs
`sm__maximum_warps_per_active_cycle_pct`), and each line's shared-memory wavefronts and bank conflicts
(bank_agreements: the bank-conflict model run over the whole launch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from irscope.analysis.measured.ncu_parse import number
from irscope.analysis.measured.per_line import LineCounters
from irscope.analysis.occupancy import occupancy
from irscope.base.compiled import CompiledKernel
from irscope.findings.engine import finding_builder
from irscope.findings.model import Cost

TOLERANCE = 0.05
# ncu's launch__registers_per_thread is what each thread of the launch holds: on the H100 a kernel whose cubin
# uses 6 registers (an Inductor zeros_like) and one that uses 14 both read 16, one that uses 18 reads 18
# (validation/data/h100_measure2).
MIN_ALLOCATED_REGISTERS = 16


@dataclass
class Agreement:
    what: str  # "ld sectors", "ld sectors/request", ..., "registers", "occupancy %"
    source_line: int | None
    predicted: float | None
    measured: float | None
    note: str = ""  # why the two are not compared, when they are not
    lines: tuple = ()  # the source lines compared together (line_groups), when more than one

    @property
    def agrees(self) -> bool | None:
        if self.predicted is None or self.measured is None or self.note:
            return None
        if self.measured == 0:
            return self.predicted == 0
        return abs(self.predicted - self.measured) / abs(self.measured) <= TOLERANCE

    def to_json(self) -> dict:
        return {
            "what": self.what,
            "source_line": self.source_line,
            "predicted": self.predicted,
            "measured": self.measured,
            "agrees": self.agrees,
            "note": self.note or None,
            **({"source_lines": list(self.lines)} if self.lines else {}),
        }

    @property
    def where(self) -> str:
        """`line 12: ` or `lines 156+157: ` (a group), or nothing for the kernel as a whole."""
        if self.lines:
            return "lines " + "+".join(str(n) for n in self.lines) + ": "
        return f"line {self.source_line}: " if self.source_line else ""


def agreements(
    comp: CompiledKernel, coalescing, lines: list[LineCounters], raw: dict[str, str], banks=None
) -> list[Agreement]:
    """`banks`: the bank-conflict prediction over the whole launch (shared_banks.whole_launch_report)."""
    out = []
    measured = {c.source_line: c for c in lines}
    if coalescing is not None and not coalescing.error:
        whole = len(coalescing.programs) == math.prod(coalescing.grid)
        for predicted in coalescing.by_source_line():
            m = measured.get(predicted.source_line)
            for kind, counts in (("ld", predicted.loads), ("st", predicted.stores)):
                if not counts.requests:
                    continue
                requests = getattr(m, f"{kind}_requests") if m else None
                if whole:  # every program predicted: the sectors of the whole launch, exactly
                    out.append(
                        Agreement(
                            f"{kind} sectors",
                            predicted.source_line,
                            counts.sectors,
                            getattr(m, f"{kind}_sectors") if m else None,
                        )
                    )
                note = ""
                if whole and requests and requests > counts.requests:
                    note = (
                        f"ncu counts {requests - counts.requests:g} executions with every lane masked off, "
                        f"which issue no request: its {requests:g} instructions against {counts.requests} "
                        f"requests"
                    )
                elif not whole and counts.instructions > counts.requests:
                    # ncu's ratio is over instructions executed; a sample tells that masked-off executions
                    # exist, not how many the launch has
                    off = counts.instructions - counts.requests
                    note = (
                        f"ncu's ratio is over instructions executed, and in the {len(coalescing.programs)} "
                        f"programs irscope ran (of {math.prod(coalescing.grid)}) {off} of {counts.instructions} "
                        f"executions have every lane masked off, which issue no request"
                    )
                if not note and kind == "ld" and m is not None and m.zero_fill_copies:
                    # cp.async copies the pipeliner issues past the loop's end are zero-filled in every lane:
                    # ncu counts their executions, which issue no request, and the source-level prediction
                    # has no such copies (tutorial 02's BLOCK 256 launch: 2.26 measured, 4 predicted)
                    note = (
                        f"ncu's ratio is over instructions executed, and {m.zero_fill_copies:g} executions "
                        f"are of cp.async copies that may zero-fill every lane, which issue no request"
                    )
                value = getattr(m, f"{kind}_sectors_per_request") if m else None
                out.append(
                    Agreement(
                        f"{kind} sectors/request",
                        predicted.source_line,
                        _round(counts.sectors_per_request),
                        value,
                        note,
                    )
                )
        predicted_lines = {
            (p.source_line, k)
            for p in coalescing.by_source_line()
            for k, c in (("ld", p.loads), ("st", p.stores))
            if c.requests
        }
        for m in lines:  # measured global traffic on a line irscope predicted nothing for
            for kind in ("ld", "st"):
                if getattr(m, f"{kind}_requests") and (m.source_line, kind) not in predicted_lines:
                    out.append(
                        Agreement(
                            f"{kind} sectors/request",
                            m.source_line,
                            None,
                            getattr(m, f"{kind}_sectors_per_request"),
                        )
                    )
    if banks is not None:
        out.extend(bank_agreements(banks, lines))
    registers = number(raw.get("launch__registers_per_thread", ""))
    if registers is not None:
        used = comp.resources.registers
        # what the launch holds, not what the code uses
        if used is not None and used < MIN_ALLOCATED_REGISTERS:
            out.append(
                Agreement(
                    f"registers allocated (the code uses {used}, a thread holds at least "
                    f"{MIN_ALLOCATED_REGISTERS})",
                    None,
                    MIN_ALLOCATED_REGISTERS,
                    registers,
                )
            )
        else:
            out.append(Agreement("registers", None, used, registers))
    occupancy_pct = number(raw.get("sm__maximum_warps_per_active_cycle_pct", ""))
    if occupancy_pct is not None:
        occ = occupancy(comp)
        out.append(
            Agreement(
                "occupancy %", None, round(occ.fraction * 100, 2) if occ else None, occupancy_pct
            )
        )
    return out


def bank_agreements(report, lines: list[LineCounters]) -> list[Agreement]:
    """Per source line, the shared-memory wavefronts of the accesses irscope models (LDS, STS, LDSM, STSM,
    LDGSTS) and their bank conflicts (wavefronts over the ideal), predicted for the whole launch against
    Nsight Compute's totals. HGMMA's reads are left out of both sides: irscope does not model them (their
    measured wavefronts equal their ideal, docs/validation.md).

    The two sides name lines through different maps: a predicted access has its PTX instruction's `.loc`,
    a measured one its SASS instruction's line in the cubin's table (ptxas's, which Nsight Compute shows
    too). Where ptxas gives one line the instructions of two (two `tl.sum` on neighbouring lines whose
    shared-memory exchanges it files under the first: Liger's layer-norm backward, FlagGems' layer norm),
    per-line totals cannot be compared, while their sum can. So lines are compared in groups
    (line_groups): a line alone where both maps give it as many shared-memory instructions, else together
    with the lines after it until the two maps hold as many instructions; the group is decided by the
    instructions each map places, before any count is looked at."""
    predicted: dict[int | None, list] = {}
    for r in report.accesses:
        if r.access.kind in ("wgmma", "bulk"):
            continue
        predicted.setdefault(r.source_line, []).append(r)
    measured = {c.source_line: c for c in lines}
    short = (
        ""
        if report.complete
        else (
            f"the prediction ran {report.programs} of the launch's {report.grid_programs} programs"
            + (f" ({report.stops[0]})" if report.stops else "")
            + ", so its totals are not the launch's"
        )
    )
    shown = set(predicted) | {
        c.source_line
        for c in lines
        if c.shared_wavefronts > c.other_wavefronts or c.shared_instructions
    }
    out = []
    for group in line_groups(
        sorted(shown, key=lambda n: (n is None, n or 0)),
        {line: len(results) for line, results in predicted.items()},
        {c.source_line: c.shared_instructions for c in lines},
    ):
        ms = [measured[line] for line in group if line in measured]
        waves = sum(m.shared_wavefronts - m.other_wavefronts for m in ms)
        ideal = sum(m.shared_ideal - m.other_ideal for m in ms)
        results = [r for line in group for r in predicted.get(line, [])]
        together = tuple(group) if len(group) > 1 else ()
        if not results:
            if waves:  # measured where irscope predicted nothing
                out.append(Agreement("shared wavefronts", group[0], None, waves, short, together))
            continue
        note = short
        if not note and any(r.access.not_modelled or r.unknown for r in results):
            odd = next(r for r in results if r.access.not_modelled or r.unknown)
            note = (
                f"not predicted: {odd.access.not_modelled}"
                if odd.access.not_modelled
                else f"{odd.unknown} executions of a {odd.access.opcode} whose address irscope could not compute"
            )
        p_waves = sum(r.wavefronts for r in results)
        p_ideal = sum(r.ideal for r in results)
        out.append(
            Agreement("bank conflicts", group[0], p_waves - p_ideal, waves - ideal, note, together)
        )
        out.append(Agreement("shared wavefronts", group[0], p_waves, waves, note, together))
    return out


def line_groups(ordered: list, in_ptx: dict, in_sass: dict) -> list[list]:
    """`ordered` source lines (None, the unmapped, last and alone) in groups: a line alone when the PTX's map
    and the SASS's give it as many modelled shared-memory instructions (`in_ptx`, `in_sass`), else joined
    with the next lines until the two counts are even (or the lines run out)."""
    groups: list[list] = []
    open_group: list = []
    balance = 0
    for line in ordered:
        if line is None:
            continue
        open_group.append(line)
        balance += in_ptx.get(line, 0) - in_sass.get(line, 0)
        if balance == 0:
            groups.append(open_group)
            open_group = []
    if open_group:
        groups.append(open_group)
    if None in ordered:
        groups.append([None])
    return groups


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def disagreement_findings(comp: CompiledKernel, found: list[Agreement]) -> list:

    new = finding_builder(comp)
    out = []
    said = set()
    for a in found:
        if a.note or (a.agrees is not False and not (a.predicted is None and a.measured)):
            continue
        family = (
            "shared" if a.what in ("bank conflicts", "shared wavefronts") else a.what.split()[0]
        )
        # one finding per line and kind of access (ld / st / shared)
        if (
            a.source_line,
            family,
        ) in said:
            continue
        said.add((a.source_line, family))
        where = a.where
        if a.predicted is None:
            message = (
                f"{where}Nsight Compute measured {a.what} {a.measured:g}, and irscope predicted "
                f"nothing for it"
            )
        else:
            off = abs(a.predicted - a.measured) / abs(a.measured) if a.measured else 1.0
            message = (
                f"{where}irscope predicted {a.what} {a.predicted:g}, Nsight Compute measured "
                f"{a.measured:g} ({off:.0%} apart)"
            )
        out.append(
            new(
                "measured-disagrees",
                "warning",
                a.source_line,
                message,
                "trust the measurement; please report this with `irscope report FILE --measure --json`",
                Cost(a.measured, a.what.replace(" ", "_"), f"measured {a.measured:g}"),
                None,
            )
        )
    return out
