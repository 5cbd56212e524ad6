"""The measured block of `irscope report --measure`: time, bandwidth and FLOP rate against the peaks,
the roofline, and per source line Nsight Compute's counters beside irscope's predictions."""

from __future__ import annotations

from typing import Any


def _size(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def _time(ms: float) -> str:
    return f"{ms * 1e3:.1f} µs" if ms < 1 else f"{ms:.3f} ms"


def format_measured(m: dict[str, Any]) -> list[str]:
    out = []
    t = m.get("time_ms")
    peaks = m.get("peaks") or {}
    work = m.get("work") or {}
    if t:
        out.append(
            f"  measured   {_time(t['median'])} (20th-80th percentile {_time(t['p20'])}-{_time(t['p80'])}), "
            f"triton.testing.do_bench on copies of the launch's arguments, {peaks.get('device', 'this GPU')}"
        )
    moved = (work.get("bytes_read") or 0) + (work.get("bytes_written") or 0)
    if t and moved:
        share = (
            f" = {m['achieved_gbps'] / peaks['dram_gbps']:.1%} of its {peaks['dram_gbps']:.0f} GB/s DRAM peak"
            if peaks.get("dram_gbps") and m.get("achieved_gbps")
            else ""
        )
        out.append(
            f"  bandwidth  {_size(moved)} to move ({_size(work['bytes_read'])} read, "
            f"{_size(work['bytes_written'])} written, the distinct sectors the programs touch and the code): "
            f"{m['achieved_gbps']:.1f} GB/s{share}"
        )
    if t and work.get("flops"):
        kind = work.get("flop_precision")
        peak = (peaks.get("math_tflops") or {}).get(kind)
        share = (
            f" = {m['achieved_tflops'] / peak:.1%} of its {peak:g} TFLOP/s {kind} peak"
            if peak
            else f" (no {kind} peak known for this GPU)"
        )
        out.append(
            f"  compute    {work['flops'] / 1e9:.3g} GFLOP of tl.dot: {m['achieved_tflops']:.2f} TFLOP/s{share}"
        )
    roof = m.get("roofline")
    if t and roof and roof.get("bound"):
        out.append(
            f"  roofline   {roof['bound']}-bound: {roof['intensity_flop_per_byte']:g} FLOP/B against a ridge "
            f"of {roof['ridge']:g} FLOP/B ({roof['precision']})"
        )
    for note in work.get("notes") or []:
        out.append(f"    note: {note}")
    ncu = m.get("ncu")
    if ncu:
        out.extend(_agreement_lines(m.get("agreements") or []))
        hot = sorted(
            (c for c in ncu["lines"] if c["stall_samples"]), key=lambda c: -c["stall_samples"]
        )[:5]
        total = sum(c["stall_samples"] for c in ncu["lines"]) or 1
        for c in hot:
            where = f"line {c['source_line']}" if c["source_line"] else "no line"
            reasons = ", ".join(f"{k} {v:g}" for k, v in c["top_stalls"].items())
            out.append(
                f"  stalls     {where}: {c['stall_samples'] / total:.0%} of warp stall samples ({reasons})"
            )
    for err in m.get("errors") or []:
        out.append(f"  not measured: {err}")
    return out


def _agreement_lines(agreements: list[dict[str, Any]]) -> list[str]:
    out = []
    for a in agreements:
        group = a.get("source_lines")
        where = (
            "lines " + "+".join(map(str, group)) + ": "
            if group
            else f"line {a['source_line']}: "
            if a["source_line"]
            else ""
        )
        mark = {True: "agrees", False: "DISAGREES (over 5%)", None: "no prediction"}[a["agrees"]]
        if a["agrees"] is None and a.get("note"):
            mark = f"not compared: {a['note']}"
        predicted = "-" if a["predicted"] is None else f"{a['predicted']:g}"
        measured = "-" if a["measured"] is None else f"{a['measured']:g}"
        out.append(
            f"  ncu        {where}{a['what']}: measured {measured}, predicted {predicted}  {mark}"
        )
    return out
