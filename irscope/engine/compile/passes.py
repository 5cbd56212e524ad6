"""The compiler pass by pass (`irscope passes`): what each pass changed, and on which source lines.

The dumps come from one extra compile with Triton's dump variables on (triton_compat/pass_dumps.py).
MLIR prints the module *before* each pass, so a pass's output is the next dump; the last MLIR pass's
output is translated to LLVM IR without a dump of its own, and is left out. LLVM prints the module (or,
for a function pass, the function) *after* each pass; a function's dump holds no metadata, so the
metadata of the last whole-module dump is appended to read its `!dbg` locations (LLVM numbers metadata
once per module, and the function dumps use the same numbers).

Two dumps are compared the way `irscope diff` compares stages: instruction lines with SSA names,
register numbers and debug locations blanked, so that renumbering is not counted as a change."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from irscope.base.errors import IrscopeError
from irscope.engine.triton_compat.pass_dumps import compile_with_pass_dumps
from irscope.ir.normal import normalized
from irscope.ir.sourcemap import LineKind, SourceMap

# Triton 3.9 (MLIR 21+): `IR Dump Before TritonGPUCoalesce: tritongpu-coalesce ('builtin.module' operation)`;
# Triton 3.6: `IR Dump Before TritonGPUCoalesce (tritongpu-coalesce) ('builtin.module' operation)`
_MLIR_HEADER = re.compile(
    r"^// -----// IR Dump Before (\S+?)(?:: ([^\s{]+)(?:\{.*\})?| \(([^)\s]+)\)) \((.*)\) //----- //\s*$"
)
# the new pass manager (`; *** IR Dump After SROAPass on add_kernel ***`) and the code generator's legacy
# one for its IR passes (`*** IR Dump After SROA (sroa) ***`); machine-code dumps start with `# ***`
_LLVM_HEADER = re.compile(r"^(?:; )?\*\*\* IR Dump After (.+?)(?: on (.+?))? \*\*\*:?\s*$")
_LEGACY_NAME = re.compile(r"\(([\w-]+)\)$")


@dataclass
class PassStep:
    index: int  # 1-based, in the order the passes ran
    name: str  # the pass's argument (`tritongpu-coalesce`), or LLVM's class name (`SROAPass`)
    title: str  # the class name and what it ran on
    stage: str  # the dialect of its output: ttir, ttgir, llvm-dialect, llir
    before: str | None  # the IR it got (None: not dumped)
    after: str  # the IR it left
    changed_lines: int = 0
    source_lines: list[int] = field(default_factory=list)
    diff: list[tuple[str, str]] = field(default_factory=list)  # ('-'|'+', line) of what changed

    def to_json(self, with_text: bool = False) -> dict:
        out = {
            "index": self.index,
            "name": self.name,
            "title": self.title,
            "stage": self.stage,
            "changed_lines": self.changed_lines,
            "source_lines": self.source_lines,
        }
        if with_text:
            out.update(before=self.before, after=self.after)
        return out


def _mlir_stage(text: str) -> str:
    if "llvm.func" in text:
        return "llvm-dialect"
    return "ttgir" if "#ttg." in text or "ttg." in text else "ttir"


def mlir_steps(dump: str) -> list[tuple[str, str, str, str]]:
    """(name, title, input text, output text) of each MLIR pass whose output was dumped."""
    heads: list[tuple[str, str, list[str]]] = []
    for line in dump.splitlines():
        m = _MLIR_HEADER.match(line)
        if m:
            heads.append((m.group(2) or m.group(3), f"{m.group(1)} on {m.group(4)}", []))
        # a pass's own internal dump (the software pipeliner's): not read
        elif line.startswith("// -----//"):
            heads.append(("", "", []))
        elif heads:
            heads[-1][2].append(line)
    heads = [h for h in heads if h[0]]
    texts = ["\n".join(body).strip("\n") for _, _, body in heads]
    return [(heads[i][0], heads[i][1], texts[i], texts[i + 1]) for i in range(len(heads) - 1)]


def llvm_steps(dump: str) -> list[tuple[str, str, str | None, str]]:
    """(name, title, input text, output text) of each LLVM pass (the first pass's input is not dumped)."""
    heads: list[tuple[str, str, list[str]]] = []
    for line in dump.splitlines():
        m = _LLVM_HEADER.match(line)
        if m:
            legacy = _LEGACY_NAME.search(m.group(1)) if m.group(2) is None else None
            name = legacy.group(1) if legacy else m.group(1)
            heads.append((name, m.group(1) + (f" on {m.group(2)}" if m.group(2) else ""), []))
        elif heads and not line.startswith(("Running pass:", "Running analysis:", "Invalidating")):
            # machine code passes: not LLVM IR, and not read here
            if line.startswith("# *** IR Dump"):
                heads[-1][2].append("\x00")
            else:
                heads[-1][2].append(line)
    out = []
    metadata: list[str] = []
    previous: str | None = None
    for name, title, body in heads:
        if "\x00" in body:
            body = body[: body.index("\x00")]
        text = "\n".join(body).strip("\n")
        if not text.strip():
            continue  # a pass of the code generator: it printed machine code, not LLVM IR
        if "[module]" in title:
            metadata = [line for line in body if line.startswith("!")]
        elif metadata:
            text += "\n" + "\n".join(metadata)
        out.append((name, title, previous, text))
        previous = text
    return out


_ATTR_ALIAS = re.compile(r"^(#(?!loc)[A-Za-z_][\w.]*) = (.+)$")


def _expand_aliases(text: str):
    """MLIR prints a layout either through an alias (`#blocked`, defined at the top) or inline, depending on
    who prints; a key with the aliases spelled out compares the same either way."""
    aliases = {}
    for line in text.splitlines():
        m = _ATTR_ALIAS.match(line)
        if m:
            aliases[m.group(1)] = m.group(2).strip()
    if not aliases:
        return lambda line: line
    pattern = re.compile(
        "|".join(re.escape(n) for n in sorted(aliases, key=len, reverse=True)) + r"(?![\w.])"
    )
    return lambda line: pattern.sub(lambda m: aliases[m.group(0)], line)


def _instruction_lines(
    sm: SourceMap, stage: str, text: str
) -> list[tuple[str, tuple[int, ...], str]]:
    lines = text.splitlines()
    expand = _expand_aliases(text) if stage != "llir" else (lambda line: line)
    out = []
    for index, ir in enumerate(sm.lines(stage)):
        if ir.kind is LineKind.INSTRUCTION or (stage != "llir" and _ATTR_ALIAS.match(lines[index])):
            raw = lines[index]  # a layout's definition (`#blocked1 = ...`) is compared too
            out.append((normalized(expand(raw)), tuple(f.line for f in ir.frames), raw.strip()))
    return out


def compare(
    before: str | None, after: str, parser_stage: str, user_file: str
) -> tuple[int, list[int], list]:
    """Lines changed, the source lines they touch (ascending), and the changed lines themselves."""
    if before is None:
        return 0, [], []
    sides = []
    for text in (before, after):
        sm = SourceMap((parser_stage,), lambda _stage, t=text: t, user_file)
        sides.append(_instruction_lines(sm, parser_stage, text))
    a, b = sides
    matcher = difflib.SequenceMatcher(
        None, [k for k, _, _ in a], [k for k, _, _ in b], autojunk=False
    )
    changed, touched, diff = 0, set(), []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for _, frames, raw in a[a0:a1]:
            changed += 1
            touched.update(frames)
            diff.append(("-", raw))
        for _, frames, raw in b[b0:b1]:
            changed += 1
            touched.update(frames)
            diff.append(("+", raw))
    return changed, sorted(touched), diff


def pass_steps(mlir_dump: str, llvm_dump: str, user_file: str) -> list[PassStep]:
    """Every pass that ran, in order, with what it changed."""
    steps: list[PassStep] = []
    for name, title, before, after in mlir_steps(mlir_dump):
        steps.append(PassStep(len(steps) + 1, name, title, _mlir_stage(after), before, after))
    for name, title, before, after in llvm_steps(llvm_dump):
        steps.append(PassStep(len(steps) + 1, name, title, "llir", before, after))
    for step in steps:
        parser_stage = "llir" if step.stage == "llir" else "ttgir"
        step.changed_lines, step.source_lines, step.diff = compare(
            step.before, step.after, parser_stage, user_file
        )
    return steps


def find_step(steps: list[PassStep], wanted: str) -> PassStep:
    """A pass by its number, its name (the first run of it), or `name#N` (its N-th run)."""

    if wanted.isdigit() and 1 <= int(wanted) <= len(steps):
        return steps[int(wanted) - 1]
    name, _, nth = wanted.partition("#")
    runs = [s for s in steps if name in (s.name, s.title.split(" on ")[0])]
    n = int(nth) if nth.isdigit() else 1
    if runs and 1 <= n <= len(runs):
        return runs[n - 1]
    names = sorted({s.name for s in steps})
    raise IrscopeError(
        f"--pass {wanted}: no such pass run in this compilation; give a number 1 to {len(steps)} "
        f"or a name ({', '.join(names[:12])}, …), NAME#N for its N-th run"
    )


def capture_passes(comp) -> list[PassStep]:
    """Compile `comp` once more with the dumps on (about as long as its first compile), and read them."""

    mlir, llvm = compile_with_pass_dumps(comp.kernel.jit, comp.spec, comp.target)
    return pass_steps(mlir, llvm, comp.kernel.file)
