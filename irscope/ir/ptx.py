"""PTX as LLVM's NVPTX backend prints it, read once: instructions and the debug lines.

    @%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd5 + 0 ];
    .loc 1 26 18                   // kernel.py:26:18 @[ standard.py:40:11 ]
    .file 1 "/path/kernel.py"

An instruction is an optional guard (`@%p1`, `@!%p1`), the opcode with its dot-separated modifiers, and
the operands up to the `;`. A `.loc` is file, line, column and, in newer LLVM, `inlined_at f l c`; older
LLVM writes the inlining only in the comment after it, as `@[ file:line:col ]` frames. AMDGCN writes its
`.loc` and `.file` lines in the same form, so stages/amdgcn.py reads them here too.
"""

from __future__ import annotations

import functools
import re
import struct
from typing import NamedTuple

from irscope.ir.operands import opcode_modifiers, operand_list

_BODY = re.compile(r"(?:@(!?)(\S+)\s+)?(\S*)\s*(.*)$")
_LABEL = re.compile(r"^\s*[$\w.]+:")
_WHOLE_LABEL = re.compile(r"^([$\w.]+):\s*$")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,?\s*"([^"]*)")?', re.MULTILINE)
_LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*?inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")
_COMMENT_FRAME = re.compile(r"@\[\s*([^\s:@\[\]]+):(\d+):(\d+)")
_MEMORY = re.compile(
    r"\b(?:(ld|st)\.(?:global|shared)|(atom|red|cp\.async|ldmatrix|stmatrix|st\.async)\.)"
)
_NOTABLE = re.compile(
    r"^(ld\.(?!param)|st\.|cp\.async|atom|red\.|bar\.|barrier|shfl|wgmma|mma|tcgen05\.(mma|ld|st)"
    r"|ldmatrix|stmatrix|redux)"
)
_VECTOR = re.compile(r"v(\d+)")
_MATRIX_COUNT = re.compile(r"x(\d)")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_FLOAT = re.compile(r"0([fd])([0-9A-Fa-f]{8}|[0-9A-Fa-f]{16})")

TENSOR_CORE = ("wgmma.", "mma.", "tcgen05.mma.")  # opcodes run on the tensor cores
Position = tuple[int, int, int]  # `.file` number, line, column


class Instruction(NamedTuple):
    index: int  # 0-based line in the stage text (-1: read from a lone line)
    guard: str | None  # the guarding predicate register, "%p1" (without `@` and `!`)
    negated: bool  # `@!%p1`
    opcode: str  # with modifiers: "ld.global.v4.b32"
    operand_text: str  # the operands as written, up to the `;`
    complete: bool  # the line has the `;` that ends a statement
    base: str  # the opcode without its modifiers: "ld"

    @property
    def predicate(self) -> str | None:
        """The guard as one word: "%p1", "!%p1", or None."""
        return None if self.guard is None else ("!" if self.negated else "") + self.guard

    modifiers = property(opcode_modifiers)
    operands = property(operand_list)

    @property
    def kind(self) -> str:
        """load, store, atomic (the memory instructions), branch, barrier or compute."""
        base = self.base
        if base in ("ld", "ldu", "ldmatrix") or self.opcode.startswith("cp.async"):
            return "load"
        if base in ("st", "stmatrix"):
            return "store"
        if base in ("atom", "red"):
            return "atomic"
        if base in ("bra", "brx", "call", "ret", "exit"):
            return "branch"
        return "barrier" if base in ("bar", "barrier", "membar", "fence") else "compute"


def tokenize(line: str, index: int = -1) -> Instruction | None:
    """The instruction on one line, or None for a blank, comment, label or directive line. Braces and
    parentheses of multi-line statements are not filtered out here (callers that care check them)."""
    code = line.split("//", 1)[0].strip()
    if not code or code[0] == "." or code[-1] == ":" and label(code) is not None:
        return None
    found = _BODY.match(code)
    negated, guard, opcode, rest = (
        found.group(1) == "!",
        found.group(2),
        found.group(3),
        found.group(4),
    )
    opcode = opcode.rstrip(";")
    return Instruction(
        index,
        guard,
        negated if guard else False,
        opcode,
        rest.split(";", 1)[0].strip(),
        ";" in code,
        opcode.split(".", 1)[0],
    )


