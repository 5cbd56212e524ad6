"""Route a line to its dialect's explainer; build the lowering story of a source line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from irscope.ir.explain import amdgcn, llvm, mlir, ptx, sass
from irscope.ir.explain.common import Explanation, nothing

if TYPE_CHECKING:
    from irscope.engine.compile.compilation import Compilation


def _module_text(comp: "Compilation | None", stage: str) -> str | None:
    if comp is None:
        return None
    try:
        return comp.stage(stage)
    except Exception:
        return None


def _controls(comp: "Compilation | None") -> dict | None:
    """The cubin's instruction encodings (for SASS control fields), once per compilation. A front end's
    view of a compilation carries them (the worker read them), as `sass_controls`."""
    if comp is None or not comp.ok:
        return None
    if hasattr(comp, "sass_controls"):
        return comp.sass_controls
    if "cubin" not in comp.asm:
        return None
    cached = comp.__dict__.get("_irscope_sass_controls")
    if cached is None:
        try:
            from irscope.engine.compile.toolchain import instruction_encodings  # here, not at the top: it imports torch and Triton,
            # which the terminal UI loads only after its first paint
            cached = instruction_encodings(comp.asm["cubin"])
        except Exception:   # nvdisasm missing or failing: explain without control fields
            cached = {}
        comp.__dict__["_irscope_sass_controls"] = cached
    return cached


def explain_line(stage: str, text: str, comp: "Compilation | None" = None) -> Explanation:
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
        return nothing(stage, "Python source", "The kernel as written; the other stages show what it becomes.")
    return Explanation(stage, None, f"No notes for {stage} yet", "", known=False)


def explain_stage(stage: str, text: str, comp: "Compilation | None" = None) -> list[Explanation]:
    """Every line of a stage's text, explained (what the coverage benchmark walks)."""
    return [explain_line(stage, line, comp) for line in text.splitlines()]


