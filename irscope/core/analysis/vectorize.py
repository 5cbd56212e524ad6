"""Why a global access is not vectorized, and proof by recompiling with the fix ("what if").

Triton turns a load or store into wide per-thread accesses (PTX `ld.global.v4.b32`, AMD
`buffer_load_dwordx4`) only when it can prove, at compile time, that each thread's run of neighbouring
elements is contiguous, aligned to the vector size, and either all masked on or all off. What it knows
comes from the JIT's specialization (`tt.divisibility = 16` on pointers and ints that were multiples of
16 at launch), from constants, and from the layout (how many neighbouring elements each thread owns).
This module reads those same facts back from the compiled IR and the launch, and names the missing one.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..ir.mlir import strip_locations
from .dataflow import FunctionGraph, constant_value, parse_function
from .memory import memory_ops, primary_stage
from .memory_op import GLOBAL, MemoryOp

VECTOR_BYTES = 16   # the widest per-thread global access Triton emits (128 bits)

_ELEM_BYTES = {"i1": 1, "i8": 1, "f8E4M3FN": 1, "f8E5M2": 1, "f8E4M3FNUZ": 1, "f8E5M2FNUZ": 1,
               "i16": 2, "f16": 2, "bf16": 2, "i32": 4, "f32": 4, "tf32": 4, "i64": 8, "f64": 8}


@dataclass(frozen=True)
class Reason:
    kind: str          # "unaligned_pointer" | "mask_not_divisible" | "unaligned_offset" | "runtime_stride"
                       # | "not_specialized" | "constant_stride" | "layout" | "unknown"
    arg: str | None    # the kernel argument it is about, when there is one
    text: str          # why, in plain words
    fix: str           # what to change

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "arg": self.arg, "why": self.text, "fix": self.fix}


@dataclass
class Diagnosis:
    """One global load/store of the TTIR whose machine accesses are narrower than they could be."""

    ttir_line: int
    source_line: int | None
    op: str                          # "load" | "store" | "atomic"
    pointer: str | None              # the base pointer argument
    width_bytes: int | None          # widest machine access for it (primary stage), bytes per thread
    elem_bytes: int | None
    contiguous_per_thread: int | None  # from the TTGIR layout (sizePerThread along the fastest dim)
    reasons: list[Reason] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"ttir_line": self.ttir_line + 1, "source_line": self.source_line, "op": self.op,
                "pointer": self.pointer, "width_bytes": self.width_bytes, "elem_bytes": self.elem_bytes,
                "contiguous_per_thread": self.contiguous_per_thread,
                "reasons": [r.to_json() for r in self.reasons]}


# ------------------------------------------------------------------------------------------ why

def why_not_vectorized(comp, only_narrow: bool = True) -> list[Diagnosis]:
    """For each global access of the kernel (TTIR), its machine width and — when narrower than 16
    bytes — the reasons irscope can see. `only_narrow=False` returns every access."""
    if not comp.ok:
        return []
    ttir = comp.stage("ttir")
    graph = parse_function(ttir)
    arg_params = _arg_params(comp, graph)
    values = _param_values(comp)
    layouts = _ttgir_layouts(comp)
    widths = _machine_widths(comp)
    out = []
    ttir_lines = ttir.splitlines()
    for op in memory_ops(comp, ["ttir"]):
        if op.space != GLOBAL or op.op == "atomic":  # atomics act on one element per lane by nature
            continue
        line = strip_locations(ttir_lines[op.line])
        operands = re.findall(r"%[\w.$-]+(?:#\d+)?", line.split(op.opcode, 1)[1].split(" : ")[0])
        if not operands:
            continue
        if "tensor<" not in line.split(" : ", 1)[-1]:
            continue  # one element per program (a 0-d pointer): as wide as it can be
        ptr_reach = graph.reaching(operands[0])
        pointers = [a for a in ptr_reach.args if graph.args[a].startswith("!tt.ptr")]
        mask_value = _mask_operand(op, operands)
        mask_reach = graph.reaching(mask_value) if mask_value else None
        width = _width_for(widths, op)
        elem = _ELEM_BYTES.get(op.elem_type or "", None)
        layout = layouts.get((op.source_line, op.op)) if op.source_line is not None else None
        contiguous = layout[0] if layout else None
        diag = Diagnosis(op.line, op.source_line, op.op, arg_params.get(pointers[0]) if pointers else None,
                         width, elem, contiguous)
        narrow = width is not None and width < VECTOR_BYTES
        if only_narrow and not narrow:
            continue
        if width is None or narrow:
            diag.reasons = _reasons(graph, arg_params, values, ptr_reach, mask_reach, elem, layout)
        out.append(diag)
    return _guesses_said(comp, out)


def _guesses_said(comp, diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """A reason about an argument irscope made up (--no-run, no launch) says so: "n = 3 is a guess"."""
    guesses = comp.launch.guesses
    if not guesses:
        return diagnoses
    for d in diagnoses:
        d.reasons = [Reason(r.kind, r.arg, f"{r.text} ({r.arg} = {guesses[r.arg]} is a guess)", r.fix)
                     if r.arg in guesses else r for r in d.reasons]
    return diagnoses


def _reasons(graph: FunctionGraph, arg_params, values, ptr_reach, mask_reach, elem, layout) -> list[Reason]:
    reasons: list[Reason] = []
    for arg in sorted(ptr_reach.args, key=graph.arg_order.index):
        if "tt.divisibility" in graph.arg_attrs.get(arg, ""):
            continue
        name = arg_params.get(arg, arg.lstrip("%"))
        value = values.get(name)
        if _aligned_anyway(value):
            reasons.append(_unspecialized(name, value))
        elif graph.args[arg].startswith("!tt.ptr"):
            where = ""
            address = _data_ptr(value)
            if address is not None:
                where = f" (its data starts {address % 16} bytes past a 16-byte boundary, e.g. a view like x[1:])"
            reasons.append(Reason(
                "unaligned_pointer", name,
                f"{name} is not known to be 16-byte aligned{where}, so Triton cannot use 16-byte accesses on it",
                f"pass a 16-byte-aligned tensor as {name} (a fresh tensor, or .clone() of the view)"))
        elif _scales_lane_index(graph, ptr_reach, arg):
            reasons.append(Reason(
                "runtime_stride", name,
                f"the address is scaled by {name}{_shown(value)}, a stride known only at run time, so Triton "
                f"cannot prove neighbouring elements are contiguous",
                f"make {name} 1 (a contiguous tensor: the JIT then folds it to a constant) or pass it as tl.constexpr"))
        else:
            reasons.append(Reason(
                "unaligned_offset", name,
                f"the address adds an offset computed from {name}{_shown(value)}, which is not a multiple of 16, "
                f"so each thread's run of elements may start off a 16-byte boundary",
                f"make {name} a multiple of 16 (e.g. pad the rows), or promise it with tl.multiple_of({name}, 16) "
                f"when it is one"))
    stride = _constant_stride(graph, ptr_reach)
    if stride is not None:
        reasons.append(Reason(
            "constant_stride", None,
            f"neighbouring elements are {stride} elements apart in memory (the offset is multiplied by {stride}), "
            f"so there is no contiguous run to load as one vector",
            "store the data so that the dimension a thread walks along is contiguous (stride 1)"))
    if mask_reach is not None:
        for arg in sorted(mask_reach.args, key=graph.arg_order.index):
            if graph.args[arg].startswith("!tt.ptr") or "tt.divisibility" in graph.arg_attrs.get(arg, ""):
                continue
            name = arg_params.get(arg, arg.lstrip("%"))
            if _aligned_anyway(values.get(name)):
                reason = _unspecialized(name, values.get(name))
                if reason not in reasons:
                    reasons.append(reason)
                continue
            reasons.append(Reason(
                "mask_not_divisible", name,
                f"the mask is built from {name}{_shown(values.get(name))}, which is not a multiple of 16, so the "
                f"mask could switch off in the middle of a vector and Triton keeps each element separate",
                f"pad {name} to a multiple of 16 (allocate the tensors that long), or promise it with "
                f"tl.multiple_of({name}, 16) when it always is one"))
    # The layout's sizePerThread is picked from what Triton could prove about contiguity, so a narrow layout
    # is a consequence of the reasons above when there are any; on its own it is the cause (a small BLOCK).
    unknown_layout = None
    if layout is not None and elem and not reasons:
        contiguous, spt, layout_name = layout
        if contiguous is not None and spt is not None and contiguous * elem < VECTOR_BYTES:
            reasons.append(Reason(
                "layout", None,
                f"each thread owns only {contiguous} neighbouring element(s) of {elem} bytes "
                f"({layout_name} sizePerThread = {spt}), so at most {contiguous * elem} bytes per access",
                "give each thread more elements: a larger BLOCK size, or fewer num_warps"))
        elif contiguous is not None and contiguous * elem < VECTOR_BYTES:
            reasons.append(Reason(
                "layout", None,
                f"the tensor is accessed in the {layout_name} layout it was computed in, where Triton finds only "
                f"{contiguous} neighbouring element(s) of {elem} bytes per thread (contiguity = {contiguous}), so at "
                f"most {contiguous * elem} bytes per access",
                f"convert it to a blocked layout before the store (Triton does so when it pays: compare "
                f"{layout_name} in the TTGIR), or store a larger tile per thread"))
        elif spt is None:
            unknown_layout = layout_name
    if not reasons:
        where = f" (the access is in the {unknown_layout} layout, whose per-thread runs irscope does not work out)" \
            if unknown_layout else ""
        reasons.append(Reason(
            "unknown", None,
            "irscope sees no missing alignment or divisibility fact; Triton's contiguity analysis still could not "
            f"prove a wider access is safe{where}",
            "tell Triton what you know: tl.multiple_of(offsets, 16) and tl.max_contiguous(offsets, 16)"))
    return reasons


def _aligned_anyway(value: Any) -> bool:
    """An int that is a multiple of 16, or a tensor on a 16-byte boundary: the JIT would have marked it
    divisible unless the kernel told it not to specialize on it."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value % 16 == 0 and value != 0
    address = _data_ptr(value)
    return address is not None and address % 16 == 0


