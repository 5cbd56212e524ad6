"""The main screen's texts outside the panes: the header line, the picker's rows and its word on the
kernels the run did not reach; and the user's file, read for the source pane."""

from __future__ import annotations

import os
from typing import Any

from rich.text import Text

from irscope.base.named_text import differing, shown_values
from irscope.base.textsafe import safe_text


def read_source(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return safe_text(f.read())
    except OSError:
        return None


def header_text(comp, comps: list, ws) -> Text:
    """The kernel, its file and line, target, grid, launch options and resources, in one line (`comps`:
    the file's compilations; `ws`: the opened file, None before it opened)."""
    res = comp.resources
    grid = "×".join(map(str, comp.launch.grid)) if comp.launch.grid else "?"
    head = Text()
    head.append(f" {comp.kernel.name} ", style="bold reverse")
    where = f" {comp.kernel.cell}" if comp.kernel.cell else f":{comp.kernel.line}"
    head.append(f" {os.path.basename(comp.kernel.file)}{where}", style="dim")
    if comp.kernel.inductor:
        head.append(f"  {comp.kernel.inductor_ops}", style="cyan")
        if comp.kernel.generated_for_cpu:
            head.append(
                "  generated for CPU: a GPU run may choose other block sizes", style="yellow"
            )

    def item(label: str, value: Any) -> None:
        head.append("  ")
        head.append(f"{label} ", style="dim")
        head.append(str(value), style="bold")

    item("target", comp.target)
    item("grid", grid)
    if comp.kernel.is_autotuned:
        item(
            "config",
            f"{(comp.launch.autotune_index or 0)}/{len(comp.kernel.autotune_configs or [])}",
        )
    item("warps", comp.num_warps)
    item("stages", comp.num_stages)
    if comp.ok:
        item("regs", res.registers)
        item("spills", res.spills)
        item("smem", f"{res.shared_bytes or 0} B")
    more = len(named_left(ws))
    if len(comps) > 1 or more:
        number = next((n + 1 for n, c in enumerate(comps) if c.key == comp.key), "·")
        named = f", {more} more not compiled" if more else ""
        head.append(f"  ({number}/{len(comps)}{named}; p: pick)", style="dim")
    if ws is not None and ws.device.startswith("virtual"):
        # no GPU here: the file saw irscope's virtual one, and no timing it printed is a measurement
        head.append("  virtual GPU", style="yellow")
    if comp.launch.guesses:
        head.append("  guessed: ", style="bold yellow")
        head.append(
            ", ".join(
                f"{n}={v.split()[1] if v.startswith('a *') else v.split()[0]}"
                for n, v in comp.launch.guesses.items()
            ),
            style="yellow",
        )
    if comp.launch.interp_error:
        # a Gluon launch is not interpreted at all (Triton's interpreter does not run Gluon): nothing failed
        said = "not run (Gluon)" if comp.kernel.language == "gluon" else "interpreter failed"
        head.append(f"  {said}", style="bold yellow")
    if comp.launch.inputs_released:  # the run's note says why: the file's GPU memory
        head.append("  inputs let go: stepping reads zeros", style="bold yellow")
    if comp.launch.out_of_bounds:  # the finding says where and how far
        head.append("  out-of-bounds access", style="bold red")
    if ws is not None and ws.missing:  # said whole in the picker (p) and the notes
        head.append(f"  {len(ws.missing)} kernel(s) not reached (p)", style="bold yellow")
    return head


def missing_lines(missing: list[dict]) -> Text:
    """The picker's word on the file's kernels this run did not launch: each with why and how to see it."""
    text = Text()
    if any(
        m.get("file") for m in missing
    ):  # `-m MODULE`: the launched kernels' modules, file by file
        by_file: dict[str, list[dict]] = {}
        for m in missing:
            by_file.setdefault(m.get("file") or "", []).append(m)
        for path, ms in by_file.items():
            text.append(f"not reached in {safe_text(path)}: ", style="bold yellow")
            names = ", ".join(f"{m['kernel']} (line {m['line']})" for m in ms)
            text.append(f"{safe_text(names)}\n", style="yellow")
        text.append(
            f"  {safe_text(missing[0]['reason'])}; {safe_text(missing[0]['how'])}", style="dim"
        )
        return text
    for m in missing:
        text.append(f"not reached: {m['kernel']} (line {m['line']})", style="bold yellow")
        text.append(f": {safe_text(m['reason'])}\n", style="yellow")
        text.append(f"  to see it: {m['how']}\n", style="dim")
    text.rstrip()
    return text


def named_left(ws) -> list[dict]:
    """The specializations named, not compiled yet (WorkspaceInfo.named): a benchmark's later sizes, configs
    only a GPU's timing picks."""
    return [n for n in getattr(ws, "named", None) or [] if not n.get("compiled")]


def picker_rows(comps: list, named: list[dict] = (), target: str = "") -> list[dict[str, Any]]:
    """The picker's rows: name, line, target, grid, warps, registers, spills, the constexprs that differ
    between a kernel's rows (tutorial 02's softmax: BLOCK_SIZE), specialization; then the specializations
    in `named` (named_left: named, not compiled), each with the `named` dict it
    comes from, for `target` (where it will compile)."""
    groups: dict[tuple, list[dict]] = {}
    for comp in comps:
        groups.setdefault((comp.kernel.name, comp.kernel.line), []).append(
            dict(comp.constexprs or {})
        )
    for n in named:
        groups.setdefault((n["name"], n["line"]), []).append(n["constexprs"])
    differ = {key: differing(values) for key, values in groups.items()}

    def constexprs(name: str, line: int, values: dict) -> str:
        return shown_values(values, differ.get((name, line), []), groups[(name, line)]) or "—"

    rows = []
    for comp in comps:
        try:
            res = comp.resources if comp.ok else None
        except Exception:  # cuobjdump failed: the row shows no registers rather than the app dying
            res = None
        spec = (
            " ".join(f"{k}:{v}" for k, v in comp.specialization.items() if v)
            if comp.ok
            else "compile error"
        )
        name = comp.label
        if comp.kernel.inductor:  # the ops it fuses, and where Inductor made it for the CPU
            name += f"  [{comp.kernel.inductor_ops}]" + (
                "  (CPU-generated)" if comp.kernel.generated_for_cpu else ""
            )
        rows.append(
            {
                "name": name,
                "line": comp.kernel.line,
                "target": str(comp.target),
                "grid": "×".join(map(str, comp.launch.grid)) if comp.launch.grid else "?",
                "warps": comp.num_warps,
                "regs": res.registers if res else "—",
                "spills": res.spills if res else "—",
                "spec": spec or "—",
                "constexprs": constexprs(
                    comp.kernel.name, comp.kernel.line, dict(comp.constexprs or {})
                ),
            }
        )
    for n in named:
        spec = " ".join(f"{k}:{v}" for k, v in n["spec"].items() if v)
        rows.append(
            {
                "name": n["label"],
                "line": n["line"],
                "target": target,
                "grid": "×".join(map(str, n["grid"])) if n["grid"] else "?",
                "warps": n["warps"],
                "regs": "—",
                "spills": "—",
                "spec": spec or "—",
                "constexprs": constexprs(n["name"], n["line"], n["constexprs"]),
                "named": n,
            }
        )
    return rows
