"""Plain-words explanations of IR lines, layouts and a source line's path through the compiler.

`explain_line(stage, text, comp=None)` explains one line of any stage; with the Compilation it can resolve
TTGIR layout aliases and read SASS control fields from the cubin. `lowering_story(comp, source_line)`
tells how one source line becomes TTIR, TTGIR, PTX and SASS (or AMDGCN). The facts live in data/, one
module per dialect; this package never imports Textual.
"""

from irscope.ir.explain.common import Explanation
from irscope.ir.explain.engine import explain_line, explain_stage
from irscope.ir.explain.story import lowering_story

__all__ = ["Explanation", "explain_line", "explain_stage", "lowering_story"]
