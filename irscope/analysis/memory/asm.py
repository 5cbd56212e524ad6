"""Memory-op parsers for the machine-level stages: PTX, SASS and AMDGCN (see `memory` for what each reads).

These give each instruction its width per lane. The LLVM IR parser (`memory_ir`) reuses the PTX one for
Triton's inline-asm loads and stores.
"""

from __future__ import annotations

import re

from irscope.analysis.memory.op import (
    ATOMIC,
    CONSTANT,
    GENERIC,
    GLOBAL,
    LOAD,
    LOCAL,
    SHARED,
    STORE,
    MemoryOp,
)
from irscope.ir import amdgcn as ir_amdgcn
from irscope.ir import ptx as ir_ptx
from irscope.ir import sass as ir_sass
from irscope.ir.operands import split_operands

# ---------------------------------------------------------------------------------------------- PTX

_PTX_TYPE_BYTES = {
    "b8": 1,
    "u8": 1,
    "s8": 1,
    "b16": 2,
    "u16": 2,
    "s16": 2,
    "f16": 2,
    "bf16": 2,
    "e4m3": 1,
    "e5m2": 1,
    "b32": 4,
    "u32": 4,
    "s32": 4,
    "f32": 4,
    "f16x2": 4,
    "bf16x2": 4,
    "tf32": 4,
    "b64": 8,
    "u64": 8,
    "s64": 8,
    "f64": 8,
    "b128": 16,
}
_PTX_SPACES = {
    "global": GLOBAL,
    "shared": SHARED,
    "local": LOCAL,
    "const": CONSTANT,
    "param": "param",
}
_PTX_MEMORY = ("ldmatrix", "stmatrix", "ldu", "ld", "st", "atom", "red", "cp.async")
_PTX_HEADS = frozenset(m.split(".")[0] for m in _PTX_MEMORY)
_PTX_ORDERING = {
    "volatile",
    "relaxed",
    "acquire",
    "release",
    "acq_rel",
    "weak",
    "mmio",
    "cta",
    "cluster",
    "gpu",
    "sys",
    "nc",
    "ca",
    "cg",
    "cs",
    "lu",
    "cv",
    "wb",
    "wt",
}


def parse_ptx(text: str, stage: str = "ptx") -> list[MemoryOp]:
    ops = []
    for instruction in ir_ptx.instructions(text):
        if instruction.base in _PTX_HEADS:
            op = ptx_op(instruction, instruction.index, stage)
            if op is not None:
                ops.append(op)
    return ops


def ptx_op(instruction: ir_ptx.Instruction | None, index: int, stage: str) -> MemoryOp | None:
    if instruction is None or not instruction.complete or (instruction.guard or "%")[0] not in "%$":
        return None
    opcode = instruction.opcode
    parts = opcode.split(".")
    head = parts[0]
    if ("cp.async" if parts[:2] == ["cp", "async"] else head) not in _PTX_MEMORY:
        return None
    predicate = instruction.predicate
    if head == "cp" and opcode.startswith("cp.async.bulk"):
        return _ptx_bulk_copy(opcode, parts, predicate, index, stage)
    # cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size}{, policy}
    if head == "cp":
        if len(parts) < 3 or parts[2] in ("commit_group", "wait_group", "wait_all", "mbarrier"):
            return None
        operands = split_operands(instruction.operand_text)
        size = _int(operands[2]) if len(operands) > 2 else None
        # src-size: fewer bytes are read
        zero_fill = len(operands) > 3 and not operands[3].startswith("%rd")
        return MemoryOp(
            stage,
            index,
            opcode,
            LOAD,
            GLOBAL,
            size,
            bool(predicate) or zero_fill,
            elem_type=None,
            vector=1,
            predicate=predicate,
            cache=tuple(p for p in parts[2:3]),
            copy_to=SHARED,
        )
    if head in ("ldmatrix", "stmatrix"):  # .sync.aligned.m8n8.x4{.trans}.shared{::cta}.b16
        count = next((n for n in map(ir_ptx.matrix_count, parts) if n is not None), 1)
        return MemoryOp(
            stage,
            index,
            opcode,
            LOAD if head == "ldmatrix" else STORE,
            SHARED,
            4 * count,
            bool(predicate),
            elem_type=parts[-1],
            vector=count,
            predicate=predicate,
        )
    space = GENERIC
    for p in parts[1:]:
        base = p.split("::")[0]
        if base in _PTX_SPACES:
            space = _PTX_SPACES[base]
            break
    if space in ("param",):
        return None
    vector = 1
    elem = None
    cache = []
    for p in parts[1:]:
        if ir_ptx.vector_count(p) is not None:
            vector = ir_ptx.vector_count(p)
        elif p in _PTX_TYPE_BYTES:
            elem = p
        elif "::" in p and p.split("::")[0] not in _PTX_SPACES or p in _PTX_ORDERING:
            cache.append(p)
    kind = {"ld": LOAD, "ldu": LOAD, "st": STORE}.get(head, ATOMIC)
    width = vector * _PTX_TYPE_BYTES[elem] if elem else None
    return MemoryOp(
        stage,
        index,
        opcode,
        kind,
        space,
        width,
        bool(predicate),
        elem_type=elem,
        vector=vector,
        predicate=predicate,
        cache=tuple(cache),
    )