def _unspecialized(name: str, value: Any) -> Reason:
    what = f"{name} = {value} is a multiple of 16" if isinstance(value, int) else f"{name} is 16-byte aligned"
    return Reason(
        "not_specialized", name,
        f"{what}, but the JIT did not specialize on it (do_not_specialize, or a value Triton does not "
        f"specialize), so the compiler cannot count on it",
        f"drop {name} from do_not_specialize, or promise it in the kernel with tl.multiple_of({name}, 16)")


def _shown(value: Any) -> str:
    return f" = {value}" if isinstance(value, int) and not isinstance(value, bool) else ""


def _scales_lane_index(graph: FunctionGraph, reach, arg: str) -> bool:
    """Whether `arg` multiplies a per-lane index (something built from tt.make_range): a stride between
    neighbouring elements, rather than a per-program offset such as `row * row_stride`."""
    for d in reach.ops:
        if d.opcode != "arith.muli" or len(d.operands) != 2:
            continue
        for this, other in (d.operands, d.operands[::-1]):
            if arg in graph.reaching(this).args and any(o.opcode == "tt.make_range"
                                                        for o in graph.reaching(other).ops):
                return True
    return False


def _constant_stride(graph: FunctionGraph, reach) -> int | None:
    for d in reach.ops:
        if d.opcode != "arith.muli" or len(d.operands) != 2:
            continue
        for this, other in (d.operands, d.operands[::-1]):
            k = constant_value(graph, this)
            if k is not None and k not in (0, 1) and any(o.opcode == "tt.make_range" for o in graph.reaching(other).ops):
                return k
    return None


