"""Memory-op parsers for the compiler's IR stages: TTIR / TTGIR (MLIR) and LLVM IR (see `memory`).

TTIR and TTGIR know no widths (the backend picks them) but do know masks and `other` values; LLVM IR
carries Triton's inline-asm PTX memory instructions and AMD's buffer intrinsics.
"""

from __future__ import annotations

import re

from irscope.analysis.memory.asm import ptx_op
from irscope.analysis.memory.op import (
    ATOMIC,
    CONSTANT,
    GENERIC,
    GLOBAL,
    LOAD,
    LOCAL,
    SHARED,
    STORE,
    TENSOR,
    MemoryOp,
)
from irscope.ir import llvm as ir_llvm
from irscope.ir import mlir as ir_mlir
from irscope.ir import ptx as ir_ptx
from irscope.ir.operands import split_operands

# ------------------------------------------------------------------------------------------ LLVM IR

_LLVM_TYPE_BYTES = {
    "i1": 1,
    "i8": 1,
    "i16": 2,
    "half": 2,
    "bfloat": 2,
    "i32": 4,
    "float": 4,
    "i64": 8,
    "double": 8,
    "ptr": 8,
    "f16": 2,
    "bf16": 2,
    "f32": 4,
    "f64": 8,
}
_LLVM_SPACES = {"0": GENERIC, "1": GLOBAL, "3": SHARED, "4": CONSTANT, "5": LOCAL}
_LLVM_LOAD = re.compile(
    r"=\s*load\s+(?:volatile\s+)?(?P<type><\d+ x \w+>|\w+),\s*ptr(?:\s+addrspace\((?P<space>\d+)\))?"
)
_LLVM_STORE = re.compile(
    r"^\s*store\s+(?:volatile\s+)?(?P<type><\d+ x \w+>|\w+)\s+[^,]+,\s*ptr(?:\s+addrspace\((?P<space>\d+)\))?"
)
_LLVM_ATOMIC = re.compile(
    r"=\s*(?:atomicrmw|cmpxchg)\s+(?:volatile\s+)?\w*\s*ptr(?:\s+addrspace\((?P<space>\d+)\))?"
)
_LLVM_BUFFER = re.compile(
    r"@llvm\.amdgcn\.(?:raw|struct)\.(?:ptr\.)?buffer\.(?P<kind>load|store|atomic\.\w+)"
    r"(?:\.lds)?(?:\.(?P<type>v\d+[a-z]+\d+|[a-z]+\d+))?\((?P<args>.*)"
)


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
                op = ptx_op(ir_ptx.tokenize(piece + ";"), index, stage)
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
            ops.append(
                MemoryOp(
                    stage,
                    index,
                    "buffer." + kind,
                    op_kind,
                    GLOBAL,
                    width,
                    offset in selected,
                    vector=max(1, (width or 4) // 4),
                )
            )
            continue
        for pattern, op_kind in ((_LLVM_LOAD, LOAD), (_LLVM_STORE, STORE), (_LLVM_ATOMIC, ATOMIC)):
            found = pattern.search(line)
            if found:
                space = _LLVM_SPACES.get(found.group("space") or "0", GENERIC)
                width = _llvm_type_bytes(found.groupdict().get("type"))
                ops.append(
                    MemoryOp(
                        stage,
                        index,
                        op_kind,
                        op_kind,
                        space,
                        width,
                        False,
                        elem_type=found.groupdict().get("type"),
                        vector=max(1, (width or 4) // 4),
                    )
                )
                break
    return ops


# ------------------------------------------------------------------------------------ TTIR / TTGIR

_MLIR_DIALECTS = ("tt.", "ttg.", "ttng.", "amdgpu.", "amdg.")
_MLIR_MEMORY = {
    "tt.load": (LOAD, GLOBAL),
    "tt.store": (STORE, GLOBAL),
    "tt.atomic_rmw": (ATOMIC, GLOBAL),
    "tt.atomic_cas": (ATOMIC, GLOBAL),
    "tt.descriptor_load": (LOAD, GLOBAL),
    "tt.descriptor_store": (STORE, GLOBAL),
    "tt.descriptor_gather": (LOAD, GLOBAL),
    "tt.descriptor_scatter": (STORE, GLOBAL),
    "tt.descriptor_reduce": (ATOMIC, GLOBAL),
    "ttg.local_load": (LOAD, SHARED),
    "ttg.local_store": (STORE, SHARED),
    "ttg.async_copy_global_to_local": (LOAD, GLOBAL),
    "ttng.async_tma_copy_global_to_local": (LOAD, GLOBAL),
    "ttng.async_tma_copy_local_to_global": (STORE, GLOBAL),
    "ttng.async_tma_gather": (LOAD, GLOBAL),
    "ttng.async_tma_scatter": (STORE, GLOBAL),
    "ttng.tmem_load": (LOAD, TENSOR),
    "ttng.tmem_store": (STORE, TENSOR),
    "amdgpu.buffer_load": (LOAD, GLOBAL),
    "amdgpu.buffer_store": (STORE, GLOBAL),
    "amdgpu.buffer_atomic_rmw": (ATOMIC, GLOBAL),
    "amdgpu.buffer_load_to_local": (LOAD, GLOBAL),
}
_MLIR_ELEM = re.compile(
    r"!tt\.ptr<(\w+)>|memdesc<(?:[\dx]+x)?(\w+?)\s*,|tensor<(?:[\dx]+x)?(\w+)[,>]"
)


_MLIR_CONSTANT = re.compile(r"^\s*(%[\w.$-]+) = arith\.constant (?:dense<)?([^>:]+?)>? : ")
_MLIR_HINTS = re.compile(
    r"\b(cache|evict|cache_modifier|eviction_policy|cacheModifier|evictionPolicy|isVolatile|sem|scope)"
    r"\s*=\s*([\w\".]+)"
)
# Triton 3.6 prints hints as bare attributes (`evictionPolicy = evict_last`); later ones as a cachePolicy
_MLIR_HINT_NAMES = {"cacheModifier": "cache_modifier", "evictionPolicy": "eviction_policy"}


def parse_mlir(text: str, stage: str) -> list[MemoryOp]:
    ops = []
    constants = {
        m.group(1): m.group(2).strip() for m in map(_MLIR_CONSTANT.match, text.splitlines()) if m
    }
    for index, raw in enumerate(text.splitlines()):
        found = ir_mlir.operation(raw)
        if found is None or not found.opcode.startswith(_MLIR_DIALECTS):
            continue
        opcode = found.opcode
        # the dialect was renamed
        key = "amdgpu." + opcode[5:] if opcode.startswith("amdg.") else opcode
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
        cache = tuple(
            f"{_MLIR_HINT_NAMES.get(k, k)}={v}"
            for k, v in _MLIR_HINTS.findall(rest)
            if v not in ("none", "1", "false", "evict_normal")
        )
        if other in constants:
            other = constants[other]  # the value itself, e.g. 1.500000e+00
        ops.append(
            MemoryOp(
                stage,
                index,
                opcode,
                kind,
                space,
                None,
                masked,
                elem_type=elem,
                other=other,
                cache=cache,
                copy_to=SHARED
                if key
                in (
                    "ttg.async_copy_global_to_local",
                    "ttng.async_tma_copy_global_to_local",
                    "ttng.async_tma_gather",
                    "amdgpu.buffer_load_to_local",
                )
                else None,
            )
        )
    return ops


def _mlir_mask(opcode: str, operands: str) -> tuple[bool, str | None]:
    """Triton prints mask and other positionally for tt.load / tt.store / atomics, by keyword elsewhere."""
    keyword_mask = re.search(r"\bmask\s+(%[\w#]+)", operands)
    keyword_other = re.search(r"\bother\s+(%[\w#]+)", operands)
    if keyword_mask or keyword_other:
        return bool(keyword_mask), keyword_other.group(1) if keyword_other else None
    values = re.findall(r"%[\w#]+", operands)
    positional = {
        "tt.load": (1, 2),
        "tt.store": (2, None),
        "tt.atomic_rmw": (2, None),
        "tt.atomic_cas": (None, None),
        "amdgpu.buffer_load": (2, 3),
        "amdgpu.buffer_store": (3, None),
        "amdgpu.buffer_atomic_rmw": (3, None),
    }
    mask_at, other_at = positional.get(opcode, (None, None))
    if opcode == "tt.atomic_rmw":
        values = re.findall(
            r"%[\w#]+", operands.split(",", 2)[-1] if operands.count(",") >= 2 else operands
        )
        mask_at = 2
    masked = mask_at is not None and len(values) > mask_at
    other = values[other_at] if other_at is not None and len(values) > other_at else None
    return masked, other
