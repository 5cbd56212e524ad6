"""AMDGCN assembly as LLVM's AMDGPU backend prints it, read once:

    global_load_dwordx4 v[0:3], v[4:5], off      ; comment

An instruction is a lower-case mnemonic (unit, operation, type, encoding joined by `_`) and its operands;
`;` starts a comment, `name:` is a label, `.` starts a directive. Its `.loc` and `.file` lines have PTX's
form and are read by ir/ptx.py.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from irscope.ir.operands import split_operands

_MNEMONIC = re.compile(r"[a-z][a-z0-9_]*")
_LABEL = re.compile(r"[\w.$]+:")
_NAMED = re.compile(r"\w+:")
_NOTABLE = re.compile(r"^(buffer_|global_|ds_|scratch_|v_mfma|s_barrier|\w+_dpp)")
TENSOR_CORE = ("v_mfma_", "v_wmma_", "v_smfmac_")


class Instruction(NamedTuple):
    index: int  # 0-based line in the stage text (-1: read from a lone line)
    opcode: str  # "global_load_dwordx4"
    operand_text: str  # the operands as written, comment left out

    @property
    def operands(self) -> list[str]:
        return split_operands(self.operand_text)

    @property
    def positional_operands(self) -> list[str]:
        """The operands without the named modifiers after them (`offset:16`, `glc`): each one's first word."""
        return [o.split()[0] for o in self.operands if o and not _NAMED.match(o)]


def tokenize(line: str, index: int = -1) -> Instruction | None:
    """The instruction on one line, or None for a blank, comment, label or directive line."""
    code = line.split(";", 1)[0].split("//", 1)[0].strip()
    if not code or code[0] == "." or label(code) is not None:
        return None
    mnemonic, _, rest = code.partition(" ")
    if not _MNEMONIC.fullmatch(mnemonic):
        return None
    return Instruction(index, mnemonic, rest.strip())


def label(code: str) -> str | None:
    """The name of a line that is only a label (`.LBB0_2:`), or None."""
    return code[:-1] if _LABEL.fullmatch(code) else None


def is_notable(opcode: str) -> bool:
    """Memory, synchronization and tensor-core opcodes: what the lowering story names (it counts the rest)."""
    return _NOTABLE.match(opcode) is not None