def _ptx_bulk_copy(
    opcode: str, parts: list[str], predicate: str | None, index: int, stage: str
) -> MemoryOp | None:
    """TMA and bulk copies move a whole tile for the CTA: there is no per-thread width."""
    if (
        any(p in ("commit_group", "wait_group", "wait_group.read") for p in parts)
        or "prefetch" in parts
    ):
        return None
    spaces = [p.split("::")[0] for p in parts if p.split("::")[0] in ("global", "shared")]
    if len(spaces) < 2:
        return None
    src = spaces[1]  # the destination is spaces[0]
    if src == GLOBAL:
        return MemoryOp(
            stage,
            index,
            opcode,
            LOAD,
            GLOBAL,
            None,
            bool(predicate),
            predicate=predicate,
            copy_to=SHARED,
        )
    return MemoryOp(stage, index, opcode, STORE, GLOBAL, None, bool(predicate), predicate=predicate)


def _int(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


# --------------------------------------------------------------------------------------------- SASS

_SASS_SIZES = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "32": 4, "64": 8, "128": 16, "256": 32}
_SASS_CACHE = {
    "EF",
    "EL",
    "LU",
    "EU",
    "NA",
    "CONSTANT",
    "STRONG",
    "GPU",
    "SYS",
    "SM",
    "CTA",
    "BYPASS",
    "LTC128B",
    "LTC64B",
    "LTC256B",
    "ZFILL",
    "ENL2",
    "NC",
}


