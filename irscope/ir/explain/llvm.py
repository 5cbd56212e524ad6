"""Explain one line of LLVM IR: instructions, intrinsic calls, and inline PTX (explained as PTX)."""

from __future__ import annotations

import re

from irscope.ir import llvm as ir
from irscope.ir.explain import ptx
from irscope.ir.explain.common import Explanation, fill, nothing, sentence, split_operands
from irscope.ir.explain.data import llvm as data

_INTRINSIC = re.compile(r"@llvm\.([\w.]+)")
_TYPE = re.compile(
    r"^\s*(?:(?:nuw|nsw|exact|disjoint|nneg|fast|contract|afn|reassoc|nnan|ninf|nsz|arcp|volatile|atomic)\s+)*"
    r"(<\d+ x [\w]+>|\{[^}]*\}|\[[^\]]*\]|[\w]+(?: addrspace\(\d+\))?)"
)
_LLVM_TYPE = r"(<\d+ x \w+>|\w+(?: addrspace\(\d+\))?)"  # a scalar or vector type, maybe with its address space
_CAST = re.compile(rf"^\s*(?:nneg\s+)?{_LLVM_TYPE}\s+(.+?)\s+to\s+{_LLVM_TYPE}\s*$")
_SIZES = {"half": 2, "bfloat": 2, "float": 4, "double": 8, "ptr": 8}


def _strip_metadata(line: str) -> str:
    return re.sub(r"(,\s*![\w.]+\s+!\d+)+\s*$", "", line)


