"""The summary of compilations that `irscope report` prints, as plain data (stable field names)."""

from __future__ import annotations

import functools
import os
from typing import Any

from irscope.analysis.coalescing.sectors import report_fields
from irscope.analysis.coalescing.text import format_lines
from irscope.analysis.measured.format import format_measured
from irscope.analysis.roofline import roofline_entries
from irscope.analysis.summary import analysis_entry, format_analysis
from irscope.base.named_text import differing, shown_values
from irscope.base.names import IR_STAGES, absent_stage
from irscope.engine.compile.compilation import Compilation
from irscope.engine.forked_map import copies_for, forked_map
from irscope.engine.inductor.report import format_inductor, inductor_entry
from irscope.engine.triton_compat import describe_config
from irscope.engine.workspace import Named, Workspace
from irscope.findings import findings, ranked, rule_errors


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def launch_fields(comp: Compilation) -> dict[str, Any]:
    """What a compilation is and costs: target, grid, specialization, warps, stages, registers, spills,
    shared memory (the report's entry and each side of a diff)."""
    res = comp.resources
    return {
        "target": comp.target.name,
        "grid": list(comp.launch.grid) if comp.launch.grid else None,
        "signature": dict(comp.signature),
        "specialization": comp.specialization,
        "constexprs": _jsonable(comp.constexprs),
        "num_warps": comp.num_warps,
        "block_warps": comp.block_warps
        if comp.ok
        else comp.num_warps,  # with warp specialization's partitions
        "num_stages": comp.num_stages,
        "registers": res.registers,
        "spills": res.spills,
        "shared_bytes": res.shared_bytes,
    }


def compilation_entry(ws: Workspace, comp: Compilation) -> dict[str, Any]:
    res = comp.resources
    entry: dict[str, Any] = {
        "name": comp.kernel.name,
        "module": comp.kernel.module,
        "language": comp.kernel.language,  # "triton" or "gluon"
        "file": ws.shown_path(comp.kernel.file),
        "def_line": comp.kernel.line,
        "cell": ws.cell(
            comp.kernel.file, comp.kernel.line
        ),  # a notebook's kernel: its cell and line there
        **launch_fields(comp),
        "launch": comp.launch.origin,
        "launch_count": ws.launch_count(comp),  # the captured launches this compilation stands for
        "compiled": True,
        "explored": comp.launch.explored,  # reached only by a benchmark sweep's exploration, compiled on request
        "local_bytes": res.local_bytes,
        "stages": {},
        "error": None,
        "interpreter_error": comp.launch.interp_error,
        "programs_interpreted": list(comp.launch.programs)
        if comp.launch.programs
        else None,  # [run, total]: cut
        "guesses": dict(comp.launch.guesses),
        # the first access of the interpreted launch outside its tensors (lanes switched off), or None
        "out_of_bounds": _stray_entry(comp.launch.out_of_bounds),
        # on a GPU, its tensors were let go of for the file's memory: stepping or measuring it reads zeros
        "inputs_released": comp.launch.inputs_released,
    }
    if not comp.target.is_nvidia:
        entry.update(sgprs=res.sgprs, vgpr_spills=res.vgpr_spills, sgpr_spills=res.sgpr_spills)
    if comp.kernel.inductor_info is not None:
        entry["inductor"] = inductor_entry(comp)
    if comp.kernel.is_autotuned:
        entry["autotune"] = autotune_entry(comp)
    if comp.failure is not None:
        entry["findings"] = _findings_json(ws, comp)
        f = comp.failure
        entry["error"] = {
            "message": f.message,
            "file": f.file,
            "source_line": f.line,
            "source_text": f.source_line,
        }
        entry["stages"] = {"source": {"lines": len(comp.source_text.splitlines())}}
        return entry
    sm = comp.source_map
    for name in comp.stage_names:
        entry["stages"][name] = {
            "lines": len(comp.stage(name).splitlines()),
            "instruction_lines": sm.instruction_lines(name),
            "mapped_fraction": round(sm.mapped_fraction(name), 4),
        }
    entry.update(analysis_entry(comp))
    entry.update(report_fields(comp))
    entry["rooflines"] = roofline_entries(comp)
    if comp.launch.guesses and entry.get("coalescing_totals") is not None:
        entry["coalescing_totals"].setdefault("notes", []).append(
            "addresses from guessed arguments ("
            + ", ".join(comp.launch.guesses)
            + "): not a real launch's"
        )
    entry["findings"] = _findings_json(ws, comp)
    if rule_errors(comp):
        entry["finding_rule_errors"] = rule_errors(comp)
    return entry


