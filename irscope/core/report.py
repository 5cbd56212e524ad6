"""The summary of compilations that `irscope report` prints, as plain data (stable field names)."""

from __future__ import annotations

from typing import Any

from .analysis.summary import analysis_entry, format_analysis
from .compile import Compilation
from .inductor.report import format_inductor, inductor_entry
from .session import Workspace


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def compilation_entry(ws: Workspace, comp: Compilation) -> dict[str, Any]:
    res = comp.resources
    entry: dict[str, Any] = {
        "name": comp.kernel.name,
        "module": comp.kernel.module,
        "file": ws.shown_path(comp.kernel.file),
        "line": comp.kernel.line,
        "target": comp.target.name,
        "grid": list(comp.launch.grid) if comp.launch.grid else None,
        "launch": comp.launch.origin,
        "signature": dict(comp.signature),
        "specialization": comp.specialization,
        "constexprs": _jsonable(comp.constexprs),
        "num_warps": comp.num_warps,
        "num_stages": comp.num_stages,
        "registers": res.registers,
        "spills": res.spills,
        "local_bytes": res.local_bytes,
        "shared_bytes": res.shared_bytes,
        "stages": {},
        "error": None,
        "interpreter_error": comp.launch.interp_error,
        "guesses": dict(comp.launch.guesses),
    }
    if not comp.target.is_nvidia:
        entry.update(sgprs=res.sgprs, vgpr_spills=res.vgpr_spills, sgpr_spills=res.sgpr_spills)
    if comp.kernel.inductor_info is not None:
        entry["inductor"] = inductor_entry(comp)
    if comp.kernel.is_autotuned:
        entry["autotune"] = {"configs": [str(c) for c in comp.kernel.autotune_configs or []],
                             "selected": comp.launch.autotune_index or 0}
    if comp.failure is not None:
        f = comp.failure
        entry["error"] = {"message": f.message, "file": f.file, "line": f.line, "source_line": f.source_line}
        entry["stages"] = {"source": {"lines": len(comp.source_text.splitlines())}}
        return entry
    sm = comp.source_map
    for name in comp.stage_names:
        entry["stages"][name] = {"lines": len(comp.stage(name).splitlines()),
                                 "instruction_lines": sm.instruction_lines(name),
                                 "mapped_fraction": round(sm.mapped_fraction(name), 4)}
    entry.update(analysis_entry(comp))
    from .analysis.coalescing import report_fields
    entry.update(report_fields(comp))
    if comp.launch.guesses and entry.get("coalescing_totals") is not None:
        entry["coalescing_totals"].setdefault("notes", []).append(
            "addresses from guessed arguments (" + ", ".join(comp.launch.guesses) + "): not a real launch's")
    return entry


def build_report(ws: Workspace, comps: list[Compilation]) -> dict[str, Any]:
    for comp in comps:
        comp.prefetch_sass()  # one nvdisasm per compilation, side by side
    doc: dict[str, Any] = {"kernels": [compilation_entry(ws, c) for c in comps]}
    doc["not_launched"] = [{"name": k.name, "line": k.line} for k in ws.not_launched()]
    if ws.run_warning:
        doc["warning"] = ws.run_warning
    doc["notes"] = list(ws.notes)
    doc["device"] = ws.device
    return doc


def format_report(doc: dict[str, Any]) -> str:
    """The human-readable report: one block per compilation."""
    out: list[str] = [f"device: {doc['device']}"] if doc.get("device") else []
    for k in doc["kernels"]:
        grid = "×".join(map(str, k["grid"])) if k["grid"] else "unknown"
        out.append(f"{k['name']}  ({k['file']}:{k['line']})  target {k['target']}  grid {grid}")
        if k.get("interpreter_error"):
            out.append(f"  interpreter could not run this launch: {k['interpreter_error']} "
                       f"(compiled all the same; no coalescing or stepping for it)")
        if k.get("inductor"):
            out.extend(format_inductor(k["inductor"]))
        if "autotune" in k:
            configs = k["autotune"]["configs"]
            out.append(f"  autotune config {k['autotune']['selected']} of {len(configs)}: "
                       f"{configs[k['autotune']['selected']]}")
        params = []
        for name, kind in k["signature"].items():
            if kind == "constexpr":
                params.append(f"{name}={k['constexprs'].get(name)}")
            else:
                spec = k["specialization"].get(name, "")
                params.append(f"{name}: {kind}" + (f" [{spec}]" if spec else ""))
        out.append("  args       " + ", ".join(params))
        if k.get("guesses"):
            out.append("  guessed    " + ", ".join(f"{n} = {v}" for n, v in k["guesses"].items())
                       + "  (no launch: give -D/--arg, or run the file, for real values)")
        if k["error"]:
            err = k["error"]
            where = f" at line {err['line']}: {err['source_line']}" if err["line"] else ""
            out.append(f"  COMPILE ERROR{where}")
            out.append(f"    {err['message']}")
            continue
        out.append(f"  warps {k['num_warps']}  stages {k['num_stages']}  registers {k['registers']}  "
                   f"spills {k['spills']}  shared {k['shared_bytes']} B  local {k['local_bytes']} B")
        out.append("  IR lines   " + "  ".join(f"{s} {v['lines']}" for s, v in k["stages"].items()))
        out.extend(format_analysis(k))
        from .analysis.coalescing import format_lines
        out.extend(format_lines(k))
    if doc.get("not_launched"):
        names = ", ".join(f"{k['name']} (line {k['line']})" for k in doc["not_launched"])
        out.append(f"not launched by the file: {names}")
    out.append("specialization: D = divisible by 16 (aligned), S = fits 32-bit offsets, "
               "constant = folded into the code")
    return "\n".join(out)
