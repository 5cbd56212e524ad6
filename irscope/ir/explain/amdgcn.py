"""Explain one line of AMDGCN assembly (CDNA3): composed from unit, operation, type and encoding."""

from __future__ import annotations

import re

from irscope.ir import amdgcn as ir
from irscope.ir.explain.common import Explanation, fill, nothing, sentence
from irscope.ir.explain.data import amdgcn as data

_MFMA = re.compile(r"v_mfma_(\w+?)_(\d+)x(\d+)x(\d+)_?(\w*)")
_MEM = re.compile(
    r"^(buffer|global|flat|scratch|ds|s)_(load|store|read|write|read2|write2|read2st64|write2st64)_(\w+)$"
)


def explain(text: str, stage: str = "amdgcn") -> Explanation:
    line = text.split(";", 1)[0].split("//", 1)[0].strip()
    if not line:
        return nothing(stage)
    if line.startswith("."):
        return (
            nothing(stage, "Directive", data.DIRECTIVES)
            if not line.endswith(":")
            else Explanation(stage, None, f"Label {line[:-1]}", "A branch target.")
        )
    if ir.label(line) is not None:
        return Explanation(
            stage, None, f"Label {line[:-1]}", "A branch target or the start of the kernel."
        )
    instruction = ir.tokenize(line)
    if instruction is None:
        return nothing(stage)
    mnemonic, rest, operands = (
        instruction.opcode,
        instruction.operand_text,
        instruction.positional_operands,
    )
    values = {"ops": rest or "nothing"}
    for name, value in zip(("d", "a", "b", "c", "e"), operands):
        values[name] = value
    details = []
    core, encoding = mnemonic, None
    for enc in data.ENCODINGS:
        if core.endswith("_" + enc):
            core, encoding = core[: -len(enc) - 1], enc
            details.append(f"_{enc}: {data.ENCODINGS[enc]}")
    explained = _explain_core(core, values, operands)
    if explained is None:
        return Explanation(
            stage, mnemonic, mnemonic, "", tuple(details), known=False, unknown=(core,)
        )
    title, body, more = explained
    if encoding == "dpp":
        ctrl = " ".join(o for o in rest.split() if ":" in o)
        if ctrl:
            details.append(f"lane pattern: {ctrl}")
    return Explanation(
        stage, mnemonic, f"{title} ({mnemonic})", sentence(body), tuple(more + details)
    )


def _explain_core(
    core: str, values: dict, operands: list[str]
) -> tuple[str, str, list[str]] | None:
    if core in data.FULL:
        title, template = data.FULL[core]
        return title, fill(template, values), []
    m = _MFMA.fullmatch(core)
    if m:
        outtype, mm, nn, kk, intype = m.groups()
        title, template = data.MATRIX
        return (
            title,
            fill(
                template,
                {**values, "m": mm, "n": nn, "k": kk, "outtype": outtype, "intype": intype or "?"},
            ),
            [],
        )
    m = _MEM.match(core)
    if m:
        return _memory(*m.groups(), operands)
    unit, _, tail = core.partition("_")
    if unit not in data.UNITS:
        return None
    packed = tail.startswith("pk_")
    if packed:
        tail = tail[3:]
    words = tail.split("_")
    types = []
    while words and words[-1] in data.TYPES:
        types.insert(0, words.pop())
    op = "_".join(words)
    cmp = None
    if op.startswith("cmp_") or op.startswith("cmpk_") or op.startswith("cmpx_"):
        kind, _, cond = op.partition("_")
        cmp, op = data.COMPARISONS.get(cond), kind.rstrip("x") if kind != "cmpx" else "cmp"
        if cmp is None:
            return None
    if op.startswith("cvt_") or op == "cvt":
        return _convert(unit, core, types, values)
    if op not in data.OPERATIONS:
        return None
    title, template = data.OPERATIONS[op]
    if unit == "v" and op in ("cmp", "cmpk"):
        template = "the lane's bit of {d} = ({a} {cmp} {b})"
    body = fill(template, {**values, "cmp": cmp or "?"})
    type_words = " and ".join(data.TYPES[t] for t in types)
    more = [
        f"{'two values at once (packed) ' if packed else ''}{data.UNITS[unit]}"
        + (f"; {type_words}" if types else "")
    ]
    return title + (" (packed pair)" if packed else ""), body, more


def _convert(unit: str, core: str, types: list[str], values: dict) -> tuple[str, str, list[str]]:
    to, frm = (types + ["?", "?"])[:2]
    return (
        "Convert",
        fill("{d} = {a} converted", values)
        + f" from {data.TYPES.get(frm, frm)} to {data.TYPES.get(to, to)}",
        [data.UNITS[unit]],
    )


def _memory(
    prefix: str, verb: str, width: str, operands: list[str]
) -> tuple[str, str, list[str]] | None:
    size = data.WIDTHS.get(width)
    if size is None:
        return None
    space = data.MEMORY[prefix]
    pair = verb.endswith(("2", "2st64"))
    count = 2 if pair else 1
    load = verb.startswith(("load", "read"))
    regs = operands[0] if operands else "?"
    if prefix == "s":
        base = operands[1] if len(operands) > 1 else "?"
        offset = operands[2] if len(operands) > 2 else "0"
        body = f"load {size} bytes from {space} at {base} + {offset} into scalar registers {regs}"
        return "Scalar memory load", body, []
    per = f"{count} × {size} bytes" if pair else f"{size} byte{'s' if size > 1 else ''}"
    if load:
        body = f"each lane loads {per} from {space} into {regs}"
    else:
        data_reg = operands[0] if prefix == "buffer" else operands[1] if len(operands) > 1 else "?"
        data_reg = ", ".join(operands[1:3]) if pair and len(operands) > 2 else data_reg
        body = f"each lane stores {per} from {data_reg} to {space}"
    more = []
    if pair:
        more.append(
            "two accesses at offset0 and offset1"
            + (" (in units of 64 elements: st64)" if "st64" in verb else "")
        )
    if prefix == "buffer" and len(operands) > 2:
        more.append(
            f"address: buffer descriptor {operands[2]} + lane offset {operands[1]}"
            + (" (offen)" if "offen" in operands[-1] else "")
        )
    if prefix == "ds" and operands:
        more.append(f"LDS address in {operands[1] if load and len(operands) > 1 else operands[0]}")
    return ("Load" if load else "Store") + f" ({'LDS' if prefix == 'ds' else prefix})", body, more