def _mask_operand(op: MemoryOp, operands: list[str]) -> str | None:
    index = {"tt.load": 1, "tt.store": 2, "tt.atomic_rmw": 2}.get(op.opcode)
    if index is not None and op.masked and len(operands) > index:
        return operands[index]
    return None


def _arg_params(comp, graph: FunctionGraph) -> dict[str, str]:
    """TTIR argument (%x_ptr or %arg0) -> kernel parameter name."""
    runtime = [name for name, kind in comp.signature.items() if kind != "constexpr"
               and comp.specialization.get(name) != "constant"]
    out = {}
    for i, arg in enumerate(graph.arg_order):
        bare = arg.lstrip("%")
        out[arg] = bare if bare in comp.signature else (runtime[i] if i < len(runtime) else bare)
    return out


def _param_values(comp) -> dict[str, Any]:
    from ..triton_compat import bind_arguments
    try:
        return bind_arguments(comp.kernel.jit, comp.launch.args, comp.launch.kwargs)
    except Exception:
        return {}


def _data_ptr(value: Any) -> int | None:
    try:
        return int(value.data_ptr())
    except Exception:
        return None


def _ttgir_layouts(comp) -> dict[tuple[int | None, str], tuple[int | None, list[int] | None, str]]:
    """(source line, op) -> (contiguous elements per thread, sizePerThread, layout name) of TTGIR global
    accesses: from the `#blocked` layout of the access, or from the `contiguity` Triton writes on buffer
    ops and async copies when the layout is another kind (an MMA result stored as it is, say)."""
    text = comp.stage("ttgir")
    blocked = {}
    for m in re.finditer(r"^(#[\w]+) = #ttg\.blocked<\{sizePerThread = \[([\d, ]+)\].*?order = \[([\d, ]+)\]",
                         text, re.MULTILINE):
        spt = [int(x) for x in m.group(2).split(",")]
        order = [int(x) for x in m.group(3).split(",")]
        blocked[m.group(1)] = (spt[order[0]], spt)
    out: dict[tuple[int | None, str], tuple[int | None, list[int] | None, str]] = {}
    lines = text.splitlines()
    for op in memory_ops(comp, ["ttgir"]):
        if op.space != GLOBAL or op.source_line is None:
            continue
        line = strip_locations(lines[op.line])
        type_text = line.split(" : ", 1)[-1]
        names = re.findall(r",\s*(#\w+)>", type_text)
        name = next((n for n in names if n in blocked), None)
        attr = re.search(r"\bcontiguity = (\d+)", line)
        if name is not None:
            contiguous, spt = blocked[name]
            if attr:
                contiguous = min(contiguous, int(attr.group(1)))
            found = (contiguous, spt, name)
        elif names:
            contiguous = int(attr.group(1)) if attr else _runs_in_tritons_layout(text, op.line)
            found = (contiguous, None, names[0])
        else:
            continue
        key = (op.source_line, op.op)
        if key not in out or (found[0] or 0) < (out[key][0] or 0):
            out[key] = found
    return out