def _bytes_of(scalar: str) -> int | None:
    if scalar in _SIZES:
        return _SIZES[scalar]
    m = re.fullmatch(r"i(\d+)", scalar)
    return max(1, int(m.group(1)) // 8) if m else None


def _operand_name(text: str) -> str:
    """`i32 %5` -> `%5`; `splat (float 5.000000e-01)` -> `5.000000e-01 in every lane`."""
    text = text.strip()
    splat = re.match(r"splat \((?:\S+) (.+)\)$", text)
    if splat:
        return f"{splat.group(1)} (in every element)"
    return text.split()[-1] if text else text


def type_words(t: str) -> str:
    """`<4 x float>` -> '4 × float = 16 bytes'; `float` -> 'float (4 bytes)'."""
    t = t.strip()
    m = re.fullmatch(r"<(\d+) x ([\w]+)>", t)
    if m:
        n, scalar = int(m.group(1)), m.group(2)
        size = _bytes_of(scalar)
        return f"{n} × {scalar}" + (f" = {n * size} bytes" if size else "")
    size = _bytes_of(t)
    if t == "i1":
        return "i1 (a true/false value)"
    return f"{t} ({size} byte{'s' if size != 1 else ''})" if size else t


def _space(rest: str, amd: bool) -> str:
    m = re.search(r"ptr addrspace\((\d+)\)", rest)
    spaces = data.ADDRESS_SPACES["amdgpu" if amd else "nvptx"]
    return spaces.get(m.group(1) if m else "0", f"address space {m.group(1) if m else 0}")


def explain(text: str, stage: str = "llir", amd: bool = False) -> Explanation:
    line = _strip_metadata(
        text.split(" ; ", 1)[0].strip() if not text.strip().startswith(";") else ""
    )
    if not line or line in ("}", "{"):
        return nothing(stage)
    if line.startswith("!"):
        title, body = data.TOPLEVEL["metadata"]
        return Explanation(stage, None, title, sentence(body))
    if line.startswith("]"):
        return Explanation(
            stage, None, "End of a list", "The list the lines above continue ends here."
        )
    if re.match(r"(i\d+|ptr|half|bfloat|float|double)\s", line):
        return Explanation(
            stage,
            None,
            "Continued from above",
            sentence(
                "an entry of a list a line above opens: a switch's case (a value, then the label it jumps to), or an "
                "element of a constant"
            ),
        )
    word = line.split()[0]
    if word in data.TOPLEVEL and word not in ("label", "metadata", "global"):
        title, body = data.TOPLEVEL[word]
        return Explanation(stage, word, title, sentence(body))
    if line.startswith("@"):
        title, body = data.TOPLEVEL["global"]
        return Explanation(stage, "global", title, sentence(body))
    label = ir.label(line)
    if label is not None:
        title, body = data.TOPLEVEL["label"]
        return Explanation(stage, "label", f"{title} {label}", sentence(body))
    found = ir.instruction(line)
    if found is None:
        return Explanation(stage, word, "Unrecognised line", "", known=False, unknown=(word,))
    op, d, rest = found.opcode, found.result or "the result", found.rest
    if op == "call":
        return _call(d, rest, stage)
    entry = data.INSTRUCTIONS.get(op)
    if entry is None:
        return Explanation(stage, op, op, "", known=False, unknown=(op,))
    title, template = entry
    values = {"d": d, "ops": rest.strip(), "space": _space(rest, amd)}
    cond = None
    if op in ("icmp", "fcmp"):
        cm = re.match(
            r"\s*(?:\w+\s+)*?(eq|ne|[su][lg][te]|o\w\w|u\w\w|ord|uno|true|false)\s+(\S+)\s+([^,]+),\s*(.+)$",
            rest,
        )
        if cm:
            code, _, a, b = cm.groups()
            words = data.CONDITIONS.get(code, code)
            cond = re.sub(r"\bb\b", b.strip(), re.sub(r"\ba\b", a.strip(), words))
            rest = f" {cm.group(2)} {a}"
    values["cmp"] = cond or "the condition"
    tm = _TYPE.match(rest)
    values["type"] = type_words(tm.group(1)) if tm else "a value"
    cast = _CAST.match(rest)
    if cast:
        values["type"] = f"from {type_words(cast.group(1))} to {type_words(cast.group(3))}"
        values["a"] = _operand_name(cast.group(2))
    elif tm:
        names = [_operand_name(o) for o in split_operands(rest[tm.end() :]) if o.strip()]
        if op == "select":  # select i1 %c, T %x, T %y: every operand carries its type
            names = [_operand_name(o) for o in split_operands(rest) if o.strip()]
        values.update({k: v for k, v in zip(("a", "b", "c"), names)})
    return Explanation(stage, op, f"{title} ({op})", sentence(fill(template, values)))


def _call(d: str, rest: str, stage: str) -> Explanation:
    asm = ir.inline_asm(rest)
    if asm is not None:
        return _inline_asm(asm, stage)
    intrinsic = _INTRINSIC.search(rest)
    if intrinsic:
        name = intrinsic.group(1)
        parts = name.split(".")
        for n in range(len(parts), 0, -1):
            key = ".".join(parts[:n])
            if key in data.INTRINSICS:
                title, body = data.INTRINSICS[key]
                target = "" if d == "the result" else f"{d} = "
                return Explanation(
                    stage, f"llvm.{name}", f"{title} (llvm.{name})", sentence(target + body)
                )
        return Explanation(
            stage, f"llvm.{name}", f"llvm.{name}", "", known=False, unknown=(f"llvm.{name}",)
        )
    callee = re.search(r"@([\w.$]+)", rest)
    title, template = data.INSTRUCTIONS["call"]
    return Explanation(
        stage,
        "call",
        title,
        sentence(fill(template, {"d": d, "callee": callee.group(1) if callee else "a function"})),
    )


def _inline_asm(asm: str, stage: str) -> Explanation:
    """Triton writes some PTX by hand (loads with masks, cp.async, wgmma): explain it as PTX."""
    pieces = []
    for statement in ir.asm_statements(asm):
        e = ptx.explain(statement)
        if e is not None and e.op and e.op != "label" and not e.op.startswith("."):
            pieces.append(e)
    if not pieces:
        return Explanation(
            stage, "asm", "Inline assembly", "Hand-written target assembly with no instructions."
        )
    known = all(p.known for p in pieces)
    unknown = tuple(u for p in pieces for u in p.unknown)
    opcodes = [p.op for p in pieces]
    key = "asm " + "; ".join(dict.fromkeys(opcodes))
    runs: list[list[Explanation]] = []
    for p in pieces:  # Triton zeroes each result register first: say it once, with a count
        if runs and runs[-1][0].op == p.op:
            runs[-1].append(p)
        else:
            runs.append([p])
    text = " Then: ".join(
        r[0].text + (f" (and {len(r) - 1} more like it)" if len(r) > 1 else "") for r in runs
    )
    return Explanation(
        stage,
        key,
        "Inline PTX: " + ", ".join(dict.fromkeys(opcodes)),
        "Triton wrote this PTX by hand ($0, $1, ... are the call's operands). " + text,
        tuple(d for p in pieces[:2] for d in p.details),
        known=known,
        unknown=unknown,
    )
