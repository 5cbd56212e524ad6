"""One reading of each IR dialect: the text of a stage is cut into instructions here, and only here.

Every consumer (the source map in stages/, the memory analysis, the explainer, the diff, measured
mode's per-line mapping, the findings) takes its instructions from these tokenizers instead of matching
instruction text with its own regular expressions (tests/test_one_reading.py holds that line):

- `ptx.py`: PTX instructions (guard, opcode, modifiers, operands) and its `.loc` / `.file` debug lines,
  which AMDGCN writes in the same form.
- `sass.py`: SASS as nvdisasm prints it (address, guard, opcode, modifiers, operands) and the
  `//## File` line-table comments.
- `operands.py`: the top-level comma split every dialect's operand list goes through.
- `normal.py`: an instruction with what does not change its meaning blanked (the diff compares these).

The pygments lexers in core/lexers.py are a different thing: they colour text for display, token by
token, and decide nothing.
"""

from .operands import split_operands

__all__ = ["split_operands"]