def parse_sass(text: str, stage: str = "sass") -> list[MemoryOp]:
    ops = []
    for instruction in ir_sass.instructions(text):
        kind_space = instruction.memory
        if kind_space is None:
            continue
        kind, space = kind_space
        opcode, pred = instruction.opcode, instruction.guard
        parts = opcode.split(".")
        guarded = pred is not None and pred not in ("PT", "UPT")
        operands = instruction.operands
        width = 4
        # LDSM.16.M88.4: four 8x8 matrices of b16, one register each
        if parts[0] in (
            "LDSM",
            "STSM",
        ):
            count = int(parts[-1]) if parts[-1].isdigit() and len(parts) > 3 else 1
            width = 4 * count
        elif parts[0] in ("LDTM", "STTM"):
            width = None
        else:
            for p in parts[1:]:
                if p in _SASS_SIZES:
                    width = _SASS_SIZES[p]
                elif p in ("F16x2", "BF16x2"):
                    width = 4
        zero_fill = (
            parts[0] == "LDGSTS"
            and len(operands) > 2
            and ir_sass.is_predicate(operands[-1])
            and "T" not in operands[-1]
            and not operands[-1].lstrip("!").startswith("U")
        )
        cache = tuple(p for p in parts[1:] if p in _SASS_CACHE)
        ops.append(
            MemoryOp(
                stage,
                instruction.index,
                opcode,
                kind,
                space,
                width,
                guarded or zero_fill,
                elem_type=None,
                vector=max(1, (width or 4) // 4),
                predicate=pred if guarded else None,
                cache=cache,
                copy_to=SHARED if parts[0] == "LDGSTS" else None,
            )
        )
    return ops


# ------------------------------------------------------------------------------------------- AMDGCN

_AMD_SIZE = [
    (re.compile(r"dwordx(\d)"), lambda m: 4 * int(m.group(1))),
    (re.compile(r"dword"), lambda m: 4),
    (re.compile(r"(?:^|_)b(\d+)"), lambda m: int(m.group(1)) // 8),
    (re.compile(r"(?:u|i)(\d+)"), lambda m: int(m.group(1)) // 8),
    (re.compile(r"(?:ubyte|sbyte|byte)"), lambda m: 1),
    (re.compile(r"(?:ushort|sshort|short)"), lambda m: 2),
]
_AMD_SPACES = {"global": GLOBAL, "buffer": GLOBAL, "flat": GENERIC, "scratch": LOCAL, "ds": SHARED}
_AMD_NOT_MEMORY = {
    "ds_swizzle_b32",
    "ds_permute_b32",
    "ds_bpermute_b32",
    "ds_nop",
    "ds_gws_init",
    "buffer_wbl2",
    "buffer_inv",
    "buffer_gl0_inv",
    "buffer_gl1_inv",
    "buffer_wbinvl1",
    "buffer_wbinvl1_vol",
    "global_wb",
    "global_inv",
}
_AMD_WRITES_EXEC = re.compile(
    r"^\s*s_\w+\s+(?:s\[\d+:\d+\],\s*)?exec(?:_lo)?\b|^\s*s_\w*saveexec\w*"
)
_AMD_RESTORES_EXEC = re.compile(
    r"^\s*s_(?:or|mov)_b(?:32|64)\s+exec(?:_lo)?,\s*(?:exec(?:_lo)?,|-1\b)"
)


def parse_amdgcn(text: str, stage: str = "amdgcn") -> list[MemoryOp]:
    """AMD has no per-instruction guard: a masked access either runs with some lanes off in `exec`,
    or (buffer ops) gets an out-of-range offset for masked-off lanes, picked by `v_cndmask`."""
    ops = []
    exec_narrowed = False
    selected_by_mask: set[str] = set()  # VGPRs last written by v_cndmask (a per-lane select)
    for index, raw in enumerate(text.splitlines()):
        code = raw.split(";", 1)[0]
        stripped = code.strip()
        if not stripped or stripped.startswith(".") or stripped.endswith(":"):
            if stripped.endswith(":") and not stripped.startswith("."):
                exec_narrowed = False  # a new block: the exec state is not tracked across branches
            continue
        if _AMD_RESTORES_EXEC.match(code):
            exec_narrowed = False
            continue
        if _AMD_WRITES_EXEC.match(code):
            exec_narrowed = True
            continue
        if stripped.startswith("v_"):
            dest = stripped.split(None, 1)[1].split(",", 1)[0].strip() if " " in stripped else ""
            if stripped.startswith("v_cndmask"):
                selected_by_mask.add(dest)
            else:
                selected_by_mask.discard(dest)
            continue
        instruction = ir_amdgcn.tokenize(code)
        if instruction is None or instruction.opcode.split("_", 1)[0] not in _AMD_SPACES:
            continue
        opcode, operand_text = instruction.opcode, instruction.operand_text
        if opcode in _AMD_NOT_MEMORY or "barrier" in opcode or opcode.startswith("ds_gws"):
            continue
        family, rest = opcode.split("_", 1)
        space = _AMD_SPACES[family]
        if family == "ds":
            is_atomic = not (
                rest.startswith("read")
                or rest.startswith("write")
                or rest.startswith("load")
                or rest.startswith("store")
            )
        else:
            is_atomic = rest.startswith("atomic")
        if is_atomic:
            kind = ATOMIC
        elif rest.startswith(("load", "read")):
            kind = LOAD
        else:
            kind = STORE
        width = _amd_width(rest)
        if width is not None and re.match(r"(?:read|write)2", rest):
            width *= 2
        operands = split_operands(operand_text)
        masked = exec_narrowed
        if family == "buffer" and len(operands) > 1 and operands[1] in selected_by_mask:
            masked = True
        copy_to = SHARED if (" lds" in operand_text or "_lds_" in opcode) else None
        cache = tuple(t for t in re.findall(r"\b(glc|slc|nt|sc0|sc1|dlc|nv)\b", operand_text))
        ops.append(
            MemoryOp(
                stage,
                index,
                opcode,
                kind,
                space,
                width,
                masked,
                elem_type=None,
                vector=max(1, (width or 4) // 4),
                cache=cache,
                copy_to=copy_to,
            )
        )
    return ops


def _amd_width(rest: str) -> int | None:
    body = re.sub(r"^(?:load|store|read|write|atomic)(?:2st64|2)?_", "", rest)
    body = body.replace("_lds", "")
    for pattern, size in _AMD_SIZE:
        found = pattern.search(body)
        if found:
            return size(found)
    if rest.startswith("atomic") or rest.split("_")[0] in (
        "add",
        "sub",
        "min",
        "max",
        "and",
        "or",
        "xor",
        "inc",
        "dec",
        "swap",
        "cmpswap",
    ):
        return 8 if rest.endswith("_x2") else 4  # untyped atomics work on a dword, _x2 on two
    return None
