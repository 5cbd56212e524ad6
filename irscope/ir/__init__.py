"""One reading of each IR dialect: the text of a stage is cut into instructions here, and only here.

Every consumer (the source map in stages/, the memory analysis, the explainer, the diff, measured
mode's per-line mapping, the findings) takes its instructions from these tokenizers instead of matching
instruction text with its own regular expressions (tests/unit/test_ir_one_reading_per_dialect.py holds that line):

- `mlir.py`: TTIR / TTGIR operations (results, `dialect.op`, rest) and their `loc(...)` locations.
- `llvm.py`: LLVM IR instructions, labels, inline assembly, `!dbg` and debug metadata.
- `ptx.py`: PTX instructions (guard, opcode, modifiers, operands, kind) and its `.loc` / `.file` debug
  lines, which AMDGCN writes in the same form.
- `sass.py`: SASS as nvdisasm prints it (address, guard, opcode, modifiers, operands, memory kind), the
  `//## File` line-table comments, `-hex` encodings, and the nvdisasm/Nsight Compute comparison.
- `amdgcn.py`: AMDGCN instructions (mnemonic, operands).
- `operands.py`: the top-level comma split operand lists go through.
- `normal.py`: an instruction with what does not change its meaning blanked (the diff compares these).

Instruction lists of whole texts are cached for the last few texts (`ptx.instructions`,
`sass.instructions`): the source map, the memory analysis and measured mode read the same stage.

The pygments lexers in ir/lexers.py are a different thing: they colour text for display, token by
token, and decide nothing.
"""

from irscope.ir.operands import split_operands

__all__ = ["split_operands"]
