"""SASS text whose `//## File` rows name the lines irscope's source map gives each instruction.

nvdisasm prints the cubin's line table as it is, and that table can be wrong: ptxas saw the shifted
`.loc` lines of Triton's inline asm blocks (stages/ptx.py), so on add.py the LDG loads sit under rows
naming the blank lines after the kernel. The source map repairs them from the PTX (sass_line_repairs.py:
`undo_asm_line_shift`, `restore_inlining_from_ptx`); `irscope dump --stage sass` prints the repaired
rows so that its text says what `--annotate`, the report and the TUI say. The format stays nvdisasm's
(innermost frame first, one row per inlining level), so irscope reads its own output back the same.
"""

from __future__ import annotations

from irscope.base.compiled import CompiledKernel
from irscope.ir.line_types import LineKind


def sass_with_repaired_rows(comp: CompiledKernel) -> str:
    """The compilation's SASS with nvdisasm's `//## File` rows replaced by the source map's chains."""
    text = comp.stage("sass")
    sm = comp.source_map
    sm.lines("sass")  # runs the repairs, which rewrite the parsed chains in place
    parsed = sm.parsed("sass")
    out: list[str] = []
    last = None
    for line, kind, chain in zip(text.splitlines(), parsed.kinds, parsed.chains):
        if kind is LineKind.DEBUG:
            continue  # nvdisasm's row: written again below, from the repaired chain
        if kind is LineKind.INSTRUCTION and chain and chain != last:
            out.extend(rows(chain))
            last = chain
        out.append(line)
    return "\n".join(out) + "\n"


def rows(chain) -> list[str]:
    """nvdisasm's rows for one chain of frames (innermost first)."""
    out = []
    for inner, outer in zip(chain, chain[1:]):
        out.append(
            f'\t//## File "{inner.file}", line {inner.line} inlined at "{outer.file}", line {outer.line}'
        )
    out.append(f'\t//## File "{chain[-1].file}", line {chain[-1].line}')
    return out
