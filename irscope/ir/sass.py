"""SASS as nvdisasm prints it, read once:

    //## File "/path/kernel.py", line 27 inlined at "/path/other.py", line 9
            /*0040*/              @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;

An instruction line is its address, an optional guard predicate, the opcode with its dot-separated
modifiers, and the operands up to the `;`. The `//## File` comments are the line table (stages/sass.py
turns them into source locations).
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from irscope.ir.operands import opcode_modifiers, operand_list

_ADDRESS = re.compile(r"\s*/\*([0-9a-fA-F]+)\*/")
_BODY = re.compile(r"(?:@(!?U?P[T0-9]+)\s+)?([A-Z][A-Za-z0-9_.]*)\s*(.*)$")
_ROW = re.compile(r'//## File "([^"]*)", line (\d+)(?: inlined at "([^"]*)", line (\d+))?')
_LABEL = re.compile(r"^\s*[.$\w]+:")
_WHOLE_LABEL = re.compile(r"([\w.$]+):")
_BRACKETED = re.compile(r"\[([^\]]+)\]")
_PREDICATE = re.compile(r"^!?U?P(T|\d)$")
_REGISTER = re.compile(r"(U?R)(\d+)")
_NOTABLE = re.compile(
    r"^(LDG|STG|LDS|STS|LDL|STL|LDGSTS|ATOM|RED|BAR|SHFL|HGMMA|HMMA|UTCHMMA|LDSM|STSM|LDTM|STTM"
    r"|CREDUX|REDUX)"
)
_HEX_LINE = re.compile(
    r"/\*([0-9a-f]{4,})\*/[^\n]*?/\*\s*0x([0-9a-f]{16})\s*\*/\s*\n\s*/\*\s*0x([0-9a-f]{16})\s*\*/"
)
_TARGET = re.compile(r"`\(\.L_x_\d+\)|0x[0-9a-f]{9,}")

LOAD, STORE, ATOMIC = "load", "store", "atomic"

# opcode -> (what it does to memory, which memory)
MEMORY = {
    "LDG": (LOAD, "global"),
    "STG": (STORE, "global"),
    "LDS": (LOAD, "shared"),
    "STS": (STORE, "shared"),
    "LDL": (LOAD, "local"),
    "STL": (STORE, "local"),
    "LD": (LOAD, "generic"),
    "ST": (STORE, "generic"),
    "LDSM": (LOAD, "shared"),
    "STSM": (STORE, "shared"),
    "LDGSTS": (LOAD, "global"),
    "ATOMG": (ATOMIC, "global"),
    "ATOMS": (ATOMIC, "shared"),
    "ATOM": (ATOMIC, "generic"),
    "RED": (ATOMIC, "global"),
    "REDG": (ATOMIC, "global"),
    "LDTM": (LOAD, "tensor"),
    "STTM": (STORE, "tensor"),
}

# opcodes that move data between registers and global or shared memory, bulk and TMA copies included:
# what the source map pairs with the PTX's memory instructions
GLOBAL_OR_SHARED = frozenset(
    (
        "LDG",
        "STG",
        "LD",
        "ST",
        "ATOM",
        "ATOMG",
        "RED",
        "LDS",
        "STS",
        "LDSM",
        "STSM",
        "LDGSTS",
        "ATOMS",
        "UBLKCP",
        "UTMALDG",
        "UTMASTG",
        "REDG",
    )
)
_BRANCHES = frozenset(
    ("BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "WARPSYNC", "BREAK")
)


class Instruction(NamedTuple):
    index: int  # 0-based line in the stage text (-1: read from a lone line)
    offset: int  # the address nvdisasm prints, `/*0040*/`
    text: str  # guard, opcode and operands as written, without the `;`
    guard: str | None  # "P0", "!P0", "UPT" ... (without the `@`)
    opcode: str  # with modifiers: "LDG.E.128"; "" for an address with no instruction
    operand_text: str  # everything after the opcode
    base: str  # the opcode without its modifiers: "LDG"

    modifiers = property(opcode_modifiers)
    operands = property(operand_list)

    @property
    def memory(self) -> tuple[str, str] | None:
        """(load | store | atomic, global | shared | local | generic | tensor), or None."""
        return MEMORY.get(self.base)

    @property
    def kind(self) -> str:
        """load, store, atomic, branch, barrier or compute."""
        access = MEMORY.get(self.base)
        if access:
            return access[0]
        if self.base in _BRANCHES:
            return "branch"
        return "barrier" if self.base in ("BAR", "MEMBAR", "DEPBAR", "SYNCS") else "compute"


def tokenize(line: str, index: int = -1) -> Instruction | None:
    """The instruction on one line of a listing, or None for any other line."""
    found = _ADDRESS.match(line)
    if found is None:
        return None
    text = line[found.end() :]
    comment = text.find("/*")  # `/* 0x... */` after the `;` in a -hex listing
    if comment >= 0:
        text = text[:comment]
    return tokenize_text(text, index, int(found.group(1), 16))


def tokenize_text(text: str, index: int = -1, address: int = -1) -> Instruction:
    """One instruction's text without its address (as Nsight Compute lists it): guard, opcode, operands."""
    text = text.strip()
    if text.endswith(";"):
        text = text[:-1].rstrip()
    body = _BODY.match(text)
    guard, opcode, rest = (
        (body.group(1), body.group(2), body.group(3)) if body else (None, "", text)
    )
    return Instruction(index, address, text, guard, opcode, rest, opcode.split(".", 1)[0])