@functools.lru_cache(maxsize=8)
def instructions(text: str) -> tuple[Instruction, ...]:
    """Every instruction of a stage, in order. The last few stages' are kept: several analyses read one text."""
    out = []
    for index, line in enumerate(text.splitlines()):
        head = line.lstrip()[:1]
        # directives, `.loc`s and comments: a third of a PTX text or more
        if head and head not in "./":
            found = tokenize(line, index)
            if found is not None:
                out.append(found)
    return tuple(out)


def label(code: str) -> str | None:
    """The name of a line that is only a label (`$L__BB0_2:`), or None."""
    found = _WHOLE_LABEL.match(code)
    return found.group(1) if found else None


def starts_with_label(line: str) -> bool:
    """`name:` at the start of the line (a label, perhaps with a statement after it)."""
    return _LABEL.match(line) is not None


def vector_count(modifier: str) -> int | None:
    """`v4` -> 4; None for any other modifier."""
    found = _VECTOR.fullmatch(modifier)
    return int(found.group(1)) if found else None


def matrix_count(modifier: str) -> int | None:
    """ldmatrix / stmatrix's `x4` -> 4; None for any other modifier."""
    found = _MATRIX_COUNT.fullmatch(modifier)
    return int(found.group(1)) if found else None


def float_bits(operand: str) -> float | None:
    """PTX writes float constants as their bits: `0f3F000000` -> 0.5 (`0d` + 16 digits: a double)."""
    found = _FLOAT.fullmatch(operand)
    if not found:
        return None
    return struct.unpack(">f" if found.group(1) == "f" else ">d", bytes.fromhex(found.group(2)))[0]


def code_only(text: str) -> str:
    """A PTX text with its comments and debug lines (`.loc`, `.file`, DWARF bytes) blanked, for reading it
    statement by statement: those lines carry no `;` and would swallow the next statement."""
    text = _BLOCK_COMMENT.sub(" ", text)
    lines = []
    for raw in text.splitlines():
        line = raw.split("//", 1)[0]
        if line.strip().startswith((".loc", ".file", "@@DWARF")):
            line = ""
        lines.append(line)
    return "\n".join(lines)


# ---- debug lines -----------------------------------------------------------------------------------


def file_table(text: str) -> dict[int, str]:
    """`.file N "path"` and `.file N "dir" "name"` (LLVM's two-string form) -> {N: path}."""
    table = {}
    for m in _FILE.finditer(text):
        path = m.group(2)
        if m.group(3):
            path = f"{path}/{m.group(3)}" if path else m.group(3)
        table[int(m.group(1))] = path
    return table


def read_loc(line: str) -> tuple[Position, Position | None] | None:
    """A `.loc` line (leading spaces stripped) -> (its position, the `inlined_at` position or None)."""
    m = _LOC.match(line)
    if m is None:
        return None
    inlined = (int(m.group(4)), int(m.group(5)), int(m.group(6))) if m.group(4) else None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))), inlined


def comment_frames(comment: str) -> list[tuple[str, int, int]]:
    """The `@[ base.py:3:4 @[ k.py:9:1 ] ]` frames of a `.loc`'s comment, innermost first: (base name,
    line, column)."""
    return [(base, int(line), int(col)) for base, line, col in _COMMENT_FRAME.findall(comment)]


def memory_stem(code: str) -> str | None:
    """The stem of a global/shared memory instruction on the line ("ld", "st", "atom", "red", "cp.async",
    "ldmatrix", "stmatrix", "st.async"), or None."""
    found = _MEMORY.search(code)
    return (found.group(1) or found.group(2)) if found else None


def memory_direction(op: str) -> str:
    """'load', 'store' or 'atomic' for a PTX memory opcode stem (or a SASS opcode)."""
    op = op.lower()
    if op.startswith(("atom", "red")):
        return "atomic"
    if op.startswith(("st", "utmast")):
        return "store"
    return "load"


def is_notable(opcode: str) -> bool:
    """Memory, synchronization and tensor-core opcodes: what the lowering story names (it counts the rest)."""
    return _NOTABLE.match(opcode) is not None