def autotune_entry(comp: Compilation) -> dict[str, Any]:
    """An autotuned kernel's configs (as `--config N` numbers them: the declared ones, then those its pruning
    made), the one this compilation is, and every config its autotuner would try for this launch, in the
    order it would try them, each with its meta-parameters and launch options."""
    configs = comp.kernel.autotune_configs or []
    selected = comp.launch.autotune_index or 0
    tried = [n for n in comp.launch.autotune_tried if n < len(configs)] or [selected]
    return {
        "configs": [str(c) for c in configs],
        "selected": selected,
        "tried": [
            {"index": n, **_jsonable(describe_config(configs[n])), "shown": n == selected}
            for n in tried
        ],
    }


def _findings_json(ws: Workspace, comp: Compilation) -> list[dict[str, Any]]:
    out = []
    for f in findings(comp):
        item = f.to_json()
        item["file"] = ws.shown_path(f.file) if f.file else None
        item["cell"] = ws.cell(f.file, f.source_line)
        out.append(item)
    return out


def named_entry(ws: Workspace, named: Named, config: int | None = None) -> dict[str, Any]:
    """A specialization a benchmark sweep's exploration reached, not compiled (workspace.Named): what it is
    (the fields of launch_fields that need no compile) and the command that compiles and shows it."""
    kernel, launch = named.kernel, named.launch
    label = ws.kernel_label(kernel)
    chosen = f" --config {config}" if config is not None else ""
    entry: dict[str, Any] = {
        "name": kernel.name,
        "module": kernel.module,
        "file": ws.shown_path(kernel.file),
        "def_line": kernel.line,
        "target": ws.target.name,
        "grid": list(launch.grid) if launch.grid else None,
        "signature": named.signature,
        "specialization": named.specialization,
        "constexprs": _jsonable(named.constexprs),
        "num_warps": named.num_warps,
        "num_stages": named.num_stages,
        "launch": launch.origin,
        "compiled": False,
        "explored": launch.explored,
        # why it is named, not compiled: a benchmark sweep's later point, or a config a GPU's timing picks
        "why": launch.named_why,
        "launch_number": named.number,
        "how": f"irscope report {ws.user_file.shown} --kernel {label}{chosen} --launch {named.number}",
    }
    if kernel.is_autotuned:
        configs = kernel.autotune_configs or []
        entry["autotune"] = {
            "configs": [str(c) for c in configs],
            "selected": launch.autotune_index or 0,
            "tried": [
                {
                    "index": n,
                    **_jsonable(describe_config(configs[n])),
                    "shown": n == (launch.autotune_index or 0),
                }
                for n in launch.autotune_tried
                if n < len(configs)
            ],
        }
    return entry


def build_report(
    ws: Workspace, comps: list[Compilation], named: list[Named] = (), config: int | None = None
) -> dict[str, Any]:
    """The report's document: `comps` compiled, and `named` (workspace.Named) listed with `compiled`
    false, leaving out any that is among `comps` (asked for with --launch)."""
    # each compilation's analyses in a copy of this process (forked_map.py), where copies can help
    if copies_for(len(comps)):
        entries = forked_map(functools.partial(compilation_entry, ws), comps)
    else:
        for comp in comps:
            comp.prefetch_sass()  # one nvdisasm per compilation, side by side
        entries = [compilation_entry(ws, c) for c in comps]
    doc: dict[str, Any] = {"kernels": entries}
    compiled = {(id(c.kernel), c.spec.cache_key()) for c in comps}
    doc["named"] = [
        named_entry(ws, n, config)
        for n in named
        if (id(n.kernel), n.spec.cache_key()) not in compiled
    ]
    doc["not_launched"] = [{"name": k.name, "def_line": k.line} for k in ws.not_launched()]
    doc["missing"] = [m.to_json() for m in ws.missing]
    if ws.run_warning:
        doc["warning"] = ws.run_warning
    doc["notes"] = list(ws.notes)
    doc["device"] = ws.device
    return doc