def _runs_in_tritons_layout(ttgir: str, line: int) -> int | None:
    """Consecutive elements per thread in the layout of the access on TTGIR `line`, from Triton's own
    linear layout of it. Triton 3.7+ writes this as `contiguity` on buffer ops; 3.6 does not, and its
    layout says the same as far as the layout goes (Triton's value also caps it by what the address
    analysis proves, which the other reasons cover)."""
    from .coalescing_match import triton_layouts

    found = triton_layouts(ttgir).get(line)
    return found.contiguous_registers() if found is not None else None


def _machine_widths(comp) -> dict[tuple[int | None, str], list[int]]:
    """(source line, op) -> widths of the primary stage's global accesses."""
    out: dict[tuple[int | None, str], list[int]] = defaultdict(list)
    for op in memory_ops(comp, [primary_stage(comp)]):
        if op.space == GLOBAL and op.width_bytes is not None:
            out[(op.source_line, op.op)].append(op.width_bytes)
    return out


def _width_for(widths, op: MemoryOp) -> int | None:
    found = widths.get((op.source_line, op.op))
    if found:
        return min(found)
    if op.source_line is None:  # no source map: the narrowest access of this kind stands for all
        same = [w for (line, kind), ws in widths.items() if kind == op.op for w in ws]
        return min(same) if same else None
    return None


# -------------------------------------------------------------------------------------- what if

