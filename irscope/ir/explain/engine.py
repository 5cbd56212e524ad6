"""Route a line to its dialect's explainer; build the lowering story of a source line."""

from __future__ import annotations

from irscope.base.compiled import CompiledKernel
from irscope.ir.explain import amdgcn, llvm, mlir, ptx, sass
from irscope.ir.explain.common import Explanation, nothing


def _module_text(comp: CompiledKernel | None, stage: str) -> str | None:
    if comp is None:
        return None
    try:
        return comp.stage(stage)
    except Exception:
        return None


def _controls(comp: CompiledKernel | None) -> dict | None:
    """The cubin's instruction encodings (for SASS control fields): the compilation reads them (a front end's
    view carries what the worker read)."""
    if comp is None or not comp.ok:
        return None
    return comp.sass_controls


def explain_line(stage: str, text: str, comp: CompiledKernel | None = None) -> Explanation:
    """Explain one line of `stage` ("source", "ttir", "ttgir", "llir", "ptx", "sass", "amdgcn")."""
    if stage in ("ttir", "ttgir"):
        return mlir.explain(text, stage, _module_text(comp, stage))
    if stage == "llir":
        amd = comp is not None and not getattr(comp.target, "is_nvidia", True)
        return llvm.explain(text, stage, amd)
    if stage == "ptx":
        return ptx.explain(text, stage)
    if stage == "sass":
        return sass.explain(text, stage, _controls(comp))
    if stage == "amdgcn":
        return amdgcn.explain(text, stage)
    if stage == "source":
        return nothing(
            stage, "Python source", "The kernel as written; the other stages show what it becomes."
        )
    return Explanation(stage, None, f"No notes for {stage} yet", "", known=False)


def explain_stage(stage: str, text: str, comp: CompiledKernel | None = None) -> list[Explanation]:
    """Every line of a stage's text, explained (what the coverage benchmark walks)."""
    return [explain_line(stage, line, comp) for line in text.splitlines()]
