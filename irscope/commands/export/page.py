"""One self-contained HTML page of a compilation: header (launch statistics and the roofline included), the
ranked findings, the analysis' notes, each global load and store with one warp's lanes against the sectors
they touch (as the terminal UI's Coalescing panel draws it), and every stage side by side, linked by source
line as in the terminal UI (the same colours, from the same palette and rule); a click on a finding or an
access selects its source line.

Nothing is fetched when the page is viewed: the style and the script are inlined, and a Content Security
Policy forbids any other source. Every text from the user's file or the compiler is HTML-escaped, and
control characters are written out (`\\x1b`), never passed through."""

from __future__ import annotations

import html
import os
from typing import Any

from irscope.analysis.coalescing.picture import LABEL_END, picture_registers, warp_picture_lines
from irscope.analysis.coalescing.sectors import analyze_coalescing
from irscope.base.names import IR_STAGES, absent_stage
from irscope.base.textsafe import safe_text
from irscope.ir.sourcemap import LineKind

# The terminal UI's palette (irscope/tui/linking.py), repeated here so that the worker, which builds the
# page, never imports the TUI package; tests/functional/test_cli_export.py checks that the two agree.
PALETTE = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999")
_HERE = os.path.dirname(os.path.abspath(__file__))
_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def _esc(text: Any) -> str:
    return html.escape(safe_text(str(text)), quote=True)


def _asset(name: str) -> str:
    with open(os.path.join(_HERE, name), encoding="utf-8") as f:
        return f.read()


def colour_slots(comp) -> dict[int, int]:
    """Source line -> palette slot: the TUI's rule (lines that produced IR outside SASS, in order)."""
    sm = comp.source_map
    produced: set[int] = set()
    for stage in comp.stage_names:
        if stage not in ("source", "sass"):
            produced.update(line.loc.line for line in sm.lines(stage) if line.loc is not None)
    return {line: n % len(PALETTE) for n, line in enumerate(sorted(produced))}


def _pane(comp, stage: str, slots: dict[int, int]) -> str:

    sm = comp.source_map
    rows = []
    for index, (text, ir) in enumerate(zip(comp.stage(stage).splitlines(), sm.lines(stage))):
        attrs = [f'class="l{" dbg" if ir.kind is LineKind.DEBUG else ""}"', f'data-i="{index + 1}"']
        if ir.loc is not None:
            chain = " ".join(dict.fromkeys(str(f.line) for f in ir.frames))
            attrs.append(f'data-s="{ir.loc.line}" data-c="{chain}"')
            slot = slots.get(ir.loc.line)
            if slot is not None:
                attrs.append(f'data-slot="{slot}" style="--c:{PALETTE[slot]}"')
        rows.append(f'<div {" ".join(attrs)}><span class="n">{index + 1}</span>{_esc(text)}</div>')
    return (
        f'<section class="pane" data-stage="{stage}"><h2>{_esc(stage.upper())}</h2>'
        f'<div class="lines">{"".join(rows)}</div></section>'
    )


def _header(entry: dict[str, Any], versions: dict[str, str], device: str) -> str:
    grid = "×".join(map(str, entry["grid"])) if entry["grid"] else "unknown"
    occ = entry.get("occupancy") or {}
    cells = [
        ("target", entry["target"]),
        ("grid", grid),
        ("warps", entry["num_warps"]),
        ("stages", entry["num_stages"]),
        ("registers", entry["registers"]),
        ("spills", entry["spills"]),
        ("shared", f"{entry['shared_bytes']} B"),
        ("occupancy", occ.get("text", "-")),
    ]
    for stats in entry.get("launch_stats") or []:
        cells.append(("launch", f"grid {'×'.join(map(str, stats['grid']))}: {stats['text']}"))
    roofs = entry.get("rooflines") or []
    if roofs and roofs[0].get("text"):
        for label, text in zip(("traffic", "roofline", "time"), roofs[0]["text"]):
            cells.append((label, text))
    for stage in IR_STAGES:
        absent = absent_stage(stage, entry.get("language", "triton"))
        if absent:  # a Gluon kernel's TTIR
            cells.append((f"no {stage}", f"a {entry['language'].capitalize()} kernel: {absent}"))
    args = []
    for name, kind in entry["signature"].items():
        if kind == "constexpr":
            args.append(f"{name}={entry['constexprs'].get(name)}")
        else:
            spec = entry["specialization"].get(name, "")
            args.append(f"{name}: {kind}" + (f" [{spec}]" if spec else ""))
    rows = "".join(f'<tr><td class="k">{_esc(k)}</td><td>{_esc(v)}</td></tr>' for k, v in cells)
    made = ", ".join(f"{k} {v}" for k, v in versions.items())
    return (
        f'<header><h1>{_esc(entry["name"])} <span class="k">{_esc(entry["file"])}:{entry["def_line"]}</span></h1>'
        f'<table>{rows}<tr><td class="k">arguments</td><td>{_esc(", ".join(args))}</td></tr>'
        f'<tr><td class="k">device</td><td>{_esc(device)}</td></tr>'
        f'<tr><td class="k">made by</td><td id="versions">{_esc(made)}</td></tr></table></header>'
    )