def vectorization(comp, with_what_if: bool = True) -> tuple[list[Diagnosis], "WhatIf | None"]:
    """The narrow accesses and, when asked, the what-if recompile: computed once per compilation (the
    report and the findings both read them; a what-if is a compile)."""
    cache = comp.__dict__.setdefault("_vectorization", {})
    if "diagnoses" not in cache:
        cache["diagnoses"] = why_not_vectorized(comp)
    if with_what_if and "what_if" not in cache:
        cache["what_if"] = what_if(comp, cache["diagnoses"]) if cache["diagnoses"] else None
    return cache["diagnoses"], cache.get("what_if")


@dataclass
class WhatIf:
    """The kernel recompiled with the fixes irscope suggests, and how the access widths change."""

    changes: list[str]                      # what was changed, in words
    comp: Any                               # the recompiled Compilation
    rows: list[dict[str, Any]]              # per (source line, op): before / after widths
    remaining: list[Diagnosis] = field(default_factory=list)  # what still keeps accesses narrow after the fix

    @property
    def improved(self) -> bool:
        return any((r["after"] or 0) > (r["before"] or 0) for r in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {"changes": list(self.changes), "rows": list(self.rows), "improved": self.improved,
                "ok": bool(self.comp is not None and self.comp.ok),
                "remaining": [d.to_json() for d in self.remaining]}


def what_if(comp, diagnoses: list[Diagnosis] | None = None) -> WhatIf | None:
    """Recompile with every fix that can be applied to the launch itself: ints that the mask or the
    address depend on rounded up to a multiple of 16, misaligned tensors replaced by aligned copies, a
    runtime stride set to 1 (what a contiguous tensor gives). None when there is nothing to change."""
    from ..compile import compile_launch
    from ..triton_compat import kernel_param_names

    diagnoses = why_not_vectorized(comp) if diagnoses is None else diagnoses
    targets: dict[str, str] = {}
    for d in diagnoses:
        for r in d.reasons:
            if r.arg and r.kind in ("unaligned_pointer", "mask_not_divisible", "unaligned_offset", "runtime_stride"):
                targets.setdefault(r.arg, r.kind)
    if not targets:
        return None
    names = kernel_param_names(comp.kernel.jit)
    args = list(comp.launch.args)
    kwargs = dict(comp.launch.kwargs)
    changes = []

    def fixed(name: str, value: Any) -> Any:
        if name not in targets:
            return value
        if targets[name] == "unaligned_pointer" and hasattr(value, "clone"):
            changes.append(f"{name} an aligned copy")
            return value.clone()
        if targets[name] == "runtime_stride" and isinstance(value, int) and not isinstance(value, bool):
            changes.append(f"{name} {value} -> 1 (contiguous)")
            return 1
        if isinstance(value, int) and not isinstance(value, bool):
            rounded = -(-value // 16) * 16
            changes.append(f"{name} {value} -> {rounded}")
            return rounded
        return value

    for i, value in enumerate(args):
        if i < len(names):
            args[i] = fixed(names[i], value)
    for name in list(kwargs):
        kwargs[name] = fixed(name, kwargs[name])
    if not changes:
        return None
    launch = dataclasses.replace(comp.launch, args=tuple(args), kwargs=kwargs, origin="what-if")
    fixed_comp = compile_launch(launch, comp.target, comp.source_text)
    keys = {(d.source_line, d.op) for d in diagnoses}
    remaining = why_not_vectorized(fixed_comp) if fixed_comp.ok else []
    return WhatIf(changes, fixed_comp, _compare(comp, fixed_comp, keys), remaining)


def _compare(before, after, keys: set | None = None) -> list[dict[str, Any]]:
    """Widths before and after, per (source line, op) among `keys` (default: every global access)."""
    old = _machine_widths(before)
    new = _machine_widths(after) if after.ok else {}
    wanted = set(old) | set(new)
    if keys and all(line is not None for line, _ in keys):
        wanted &= keys
    rows = []
    for key in sorted(wanted, key=lambda k: (k[0] is None, k[0] or 0, k[1])):
        rows.append({"source_line": key[0], "op": key[1],
                     "before": min(old[key]) if old.get(key) else None,
                     "after": min(new[key]) if new.get(key) else None})
    return rows
