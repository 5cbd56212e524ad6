"""An Inductor kernel's part of `irscope report`: the `inductor` field of each compilation, and its lines."""

from __future__ import annotations

import os
from typing import Any

from irscope.engine.inductor.provenance import CPU_NOTE
from irscope.engine.inductor.ptxas import ptxas_note


def inductor_entry(comp) -> dict[str, Any]:
    """`{aten_ops, source_nodes, kernel_kind, config, ...}` for one compilation of an Inductor kernel."""
    info = dict(comp.kernel.inductor_info or {})
    configs = comp.kernel.autotune_configs or []
    index = comp.launch.autotune_index or 0
    config = configs[index] if index < len(configs) else None
    info["config"] = (
        None
        if config is None
        else {
            "index": index,
            "of": len(configs),
            "kwargs": dict(getattr(config, "kwargs", {})),
            "num_warps": getattr(config, "num_warps", None),
            "num_stages": getattr(config, "num_stages", None),
        }
    )
    info.pop("wrapper_line", None)
    info["ptxas_note"] = ptxas_note(comp.target)
    return info


def format_inductor(info: dict[str, Any]) -> list[str]:
    ops = ", ".join(info.get("aten_ops") or []) or "not written"
    said = {"wrapper": "", "kernel name": " (read from the kernel's name)"}.get(
        info.get("ops_from"), ""
    )
    lines = [f"  inductor   {info.get('kernel_kind')} kernel fusing {ops}{said}"]
    if info.get("source_nodes"):
        lines.append("  nodes      " + ", ".join(info["source_nodes"]))
    if info.get("model_lines"):
        lines.append(
            "  model      "
            + ", ".join(
                f"{os.path.basename(m['file'])}:{m['line']} ({m['node']})"
                for m in info["model_lines"]
            )
        )
    if info.get("generated_for") == "cpu":
        lines.append(f"  NOTE       {CPU_NOTE}")
    return lines