@functools.lru_cache(maxsize=8)
def instructions(text: str) -> tuple[Instruction, ...]:
    """Every instruction of a listing, in order. The last few listings' are kept: the source map, the memory
    analysis and measured mode read the same text."""
    out = []
    for index, line in enumerate(text.splitlines()):
        if "/*" in line:
            found = tokenize(line, index)
            if found is not None:
                out.append(found)
    return tuple(out)


def is_instruction(line: str) -> bool:
    return _ADDRESS.match(line) is not None


def is_label(line: str) -> bool:
    return _LABEL.match(line) is not None


def label(line: str) -> str | None:
    """The name of a label line (`.L_x_1:`, stripped), or None."""
    found = _WHOLE_LABEL.fullmatch(line)
    return found.group(1) if found else None


def address_of(operand: str) -> str:
    """The last bracketed part of a memory operand (`desc[UR4][R2.64]` -> `R2.64`), or the operand."""
    inner = _BRACKETED.findall(operand)
    return inner[-1] if inner else operand


def is_predicate(operand: str) -> bool:
    """`P0`, `!P3`, `UPT` ...: a predicate register as an operand."""
    return _PREDICATE.match(operand) is not None


def register_range(first: str, count: int) -> str:
    """`R4` and 4 registers -> `R4..R7` (a vector access names only its first register)."""
    found = _REGISTER.fullmatch(first)
    if found and count > 1:
        return f"{first}..{found.group(1)}{int(found.group(2)) + count - 1}"
    return first


def line_table_row(comment: str) -> tuple[tuple[str, int], tuple[str, int] | None] | None:
    """`//## File "a.py", line 3 inlined at "b.py", line 9` -> (("a.py", 3), ("b.py", 9))."""
    found = _ROW.search(comment)
    if found is None:
        return None
    outer = (found.group(3), int(found.group(4))) if found.group(3) is not None else None
    return (found.group(1), int(found.group(2))), outer


def comparable(text: str) -> tuple[str, tuple[str, ...]]:
    """An instruction as (guard and opcode, its operands as a sorted tuple), so that nvdisasm's and Nsight
    Compute's listings of one binary compare equal: ncu leaves out the register-reuse hints (`R0.reuse`),
    names a branch target by its absolute address where nvdisasm names a label, and orders some operands
    otherwise (LDGSTS's shared address first in nvdisasm, last in ncu)."""
    text = _TARGET.sub("@target", text.rstrip(" ;").replace(".reuse", ""))
    words = text.split()
    head = words[:2] if words and words[0].startswith("@") else words[:1]
    operands = " ".join(words[len(head) :])
    return " ".join(head), tuple(sorted(o.strip() for o in operands.split(",") if o.strip()))


def encodings(listing: str) -> dict[int, tuple[int, int]]:
    """`nvdisasm -hex` prints each instruction's 128-bit encoding as two 64-bit words in comments, the low one
    after the instruction and the high one on the next line: offset -> (low word, high word)."""
    out: dict[int, tuple[int, int]] = {}
    for m in _HEX_LINE.finditer(listing):
        out.setdefault(int(m.group(1), 16), (int(m.group(2), 16), int(m.group(3), 16)))
    return out


def is_notable(opcode: str) -> bool:
    """Memory, synchronization and tensor-core opcodes: what the lowering story names (it counts the rest)."""
    return _NOTABLE.match(opcode) is not None
