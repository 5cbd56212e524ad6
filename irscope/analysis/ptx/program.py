"""A PTX kernel as a list of instructions that a machine can step through: ptx_exec.py runs it per thread.

The text is cut into statements the way ptxas reads it (`;` ends one, a `{` that opens no operand list
opens a block, `name:` is a label), not line by line, so that inline-asm blocks Triton writes on one line
or over several come out the same. Registers and labels declared inside a block (`{ .reg .pred p;
wait: ... @!p bra wait; }`) are renamed with the block's number: two blocks may both declare `p` and
`wait`. Each instruction keeps the 0-based index of the line it starts on, which is what the rest of
irscope calls a PTX line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from irscope.ir import ptx as ir_ptx
from irscope.ir.operands import split_operands

_LABEL = re.compile(r"\s*([$\w.]+)\s*:(?!:)")
_REG_DECL = re.compile(r"^\.reg\s+(?:\.v\d\s+)?\.\w+\s+(.+)$")
_RANGE = re.compile(r"^([%\w$]+)<(\d+)>$")
_NAME = re.compile(r"[%$A-Za-z_][\w$.]*")
_NO_DEST = (
    "bra",
    "call",
    "st",
    "stmatrix",
    "red",
    "cp",
    "bar",
    "barrier",
    "fence",
    "membar",
    "prefetch",
    "trap",
    "griddepcontrol",
    "setmaxnreg",
    "tcgen05",
    "ret",
    "exit",
    "wgmma",
)
REGISTER = re.compile(r"%[\w$@.]+")


@dataclass
class Instr:
    line: int  # 0-based index of the PTX line the instruction starts on
    opcode: str  # as written: "ld.shared.v4.b32"
    operands: list[str]  # each as written, block-local names renamed
    guard: str | None = None  # predicate register guarding it
    negated: bool = False  # `@!%p`

    @property
    def parts(self) -> list[str]:
        return self.opcode.split(".")


@dataclass
class Program:
    name: str
    params: list[str]  # .param names, in order
    instrs: list[Instr]
    labels: dict[str, int]  # label -> index in instrs of the instruction after it
    threads: int | None = None  # .reqntid / .maxntid (x * y * z)
    shared_symbols: list[str] = field(default_factory=list)  # module-level .shared variables
    # their `.align` (bytes; 1 when none)
    shared_align: dict[str, int] = field(default_factory=dict)


def _statements(body: str, first_line: int):
    """(line, block path, labels, text) per statement of a function body (the text inside its braces);
    `line` is where the statement's own text starts, after its labels."""
    line = first_line
    begun = first_line  # the line `current` began on
    current: list[str] = []
    depth = 0  # braces inside a statement ({a, b} operand lists)
    blocks = [0]
    next_block = 1

    def emit():
        text = "".join(current)
        labels, rest, consumed = _take_labels(text)
        lead = len(text[consumed:]) - len(text[consumed:].lstrip())
        return begun + text[: consumed + lead].count("\n"), tuple(blocks), labels, rest

    for ch in body:
        if ch == "{" and depth == 0 and not _take_labels("".join(current))[1]:
            statement = emit()
            if statement[2]:
                yield statement
            current = []
            blocks.append(next_block)
            next_block += 1
        elif ch == "}" and depth == 0:
            if "".join(current).strip():
                yield emit()
            current = []
            if len(blocks) > 1:
                blocks.pop()
        elif ch == ";" and depth == 0:
            yield emit()
            current = []
        else:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if not current:
                begun = line
            current.append(ch)
        if ch == "\n":
            line += 1
    if "".join(current).strip():
        yield emit()


def _take_labels(text: str) -> tuple[list[str], str, int]:
    """The labels a statement starts with, the rest, and how many characters the labels took."""
    labels, consumed = [], 0
    while True:
        m = _LABEL.match(text, consumed)
        if m is None or m.group(1).startswith("."):
            return labels, text[consumed:].strip(), consumed
        labels.append(m.group(1))
        consumed = m.end()