def format_findings(doc: dict[str, Any]) -> list[str]:
    """The report's opening: every compilation's findings in one ranked list, with cost, fix and what-if."""
    launches: dict[str, int] = {}
    items = []
    for k in doc["kernels"]:
        launches[k["name"]] = launches.get(k["name"], 0) + 1
        for f in k.get("findings") or []:
            items.append((f, k["name"], launches[k["name"]]))
    several = {name for name, n in launches.items() if n > 1}
    if not items:
        return ["findings: none"] if doc["kernels"] else []
    order = {id(f): i for i, f in enumerate(ranked([f for f, _, _ in items]))}
    out = [f"findings ({len(items)}, most costly first):"]
    for number, (f, name, launch) in enumerate(
        sorted(items, key=lambda t: order[id(t[0])]), start=1
    ):
        which = f"{name}, compilation {launch}" if name in several else name
        where = (
            f"{f['file']} {f['cell']}"
            if f.get("cell")
            else f"{f['file']}:{f['source_line']}"
            if f["source_line"]
            else (f["file"] or "?")
        )
        out.append(f"  {number}. {f['severity']}[{f['rule']}] {where} ({which}): {f['message']}")
        out.append(f"     cost: {f['cost']['text']}")
        out.append(f"     fix: {f['fix']}")
        if f.get("what_if"):
            out.append(f"     what if: {f['what_if']['text']}")
    return out


def format_missing(doc: dict[str, Any]) -> list[str]:
    """What this run did not reach: each of the file's kernels it did not launch, why, and how to see it."""
    missing = doc.get("missing") or []
    if not missing:  # --no-run, or helpers that the launched kernels call
        names = ", ".join(
            f"{k['name']} (line {k['def_line']})" for k in doc.get("not_launched") or []
        )
        return [f"not launched by the file: {names}"] if names else []
    out = [f"not reached ({len(missing)} kernel(s) this run did not launch; not shown above):"]
    if any(
        m.get("file") for m in missing
    ):  # `-m MODULE`: the launched kernels' modules, file by file
        return out + missing_by_file(missing)
    for m in missing:
        out.append(f"  {m['kernel']} (line {m['line']}): {m['reason']}")
        out.append(f"     to see it: {m['how']}")
    return out


def missing_by_file(missing: list[dict[str, Any]]) -> list[str]:
    """`-m MODULE`'s not-reached kernels, one line per file, then why (the same for all) and what to do."""
    by_file: dict[str, list[dict]] = {}
    for m in missing:
        by_file.setdefault(m.get("file") or "", []).append(m)
    out = [
        f"  {shown_file(path)}: " + ", ".join(f"{m['kernel']} (line {m['line']})" for m in ms)
        for path, ms in by_file.items()
    ]
    return out + [f"  why: {missing[0]['reason']}; to see them: {missing[0]['how']}"]


def shown_file(path: str) -> str:
    """A path relative to the current folder when it is under it, else as it is."""
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    return relative if not relative.startswith("..") else path


def format_named(doc: dict[str, Any]) -> list[str]:
    """One line per kernel and reason with specializations named, not compiled (doc["named"]): how many,
    the constexprs that tell them apart, and the command that compiles one."""
    by_kernel: dict[tuple, list[dict]] = {}
    for n in doc.get("named") or []:
        by_kernel.setdefault((n["module"], n["name"], n.get("why")), []).append(n)
    out = []
    for (module, name, why), named in by_kernel.items():
        compiled = [k for k in doc["kernels"] if (k.get("module"), k["name"]) == (module, name)]
        names = differing([k.get("constexprs") or {} for k in compiled + named])
        values = "; ".join(filter(None, (shown_values(n["constexprs"], names) for n in named[:6])))
        values += "; ..." if len(named) > 6 and values else ""
        numbers = [n["launch_number"] for n in named]
        contiguous = numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        which = (
            f"N = {numbers[0]} to {numbers[-1]}"
            if contiguous and len(numbers) > 2
            else "N = " + ", ".join(map(str, numbers[:8])) + (", ..." if len(numbers) > 8 else "")
        )
        how = named[0]["how"].rsplit(" ", 1)[0] + " N"
        reached = (
            f"its benchmarks reach {len(named)} more specialization(s), not compiled"
            if why == "sweep"
            else f"{len(named)} more specialization(s) whose autotune config only a GPU's timing picks, "
            f"not compiled"
        )
        which += "; --config C for config C" if why == "timing" else ""
        out.append(
            f"{name}: {reached}{f' ({values})' if values else ''}; to see one: {how} ({which})"
        )
    return out