def _notes(entry: dict[str, Any]) -> str:
    """What the report says about this compilation's memory access: why not vectorized, coalescing (or why
    coalescing was not analysed)."""
    items = []
    for d in entry.get("vectorization") or []:
        for r in d["reasons"]:
            items.append(
                f"line {d['source_line']}: {d['op']} of {d['pointer'] or '?'} is {d['width_bytes']} B per "
                f"instruction: {r['why']}. Fix: {r['fix']}"
            )
    for row in entry.get("coalescing") or []:
        spr, ideal = row.get("sectors_per_request"), row.get("ideal_sectors_per_request")
        if spr is not None and ideal and spr > ideal * 1.25:
            items.append(f"line {row['source_line']}: {row['diagnosis']} Fix: {row['fix']}")
    totals = entry.get("coalescing_totals") or {}
    if totals.get("error") and not entry.get("coalescing"):
        items.append(f"coalescing not analysed: {totals['error']}")
    if not items:
        return ""
    return '<div id="notes"><ul>' + "".join(f"<li>{_esc(i)}</li>" for i in items) + "</ul></div>"


def _pictures(comp) -> str:
    """Each analysed load and store: its sectors per request against the ideal, and the costliest request of
    one warp drawn lane by lane; a click on its title selects its source line."""
    try:
        result = analyze_coalescing(comp)
    except Exception as exc:  # noqa: BLE001 - the page goes without the pictures, and says why
        return f'<section id="coalescing"><h2>Coalescing not analysed: {_esc(exc)}</h2></section>'
    items = []
    for access in result.accesses:
        counts = access.counts
        if not access.analysed or access.picture is None or not counts.requests:
            continue
        p = access.picture
        rows = []
        for line in warp_picture_lines(p, access.elem_bytes):
            label, _, lanes = line.partition(LABEL_END)
            cells = _esc(lanes).replace("█", '<b class="on">█</b>')
            rows.append(f"{_esc(label)}│{cells}")
        line = access.source_line
        selects = f' data-s="{line}"' if line is not None else ""
        efficiency = counts.efficiency or 0.0
        opened = (
            " open" if efficiency < 0.9 else ""
        )  # the wasteful ones drawn, the rest a click away
        items.append(
            f'<li class="access"{selects}><details{opened}><summary class="t">line {_esc(line)}: '
            f"{_esc(access.kind)} {_esc(access.param or '?')} — {counts.sectors_per_request:.1f} sectors per "
            f"request, ideal {counts.ideal_sectors_per_request:.1f}, efficiency {efficiency:.0%}</summary>"
            f'<div class="k">warp {p.warp}, {_esc(picture_registers(access))}: '
            f"{sum(1 for lane in p.lanes if lane)} lanes, "
            f"{p.sectors} sectors (ideal {p.ideal_sectors}) — the costliest request of "
            f"{len(result.programs)} programs recorded</div>"
            f'<pre class="warp">{chr(10).join(rows)}</pre></details></li>'
        )
    if not items:
        return ""
    return (
        '<section id="coalescing"><h2>Coalescing: one warp of each load and store</h2>'
        f"<ol>{''.join(items)}</ol></section>"
    )


def _findings(entry: dict[str, Any]) -> str:
    """The compilation's ranked findings, as `irscope report` gives them: severity, rule, line, what it
    costs, the fix; a finding on a line of the kernel's file selects that line when clicked."""
    found = entry.get("findings") or []
    if not found:
        return '<section id="findings"><h2>Findings: none</h2></section>'
    items = []
    for f in found:
        line = f.get("source_line")
        # a helper's line in another file: named, and not a line of the panes to select
        elsewhere = f.get("file") not in (None, "", entry["file"])
        here = line is not None and not elsewhere
        where = (
            f"{f['file']}:{line}"
            if elsewhere
            else f"line {line}"
            if line is not None
            else "no line"
        )
        what_if = (f.get("what_if") or {}).get("text")
        selects = f' data-s="{line}"' if here else ""
        items.append(
            f'<li class="finding {_esc(f["severity"])}"{selects}>'
            f'<span class="sev">{_esc(f["severity"])}[{_esc(f["rule"])}]</span> {_esc(where)}: '
            f"{_esc(f['message'])}"
            f'<div class="k">cost: {_esc(f["cost"]["text"])}</div>'
            f'<div class="k">fix: {_esc(f["fix"])}</div>'
            + (f'<div class="k">what if: {_esc(what_if)}</div>' if what_if else "")
            + "</li>"
        )
    return (
        f'<section id="findings"><h2>Findings ({len(found)}, most costly first)</h2>'
        f"<ol>{''.join(items)}</ol></section>"
    )


def build_page(comp, entry: dict[str, Any], versions: dict[str, str], device: str) -> str:
    slots = colour_slots(comp)
    panes = "".join(_pane(comp, stage, slots) for stage in comp.stage_names)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>{_esc(entry['name'])} — irscope</title><style>{_asset('page.css')}</style></head>"
        f'<body class="colours">{_header(entry, versions, device)}{_findings(entry)}{_notes(entry)}'
        f"{_pictures(comp)}"
        '<div id="bar"><label><input type="checkbox" id="col" checked> colours</label> '
        '<label><input type="checkbox" id="dbg"> debug metadata</label> '
        '· selected: <span id="selected">none (click a line)</span></div>'
        f'<main id="panes">{panes}</main><script>{_asset("page.js")}</script></body></html>\n'
    )