def parse_program(ptx: str, kernel: str | None = None) -> Program:
    """The first `.entry` (or the one named `kernel`) of a PTX module."""
    clean = ir_ptx.code_only(ptx)
    entries = list(re.finditer(r"\.entry\s+([\w$]+)\s*\(", clean))
    if not entries:
        raise ValueError("no .entry in the PTX")
    entry = next((e for e in entries if e.group(1) == kernel), entries[0])
    close = clean.index(")", entry.end())
    params = re.findall(
        r"\.param\s+[^,)]*?([\w$]+)\s*(?:\[\d+\])?\s*(?=[,)])", clean[entry.end() : close + 1]
    )
    open_brace = clean.index("{", close)
    header = clean[close:open_brace]
    threads = None
    m = re.search(r"\.(?:reqntid|maxntid)\s+([\d\s,]+)", header)
    if m:
        threads = 1
        for n in m.group(1).replace(",", " ").split():
            threads *= int(n)
    depth, end = 0, len(clean)
    for i in range(open_brace, len(clean)):
        if clean[i] == "{":
            depth += 1
        elif clean[i] == "}":
            depth -= 1
            if depth == 0:
                end = i
                break
    first_line = clean.count("\n", 0, open_brace + 1)
    raw = list(_statements(clean[open_brace + 1 : end], first_line))
    # what each block declares: registers (names, or prefixes of %r<N> ranges) and labels
    regs: dict[int, set[str]] = {}
    ranges: dict[int, set[str]] = {}
    labels_in: dict[int, set[str]] = {}
    for _line, blocks, labels, text in raw:
        inner = blocks[-1]
        labels_in.setdefault(inner, set()).update(labels)
        d = _REG_DECL.match(text)
        if d:
            for name in split_operands(d.group(1)):
                r = _RANGE.match(name)
                if r:
                    ranges.setdefault(inner, set()).add(r.group(1))
                else:
                    regs.setdefault(inner, set()).add(name)

    def rename(name: str, blocks: tuple[int, ...]) -> str:
        """A block's own names get the block's number; registers declared without `%` (inline asm's
        `complete`, `t`) get one, so that they read as registers everywhere."""
        for b in reversed(blocks):
            prefix = name.rstrip("0123456789")
            if name in regs.get(b, ()) or (prefix != name and prefix in ranges.get(b, ())):
                reg = name if name.startswith("%") else "%" + name
                return f"{reg}@{b}" if b else reg
            if b and name in labels_in.get(b, ()):
                return f"{name}@{b}"
        return name

    def resolve(text: str, blocks: tuple[int, ...]) -> str:
        return _NAME.sub(lambda m: rename(m.group(0), blocks), text)

    shared = re.findall(
        r"^\s*(?:\.extern\s+|\.visible\s+)?\.shared\s+(?:\.align\s+(\d+)\s+)?\.\w+\s+([\w$]+)",
        clean[: entry.start()],
        re.MULTILINE,
    )
    program = Program(
        entry.group(1),
        params,
        [],
        {},
        threads,
        [name for _, name in shared],
        {name: int(align or 1) for align, name in shared},
    )
    for line, blocks, labels, text in raw:
        for label in labels:
            program.labels[rename(label, blocks)] = len(program.instrs)
        if not text or text.startswith("."):
            continue  # directives: .reg, .pragma, .shared
        found = ir_ptx.tokenize(text)
        if found is None:
            continue
        guard = rename(found.guard, blocks) if found.guard else None
        operands = split_operands(resolve(found.operand_text, blocks)) if found.operand_text else []
        program.instrs.append(
            Instr(line if line is not None else 0, found.opcode, operands, guard, found.negated)
        )
    return program


def immediate(text: str) -> int | None:
    t = text.strip()
    try:
        if re.fullmatch(r"-?0[xX][0-9a-fA-F]+U?", t):
            return int(t.rstrip("U"), 16)
        if re.fullmatch(r"-?\d+U?", t):
            return int(t.rstrip("U"))
        if re.fullmatch(r"0[fF][0-9a-fA-F]{8}", t):
            return int(t[2:], 16)
        if re.fullmatch(r"0[dD][0-9a-fA-F]{16}", t):
            return int(t[2:], 16)
    except ValueError:
        return None
    return None


def destinations(instr: Instr) -> list[str]:
    """The registers an instruction writes: its first operand, when that names registers."""
    if not instr.operands or instr.parts[0] in _NO_DEST:
        return []
    first = instr.operands[0]
    if first.startswith("["):
        return []
    return [r for r in REGISTER.findall(first) if not is_special(r)]


def sources(instr: Instr) -> list[str]:
    ops = instr.operands[1:] if destinations(instr) else instr.operands
    found = [r for op in ops for r in REGISTER.findall(op) if not is_special(r)]
    if instr.parts[0] == "mov" and instr.operands and instr.operands[0].startswith("{"):
        found = [r for r in REGISTER.findall(instr.operands[1])]
    return found + ([instr.guard] if instr.guard else [])


def is_special(name: str) -> bool:
    return "." in name.split("@")[0][1:] or name in (
        "%laneid",
        "%warpid",
        "%nwarpid",
        "%smid",
        "%clock",
        "%clock64",
        "%globaltimer",
        "%lanemask_lt",
    )
