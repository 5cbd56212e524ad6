"""The worker's half of the TUI's diff mode and pipeline view: the core's diff (engine/diff/sides.py,
engine/diff/summary.py) and pass capture (engine/compile/passes.py) on compilations the worker holds.

A side of a diff is a view. When the worker still holds the compilation behind it (the same key, the
same kernel, source and specialization), the full analyses run on the real one. The compilation shown
before a reload lives only as its view (its worker ended with the reload): its stage texts, resources
and memory accesses are read from the view; sectors per request need its launch's tensors, and are said
to be missing."""

from __future__ import annotations

from typing import Any

from irscope.base.errors import IrscopeError
from irscope.engine.compile.passes import capture_passes
from irscope.engine.diff.sides import SideSpec, compile_side, line_rows
from irscope.engine.diff.summary import access_rows, changes, side_entry
from irscope.engine.triton_compat.layouts import linear_layouts_by_line
from irscope.findings import findings
from irscope.findings.model import Finding
from irscope.worker.views import CompilationView

BEFORE_RELOAD = "not interpreted: this compilation is from before the reload (its launch is gone)"


def _held(server, view) -> Any | None:
    """The real compilation behind `view`, when this worker made it."""
    comp = server.comps.get(view.key)
    if comp is None:
        return None
    same = (
        comp.kernel.name == view.kernel.name
        and comp.source_text == view.source_text
        and dict(comp.specialization) == view.specialization
        and comp.target == view.target
        and comp.num_warps == view.num_warps
        and comp.num_stages == view.num_stages
    )
    return comp if same else None


def _side(server, view, label: str) -> tuple[Any, dict[str, Any]]:
    """(what to read stage texts from, the side's summary entry): cached per compilation key."""

    cache = server.__dict__.setdefault("_diff_sides", {})
    comp = _held(server, view)
    if comp is not None:
        if view.key not in cache:
            cache[view.key] = side_entry(comp, label)
        return comp, {**cache[view.key], "spec": label}
    return view, side_entry(BeforeReload(view), label, interpreted=BEFORE_RELOAD)


class BeforeReload:
    """A front end's view of a compilation from before a reload, as the analyses of a diff side read it: its
    texts are all there, its launch is gone (no argument values, no recorded program, no recompile); Triton's
    own layouts come from its TTGIR, which this worker can still parse."""

    def __init__(self, view: CompilationView) -> None:
        self._view = view

    def __getattr__(self, name: str) -> Any:
        return getattr(self._view, name)

    @property
    def param_names(self) -> list[str]:
        return list(self._view.signature)

    def launch_values(self, launch: Any = None) -> dict[str, Any]:
        return {}

    def runtime_values(self, launch: Any = None) -> list[Any]:
        return []

    def triton_layouts(self) -> dict[int, Any]:
        return linear_layouts_by_line(self._view.stage("ttgir"))

    def record_program(self, *args: Any, **kwargs: Any) -> Any:
        raise IrscopeError(BEFORE_RELOAD)

    def recompiled(self, **kwargs: Any) -> Any:
        raise IrscopeError(BEFORE_RELOAD)


def _finding_keys(items) -> dict[tuple, Any]:
    return {(f.rule, f.source_line): f for f in items or []}


def findings_change(left: list | None, right: list | None) -> dict[str, Any]:
    """Findings only on the right (added) and only on the left (removed), matched by rule and source line."""
    if left is None or right is None:
        return {"known": False, "added": [], "removed": []}
    a, b = _finding_keys(left), _finding_keys(right)
    return {
        "known": True,
        "added": [_plain(b[k]) for k in b if k not in a],
        "removed": [_plain(a[k]) for k in a if k not in b],
    }


def _plain(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity,
        "source_line": f.source_line,
        "message": f.message,
    }


def diff_doc(server, sides: list[dict[str, Any]], stage: str | None) -> dict[str, Any]:
    """The diff of two sides (`{"view", "label", "findings"}`) as `irscope diff --json` writes it, plus
    the findings added and removed."""

    got = [_side(server, s["view"], s["label"]) for s in sides]
    comps, entries = [g[0] for g in got], [g[1] for g in got]
    found = []
    for comp, side in zip(comps, sides):
        if comp is not side["view"]:
            found.append(findings(comp))
        else:
            found.append(side.get("findings"))
    ok = all(c.ok for c in comps)
    doc: dict[str, Any] = {
        "left": entries[0],
        "right": entries[1],
        "changes": changes(*entries),
        "accesses": access_rows(*entries) if ok else [],
        "stage": None,
        "lines": [],
        "findings": findings_change(*found),
    }
    if ok:
        stage = stage or ("ptx" if comps[0].target.is_nvidia else "amdgcn")
        shared = [s for s in comps[0].stage_names if s in comps[1].stage_names and s != "source"]
        if stage not in shared:
            raise IrscopeError(
                f"{stage} does not exist for both sides ({comps[0].target}, {comps[1].target}); "
                f"choose one of {', '.join(shared)}"
            )
        doc["stage"], doc["stages"] = stage, shared
        doc["lines"] = line_rows(comps[0], comps[1], stage)
    return doc


def compile_spec(server, key: int, text: str):
    """A side typed as `irscope diff` takes it (`launch=1,target=sm_80,BLOCK_SIZE=512`), for the kernel of
    compilation `key`; the target defaults to that compilation's, not the one the file was opened for."""

    comp = server.comps[key]
    spec = SideSpec.parse(text, "side")
    if spec.target is None:
        spec.target = comp.target.name
    return compile_side(server.ws, comp.kernel, spec, "side")


def pass_list(comp) -> list[dict[str, Any]]:
    """Every pass of one compilation with what it changed; the IR texts stay here (megabytes for a matmul)."""

    return [
        {**step.to_json(), "diff": list(step.diff), "dumped_before": step.before is not None}
        for step in capture_passes(comp)
    ]