def _stray_entry(stray) -> dict[str, Any] | None:
    if stray is None:
        return None
    return {
        "kind": stray.kind,
        "file": stray.path,
        "line": stray.line,
        "program": list(stray.program),
        "lanes": stray.lanes,
        "of_lanes": stray.of,
        "where": stray.where,
        "accesses": stray.accesses,
        "home": stray.home,  # the argument the access is of, and its lanes outside that one
        "outside_home": stray.outside_home,
        "text": stray.describe(),
    }


def format_report(doc: dict[str, Any]) -> str:
    """The human-readable report: one block per compilation."""
    out: list[str] = [f"device: {doc['device']}"] if doc.get("device") else []
    out.extend(format_findings(doc))
    for k in doc["kernels"]:
        grid = "×".join(map(str, k["grid"])) if k["grid"] else "unknown"
        gluon = "  Gluon" if k.get("language") == "gluon" else ""
        where = f"{k['file']} {k['cell']}" if k.get("cell") else f"{k['file']}:{k['def_line']}"
        out.append(f"{k['name']}  ({where}){gluon}  target {k['target']}  grid {grid}")
        if k.get("interpreter_error"):
            # a Gluon launch: its coalescing comes from the PTX, where the target's code can be run so
            from_ptx = k.get("language") == "gluon" and not (k.get("coalescing_totals") or {}).get(
                "error"
            )
            out.append(
                f"  interpreter could not run this launch: {k['interpreter_error']} (compiled all the same; "
                + (
                    "coalescing from its PTX; no stepping)"
                    if from_ptx
                    else "no coalescing or stepping for it)"
                )
            )
        if k.get("inputs_released"):
            out.append(
                "  inputs let go: the file had dropped this launch's GPU tensors and its memory ran short, so "
                "irscope holds zeros of the same shapes in their place (stepping and measuring read them)"
            )
        if k.get("programs_interpreted"):
            run, total = k["programs_interpreted"]
            out.append(
                f"  interpreter cut this launch short: {run} of its {total} programs ran, so what it wrote "
                f"is incomplete (the compile and the analyses do not depend on it)"
            )
        if k.get("inductor"):
            out.extend(format_inductor(k["inductor"]))
        if "autotune" in k:
            configs, tried = (
                k["autotune"]["configs"],
                [t["index"] for t in k["autotune"].get("tried", [])],
            )
            others = (
                f" (this launch's autotuner tries {', '.join(map(str, tried))}; --config N shows another)"
                if len(tried) > 1
                else ""
            )
            out.append(
                f"  autotune config {k['autotune']['selected']} of {len(configs)}: "
                f"{configs[k['autotune']['selected']]}{others}"
            )
        params = []
        for name, kind in k["signature"].items():
            if kind == "constexpr":
                params.append(f"{name}={k['constexprs'].get(name)}")
            else:
                spec = k["specialization"].get(name, "")
                params.append(f"{name}: {kind}" + (f" [{spec}]" if spec else ""))
        out.append("  args       " + ", ".join(params))
        if k.get("guesses"):
            out.append(
                "  guessed    "
                + ", ".join(f"{n} = {v}" for n, v in k["guesses"].items())
                + "  (no launch: give -D/--arg, or run the file, for real values)"
            )
        if k["error"]:
            err = k["error"]
            where = (
                f" at line {err['source_line']}: {err['source_text']}" if err["source_line"] else ""
            )
            out.append(f"  COMPILE ERROR{where}")
            out.append(f"    {err['message']}")
            continue
        extra = (k.get("block_warps") or k["num_warps"]) - k["num_warps"]
        warps = (
            f"{k['num_warps']} (+{extra} of warp specialization)" if extra > 0 else k["num_warps"]
        )
        out.append(
            f"  warps {warps}  stages {k['num_stages']}  registers {k['registers']}  "
            f"spills {k['spills']}  shared {k['shared_bytes']} B  local {k['local_bytes']} B"
        )
        absent = [
            stage for stage in IR_STAGES if absent_stage(stage, k.get("language", "triton"))
        ]  # a Gluon kernel's TTIR
        out.append(
            "  IR lines   "
            + "  ".join(f"{s} {v['lines']}" for s, v in k["stages"].items())
            + "".join(f"  (no {s}: {absent_stage(s, k['language'])})" for s in absent)
        )
        out.extend(format_analysis(k))
        out.extend(format_lines(k))
        if k.get("measured"):
            out.extend(format_measured(k["measured"]))
    out.extend(format_named(doc))
    out.extend(format_missing(doc))
    out.append(
        "specialization: D = divisible by 16 (aligned), S = fits 32-bit offsets, "
        "constant = folded into the code"
    )
    return "\n".join(out)
