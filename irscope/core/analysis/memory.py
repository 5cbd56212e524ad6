"""Every load, store and atomic in a compiled kernel, per stage: what it touches and how wide it is.

One parser per dialect turns a stage's text into `MemoryOp`s, one per instruction line:

- TTIR / TTGIR (`parse_mlir`): `tt.load`, `tt.store`, atomics, descriptor (TMA) loads and stores,
  `ttg.local_load` / `ttg.local_store` / `ttg.local_alloc` with a value, async copies. Widths are not known
  at these stages (the backend picks them), so `width_bytes` is None; mask and `other` are.
- PTX (`parse_ptx`): `ld` / `st` / `atom` / `red` / `cp.async` / `ldmatrix` / `stmatrix`, with the vector
  count and type giving the width, `@%p` guards and the cache / eviction modifiers.
- SASS (`parse_sass`): `LDG`, `STG`, `LDS`, `STS`, `LDL`, `STL`, `LD`, `ST`, `LDGSTS`, `LDSM`, `STSM`,
  atomics and reductions.
- AMDGCN (`parse_amdgcn`): `global_*`, `buffer_*`, `flat_*`, `scratch_*`, `ds_*` memory instructions.

Kernel-argument reads (`ld.param`, `LDC`, AMD scalar `s_load`) are not memory ops of the kernel's data and
are left out. `width_bytes` is per thread (per lane) per instruction.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..ir import amdgcn as ir_amdgcn
from ..ir.operands import split_operands
from ..ir import llvm as ir_llvm
from ..ir import mlir as ir_mlir
from ..ir import ptx as ir_ptx
from ..ir import sass as ir_sass

LOAD, STORE, ATOMIC = "load", "store", "atomic"
GLOBAL, SHARED, LOCAL, GENERIC, CONSTANT, TENSOR = "global", "shared", "local", "generic", "constant", "tensor"


@dataclass(frozen=True)
class MemoryOp:
    stage: str                      # "ttir", "ttgir", "ptx", "sass", "amdgcn"
    line: int                       # 0-based index in comp.stage(stage).splitlines()
    opcode: str                     # the mnemonic as written: "ld.global.v4.b32", "LDG.E.128", "tt.load"
    op: str                         # "load" | "store" | "atomic"
    space: str                      # "global" | "shared" | "local" | "generic" | "constant" | "tensor"
    width_bytes: int | None         # bytes per thread per instruction (None where the stage does not say)
    masked: bool                    # predicated / guarded by a mask: some lanes may not access
    elem_type: str | None = None    # "f32", "b32", "f16", ...
    vector: int = 1                 # elements (registers) moved per thread
    predicate: str | None = None    # "%p1", "!%p2", "!P0" ...
    other: str | None = None        # TTIR/TTGIR: the value given to masked-off lanes
    cache: tuple[str, ...] = ()     # cache, eviction and ordering modifiers
    copy_to: str | None = None      # async copies: the space the data lands in ("shared")
    source_line: int | None = None  # 1-based line of the user's file (from the source map)

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, f"{self.stage}_line": self.line + 1, "source_line": self.source_line, "op": self.op,
                "space": self.space, "width_bytes": self.width_bytes, "masked": self.masked,
                "opcode": self.opcode}

    def replace(self, **changes: Any) -> "MemoryOp":
        return dataclasses.replace(self, **changes)


# ---------------------------------------------------------------------------------------------- PTX

_PTX_TYPE_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "e4m3": 1,
                   "e5m2": 1, "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
                   "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16}
_PTX_SPACES = {"global": GLOBAL, "shared": SHARED, "local": LOCAL, "const": CONSTANT, "param": "param"}
_PTX_MEMORY = ("ldmatrix", "stmatrix", "ldu", "ld", "st", "atom", "red", "cp.async")
_PTX_HEADS = frozenset(m.split(".")[0] for m in _PTX_MEMORY)
_PTX_ORDERING = {"volatile", "relaxed", "acquire", "release", "acq_rel", "weak", "mmio",
                 "cta", "cluster", "gpu", "sys", "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt"}


def parse_ptx(text: str, stage: str = "ptx") -> list[MemoryOp]:
    ops = []
    for instruction in ir_ptx.instructions(text):
        if instruction.base in _PTX_HEADS:
            op = _ptx_op(instruction, instruction.index, stage)
            if op is not None:
                ops.append(op)
    return ops


def _ptx_op(instruction: ir_ptx.Instruction | None, index: int, stage: str) -> MemoryOp | None:
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
    if head == "cp":  # cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size}{, policy}
        if len(parts) < 3 or parts[2] in ("commit_group", "wait_group", "wait_all", "mbarrier"):
            return None
        operands = split_operands(instruction.operand_text)
        size = _int(operands[2]) if len(operands) > 2 else None
        zero_fill = len(operands) > 3 and not operands[3].startswith("%rd")  # src-size: fewer bytes are read
        return MemoryOp(stage, index, opcode, LOAD, GLOBAL, size, bool(predicate) or zero_fill,
                        elem_type=None, vector=1, predicate=predicate,
                        cache=tuple(p for p in parts[2:3]), copy_to=SHARED)
    if head in ("ldmatrix", "stmatrix"):  # .sync.aligned.m8n8.x4{.trans}.shared{::cta}.b16
        count = next((n for n in map(ir_ptx.matrix_count, parts) if n is not None), 1)
        return MemoryOp(stage, index, opcode, LOAD if head == "ldmatrix" else STORE, SHARED, 4 * count,
                        bool(predicate), elem_type=parts[-1], vector=count, predicate=predicate)
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
    return MemoryOp(stage, index, opcode, kind, space, width, bool(predicate), elem_type=elem,
                    vector=vector, predicate=predicate, cache=tuple(cache))


def _ptx_bulk_copy(opcode: str, parts: list[str], predicate: str | None, index: int, stage: str) -> MemoryOp | None:
    """TMA and bulk copies move a whole tile for the CTA: there is no per-thread width."""
    if any(p in ("commit_group", "wait_group", "wait_group.read") for p in parts) or "prefetch" in parts:
        return None
    spaces = [p.split("::")[0] for p in parts if p.split("::")[0] in ("global", "shared")]
    if len(spaces) < 2:
        return None
    src = spaces[1]  # the destination is spaces[0]
    if src == GLOBAL:
        return MemoryOp(stage, index, opcode, LOAD, GLOBAL, None, bool(predicate), predicate=predicate,
                        copy_to=SHARED)
    return MemoryOp(stage, index, opcode, STORE, GLOBAL, None, bool(predicate), predicate=predicate)


def _int(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


# --------------------------------------------------------------------------------------------- SASS

_SASS_SIZES = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "32": 4, "64": 8, "128": 16, "256": 32}
_SASS_CACHE = {"EF", "EL", "LU", "EU", "NA", "CONSTANT", "STRONG", "GPU", "SYS", "SM", "CTA", "BYPASS", "LTC128B",
               "LTC64B", "LTC256B", "ZFILL", "ENL2", "NC"}


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
        if parts[0] in ("LDSM", "STSM"):  # LDSM.16.M88.4: four 8x8 matrices of b16, one register each
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
        zero_fill = parts[0] == "LDGSTS" and len(operands) > 2 and ir_sass.is_predicate(operands[-1]) \
            and "T" not in operands[-1] and not operands[-1].lstrip("!").startswith("U")
        cache = tuple(p for p in parts[1:] if p in _SASS_CACHE)
        ops.append(MemoryOp(stage, instruction.index, opcode, kind, space, width, guarded or zero_fill,
                            elem_type=None, vector=max(1, (width or 4) // 4), predicate=pred if guarded else None,
                            cache=cache, copy_to=SHARED if parts[0] == "LDGSTS" else None))
    return ops


# ------------------------------------------------------------------------------------------- AMDGCN

_AMD_SIZE = [(re.compile(r"dwordx(\d)"), lambda m: 4 * int(m.group(1))), (re.compile(r"dword"), lambda m: 4),
             (re.compile(r"(?:^|_)b(\d+)"), lambda m: int(m.group(1)) // 8),
             (re.compile(r"(?:u|i)(\d+)"), lambda m: int(m.group(1)) // 8),
             (re.compile(r"(?:ubyte|sbyte|byte)"), lambda m: 1), (re.compile(r"(?:ushort|sshort|short)"), lambda m: 2)]
_AMD_SPACES = {"global": GLOBAL, "buffer": GLOBAL, "flat": GENERIC, "scratch": LOCAL, "ds": SHARED}
_AMD_NOT_MEMORY = {"ds_swizzle_b32", "ds_permute_b32", "ds_bpermute_b32", "ds_nop", "ds_gws_init",
                   "buffer_wbl2", "buffer_inv", "buffer_gl0_inv", "buffer_gl1_inv", "buffer_wbinvl1",
                   "buffer_wbinvl1_vol", "global_wb", "global_inv"}
_AMD_WRITES_EXEC = re.compile(r"^\s*s_\w+\s+(?:s\[\d+:\d+\],\s*)?exec(?:_lo)?\b|^\s*s_\w*saveexec\w*")
_AMD_RESTORES_EXEC = re.compile(r"^\s*s_(?:or|mov)_b(?:32|64)\s+exec(?:_lo)?,\s*(?:exec(?:_lo)?,|-1\b)")


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
            is_atomic = not (rest.startswith("read") or rest.startswith("write") or rest.startswith("load")
                             or rest.startswith("store"))
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
        ops.append(MemoryOp(stage, index, opcode, kind, space, width, masked, elem_type=None,
                            vector=max(1, (width or 4) // 4), cache=cache, copy_to=copy_to))
    return ops


def _amd_width(rest: str) -> int | None:
    body = re.sub(r"^(?:load|store|read|write|atomic)(?:2st64|2)?_", "", rest)
    body = body.replace("_lds", "")
    for pattern, size in _AMD_SIZE:
        found = pattern.search(body)
        if found:
            return size(found)
    if rest.startswith("atomic") or rest.split("_")[0] in ("add", "sub", "min", "max", "and", "or", "xor", "inc",
                                                           "dec", "swap", "cmpswap"):
        return 8 if rest.endswith("_x2") else 4  # untyped atomics work on a dword, _x2 on two
    return None


# ------------------------------------------------------------------------------------------ LLVM IR

_LLVM_TYPE_BYTES = {"i1": 1, "i8": 1, "i16": 2, "half": 2, "bfloat": 2, "i32": 4, "float": 4, "i64": 8,
                    "double": 8, "ptr": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
_LLVM_SPACES = {"0": GENERIC, "1": GLOBAL, "3": SHARED, "4": CONSTANT, "5": LOCAL}
_LLVM_LOAD = re.compile(r"=\s*load\s+(?:volatile\s+)?(?P<type><\d+ x \w+>|\w+),\s*ptr(?:\s+addrspace\((?P<space>\d+)\))?")
_LLVM_STORE = re.compile(r"^\s*store\s+(?:volatile\s+)?(?P<type><\d+ x \w+>|\w+)\s+[^,]+,\s*ptr(?:\s+addrspace\((?P<space>\d+)\))?")
_LLVM_ATOMIC = re.compile(r"=\s*(?:atomicrmw|cmpxchg)\s+(?:volatile\s+)?\w*\s*ptr(?:\s+addrspace\((?P<space>\d+)\))?")
_LLVM_BUFFER = re.compile(r"@llvm\.amdgcn\.(?:raw|struct)\.(?:ptr\.)?buffer\.(?P<kind>load|store|atomic\.\w+)"
                          r"(?:\.lds)?(?:\.(?P<type>v\d+[a-z]+\d+|[a-z]+\d+))?\((?P<args>.*)")


def _llvm_type_bytes(text: str | None) -> int | None:
    if not text:
        return None
    vector = re.fullmatch(r"<(\d+) x (\w+)>", text) or re.fullmatch(r"v(\d+)([a-z]+\d+)", text)
    if vector:
        inner = _LLVM_TYPE_BYTES.get(vector.group(2))
        return int(vector.group(1)) * inner if inner else None
    return _LLVM_TYPE_BYTES.get(text)


def parse_llvm(text: str, stage: str = "llir") -> list[MemoryOp]:
    """LLVM IR: plain loads/stores by address space, Triton's inline-asm PTX memory instructions, and
    AMD buffer intrinsics (masked when the offset comes from a `select`, Triton's out-of-bounds trick)."""
    ops = []
    selected: set[str] = set()
    for index, raw in enumerate(text.splitlines()):
        line = raw.split(", !dbg", 1)[0]
        if line.startswith(("declare", "define", ";", "!", "attributes")):
            continue
        found = ir_llvm.instruction(line.strip())
        if found is not None and found.opcode == "select" and found.result:
            selected.add(found.result)
            continue
        asm = ir_llvm.inline_asm(line)
        if asm is not None:
            for piece in ir_llvm.asm_statements(asm):
                op = _ptx_op(ir_ptx.tokenize(piece + ";"), index, stage)
                if op is not None:
                    ops.append(op)
                    break
            continue
        buffer = _LLVM_BUFFER.search(line)
        if buffer:
            kind = buffer.group("kind")
            op_kind = LOAD if kind == "load" else STORE if kind == "store" else ATOMIC
            width = _llvm_type_bytes(buffer.group("type"))
            if op_kind == STORE and width is None:
                first = re.match(r"\s*(<\d+ x \w+>|\w+)", buffer.group("args"))
                width = _llvm_type_bytes(first.group(1)) if first else None
            args = split_operands(buffer.group("args").rsplit(")", 1)[0])
            offset_at = 2 if op_kind == STORE else 1
            offset = args[offset_at].split()[-1] if len(args) > offset_at else ""
            ops.append(MemoryOp(stage, index, "buffer." + kind, op_kind, GLOBAL, width, offset in selected,
                                vector=max(1, (width or 4) // 4)))
            continue
        for pattern, op_kind in ((_LLVM_LOAD, LOAD), (_LLVM_STORE, STORE), (_LLVM_ATOMIC, ATOMIC)):
            found = pattern.search(line)
            if found:
                space = _LLVM_SPACES.get(found.group("space") or "0", GENERIC)
                width = _llvm_type_bytes(found.groupdict().get("type"))
                ops.append(MemoryOp(stage, index, op_kind, op_kind,
                                    space, width, False, elem_type=found.groupdict().get("type"),
                                    vector=max(1, (width or 4) // 4)))
                break
    return ops


# ------------------------------------------------------------------------------------ TTIR / TTGIR

_MLIR_DIALECTS = ("tt.", "ttg.", "ttng.", "amdgpu.", "amdg.")
_MLIR_MEMORY = {
    "tt.load": (LOAD, GLOBAL), "tt.store": (STORE, GLOBAL), "tt.atomic_rmw": (ATOMIC, GLOBAL),
    "tt.atomic_cas": (ATOMIC, GLOBAL), "tt.descriptor_load": (LOAD, GLOBAL), "tt.descriptor_store": (STORE, GLOBAL),
    "tt.descriptor_gather": (LOAD, GLOBAL), "tt.descriptor_scatter": (STORE, GLOBAL),
    "tt.descriptor_reduce": (ATOMIC, GLOBAL),
    "ttg.local_load": (LOAD, SHARED), "ttg.local_store": (STORE, SHARED),
    "ttg.async_copy_global_to_local": (LOAD, GLOBAL), "ttng.async_tma_copy_global_to_local": (LOAD, GLOBAL),
    "ttng.async_tma_copy_local_to_global": (STORE, GLOBAL), "ttng.async_tma_gather": (LOAD, GLOBAL),
    "ttng.async_tma_scatter": (STORE, GLOBAL), "ttng.tmem_load": (LOAD, TENSOR), "ttng.tmem_store": (STORE, TENSOR),
    "amdgpu.buffer_load": (LOAD, GLOBAL), "amdgpu.buffer_store": (STORE, GLOBAL),
    "amdgpu.buffer_atomic_rmw": (ATOMIC, GLOBAL), "amdgpu.buffer_load_to_local": (LOAD, GLOBAL),
}
_MLIR_ELEM = re.compile(r"!tt\.ptr<(\w+)>|memdesc<(?:[\dx]+x)?(\w+?)\s*,|tensor<(?:[\dx]+x)?(\w+)[,>]")


_MLIR_CONSTANT = re.compile(r"^\s*(%[\w.$-]+) = arith\.constant (?:dense<)?([^>:]+?)>? : ")
_MLIR_HINTS = re.compile(r"\b(cache|evict|cache_modifier|eviction_policy|cacheModifier|evictionPolicy|isVolatile|sem|scope)"
                         r"\s*=\s*([\w\".]+)")
# Triton 3.6 prints hints as bare attributes (`evictionPolicy = evict_last`); later ones as a cachePolicy
_MLIR_HINT_NAMES = {"cacheModifier": "cache_modifier", "evictionPolicy": "eviction_policy"}


def parse_mlir(text: str, stage: str) -> list[MemoryOp]:
    ops = []
    constants = {m.group(1): m.group(2).strip() for m in map(_MLIR_CONSTANT.match, text.splitlines()) if m}
    for index, raw in enumerate(text.splitlines()):
        found = ir_mlir.operation(raw)
        if found is None or not found.opcode.startswith(_MLIR_DIALECTS):
            continue
        opcode = found.opcode
        key = "amdgpu." + opcode[5:] if opcode.startswith("amdg.") else opcode  # the dialect was renamed
        rest = re.sub(r"\sloc\(.*$", "", found.rest)
        if opcode == "ttg.local_alloc":
            # an alloc with an initial value stores that tensor into shared memory
            if not re.match(r"\s*%", rest):
                continue
            kind, space = STORE, SHARED
        elif key in _MLIR_MEMORY:
            kind, space = _MLIR_MEMORY[key]
        else:
            continue
        operand_text = rest.split(":", 1)[0]
        operand_text = re.sub(r"\{[^}]*\}", "", operand_text)
        masked, other = _mlir_mask(key, operand_text)
        elem = None
        type_text = rest.split(":", 1)[1] if ":" in rest else ""
        found = _MLIR_ELEM.search(type_text)
        if found:
            elem = next(g for g in found.groups() if g)
        cache = tuple(f"{_MLIR_HINT_NAMES.get(k, k)}={v}" for k, v in _MLIR_HINTS.findall(rest) if v not in ("none", "1", "false", "evict_normal"))
        if other in constants:
            other = constants[other]  # the value itself, e.g. 1.500000e+00
        ops.append(MemoryOp(stage, index, opcode, kind, space, None, masked, elem_type=elem, other=other,
                            cache=cache, copy_to=SHARED if key in ("ttg.async_copy_global_to_local",
                                                                      "ttng.async_tma_copy_global_to_local",
                                                                      "ttng.async_tma_gather",
                                                                      "amdgpu.buffer_load_to_local") else None))
    return ops


def _mlir_mask(opcode: str, operands: str) -> tuple[bool, str | None]:
    """Triton prints mask and other positionally for tt.load / tt.store / atomics, by keyword elsewhere."""
    keyword_mask = re.search(r"\bmask\s+(%[\w#]+)", operands)
    keyword_other = re.search(r"\bother\s+(%[\w#]+)", operands)
    if keyword_mask or keyword_other:
        return bool(keyword_mask), keyword_other.group(1) if keyword_other else None
    values = re.findall(r"%[\w#]+", operands)
    positional = {"tt.load": (1, 2), "tt.store": (2, None), "tt.atomic_rmw": (2, None),
                  "tt.atomic_cas": (None, None), "amdgpu.buffer_load": (2, 3), "amdgpu.buffer_store": (3, None),
                  "amdgpu.buffer_atomic_rmw": (3, None)}
    mask_at, other_at = positional.get(opcode, (None, None))
    if opcode == "tt.atomic_rmw":
        values = re.findall(r"%[\w#]+", operands.split(",", 2)[-1] if operands.count(",") >= 2 else operands)
        mask_at = 2
    masked = mask_at is not None and len(values) > mask_at
    other = values[other_at] if other_at is not None and len(values) > other_at else None
    return masked, other


# ---------------------------------------------------------------------------------- compilations

PARSERS = {"ttir": lambda t: parse_mlir(t, "ttir"), "ttgir": lambda t: parse_mlir(t, "ttgir"),
           "llir": parse_llvm, "ptx": parse_ptx, "sass": parse_sass, "amdgcn": parse_amdgcn}


def primary_stage(comp) -> str:
    """The stage whose widths the report uses: PTX on NVIDIA (what Triton emits), AMDGCN on AMD."""
    return "ptx" if comp.target.is_nvidia else "amdgcn"


def memory_ops(comp, stages: Iterable[str] | None = None) -> list[MemoryOp]:
    """Memory ops of the compilation's stages (default: every stage with a parser), with source lines.
    Cached on the compilation object."""
    if not comp.ok:
        return []
    wanted = [s for s in (stages or comp.stage_names) if s in PARSERS and s in comp.stage_names]
    cache = comp.__dict__.setdefault("_memory_ops", {})
    out: list[MemoryOp] = []
    for stage in wanted:
        if stage not in cache:
            ops = PARSERS[stage](comp.stage(stage))
            cache[stage] = _with_source_lines(comp, stage, ops)
        out.extend(cache[stage])
    return out


def _with_source_lines(comp, stage: str, ops: list[MemoryOp]) -> list[MemoryOp]:
    source_map = _source_map(comp)
    if source_map is None:
        return ops
    out = []
    for op in ops:
        try:
            line = source_map.source_line(stage, op.line)
        except Exception:  # a stage the map does not cover: leave the op unmapped
            line = None
        out.append(op.replace(source_line=line))
    return out


def _source_map(comp):
    try:
        return getattr(comp, "source_map", None)
    except Exception:
        return None


@dataclass
class LineTotals:
    """Memory traffic attributed to one source line (primary stage)."""

    source_line: int | None
    loads: int = 0
    stores: int = 0
    atomics: int = 0
    bytes_per_thread: int = 0
    masked: int = 0
    scalar_global: int = 0      # global accesses narrower than 8 bytes
    widths: list[int] = field(default_factory=list)
    spaces: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"source_line": self.source_line, "loads": self.loads, "stores": self.stores,
                "atomics": self.atomics, "bytes_per_thread": self.bytes_per_thread, "masked": self.masked,
                "scalar_global": self.scalar_global, "widths": sorted(set(self.widths)),
                "spaces": sorted(set(self.spaces))}


def totals_by_source_line(ops: Iterable[MemoryOp]) -> list[LineTotals]:
    rows: dict[int | None, LineTotals] = {}
    for op in ops:
        row = rows.setdefault(op.source_line, LineTotals(op.source_line))
        if op.op == LOAD:
            row.loads += 1
        elif op.op == STORE:
            row.stores += 1
        else:
            row.atomics += 1
        row.bytes_per_thread += op.width_bytes or 0
        row.masked += op.masked
        if op.space == GLOBAL and op.width_bytes is not None and op.width_bytes < 8:
            row.scalar_global += 1
        if op.width_bytes is not None:
            row.widths.append(op.width_bytes)
        row.spaces.append(op.space)
    return sorted(rows.values(), key=lambda r: (r.source_line is None, r.source_line or 0))
