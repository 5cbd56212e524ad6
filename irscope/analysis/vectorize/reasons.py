"""The reasons a global access is not vectorized, in words, each with the fix for it.

Read off the TTIR dataflow (which kernel arguments reach the address and the mask, a stride multiplying
the per-lane index) and the launch's values (is a pointer 16-byte aligned, is an int a multiple of 16),
and the TTGIR layout for when nothing else is missing. `vectorize` decides which accesses are narrow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from irscope.analysis.dataflow import FunctionGraph, constant_value
from irscope.analysis.vectorize.facts import data_ptr

VECTOR_BYTES = 16  # the widest per-thread global access Triton emits (128 bits)


@dataclass(frozen=True)
class Reason:
    kind: str  # "unaligned_pointer" | "mask_not_divisible" | "unaligned_offset" | "runtime_stride"
    # | "not_specialized" | "constant_stride" | "layout" | "unknown"
    arg: str | None  # the kernel argument it is about, when there is one
    text: str  # why, in plain words
    fix: str  # what to change

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "arg": self.arg, "why": self.text, "fix": self.fix}


def reasons_for(
    graph: FunctionGraph, arg_params, values, ptr_reach, mask_reach, elem, layout
) -> list[Reason]:
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
            address = data_ptr(value)
            if address is not None:
                where = f" (its data starts {address % 16} bytes past a 16-byte boundary, e.g. a view like x[1:])"
            reasons.append(
                Reason(
                    "unaligned_pointer",
                    name,
                    f"{name} is not known to be 16-byte aligned{where}, so Triton cannot use 16-byte accesses on it",
                    f"pass a 16-byte-aligned tensor as {name} (a fresh tensor, or .clone() of the view)",
                )
            )
        elif _scales_lane_index(graph, ptr_reach, arg):
            reasons.append(
                Reason(
                    "runtime_stride",
                    name,
                    f"the address is scaled by {name}{_shown(value)}, a stride known only at run time, so Triton "
                    f"cannot prove neighbouring elements are contiguous",
                    f"make {name} 1 (a contiguous tensor: the JIT then folds it to a constant) "
                    "or pass it as tl.constexpr",
                )
            )
        else:
            reasons.append(
                Reason(
                    "unaligned_offset",
                    name,
                    f"the address adds an offset computed from {name}{_shown(value)}, which is not a multiple of 16, "
                    f"so each thread's run of elements may start off a 16-byte boundary",
                    f"make {name} a multiple of 16 (e.g. pad the rows), or promise it with tl.multiple_of({name}, 16) "
                    f"when it is one",
                )
            )
    stride = _constant_stride(graph, ptr_reach)
    if stride is not None:
        reasons.append(
            Reason(
                "constant_stride",
                None,
                f"neighbouring elements are {stride} elements apart in memory (the offset is multiplied by {stride}), "
                f"so there is no contiguous run to load as one vector",
                "store the data so that the dimension a thread walks along is contiguous (stride 1)",
            )
        )
    if mask_reach is not None:
        for arg in sorted(mask_reach.args, key=graph.arg_order.index):
            if graph.args[arg].startswith("!tt.ptr") or "tt.divisibility" in graph.arg_attrs.get(
                arg, ""
            ):
                continue
            name = arg_params.get(arg, arg.lstrip("%"))
            if _aligned_anyway(values.get(name)):
                reason = _unspecialized(name, values.get(name))
                if reason not in reasons:
                    reasons.append(reason)
                continue
            reasons.append(
                Reason(
                    "mask_not_divisible",
                    name,
                    f"the mask is built from {name}{_shown(values.get(name))}, which is not a multiple of 16, so the "
                    f"mask could switch off in the middle of a vector and Triton keeps each element separate",
                    f"pad {name} to a multiple of 16 (allocate the tensors that long), or promise it with "
                    f"tl.multiple_of({name}, 16) when it always is one",
                )
            )
    # The layout's sizePerThread is picked from what Triton could prove about contiguity, so a narrow layout
    # is a consequence of the reasons above when there are any; on its own it is the cause (a small BLOCK).
    unknown_layout = None
    if layout is not None and elem and not reasons:
        contiguous, spt, layout_name = layout
        if contiguous is not None and spt is not None and contiguous * elem < VECTOR_BYTES:
            reasons.append(
                Reason(
                    "layout",
                    None,
                    f"each thread owns only {contiguous} neighbouring element(s) of {elem} bytes "
                    f"({layout_name} sizePerThread = {spt}), so at most {contiguous * elem} bytes per access",
                    "give each thread more elements: a larger BLOCK size, or fewer num_warps",
                )
            )
        elif contiguous is not None and contiguous * elem < VECTOR_BYTES:
            reasons.append(
                Reason(
                    "layout",
                    None,
                    f"the tensor is accessed in the {layout_name} layout it was computed in, where Triton finds only "
                    f"{contiguous} neighbouring element(s) of {elem} bytes per thread "
                    f"(contiguity = {contiguous}), so at "
                    f"most {contiguous * elem} bytes per access",
                    f"convert it to a blocked layout before the store (Triton does so when it pays: compare "
                    f"{layout_name} in the TTGIR), or store a larger tile per thread",
                )
            )
        elif spt is None:
            unknown_layout = layout_name
    if not reasons:
        where = (
            f" (the access is in the {unknown_layout} layout, whose per-thread runs irscope does not work out)"
            if unknown_layout
            else ""
        )
        reasons.append(
            Reason(
                "unknown",
                None,
                "irscope sees no missing alignment or divisibility fact; Triton's contiguity analysis still could not "
                f"prove a wider access is safe{where}",
                "tell Triton what you know: tl.multiple_of(offsets, 16) and tl.max_contiguous(offsets, 16)",
            )
        )
    return reasons


def _aligned_anyway(value: Any) -> bool:
    """An int that is a multiple of 16, or a tensor on a 16-byte boundary: the JIT would have marked it
    divisible unless the kernel told it not to specialize on it."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value % 16 == 0 and value != 0
    address = data_ptr(value)
    return address is not None and address % 16 == 0


def _unspecialized(name: str, value: Any) -> Reason:
    what = (
        f"{name} = {value} is a multiple of 16"
        if isinstance(value, int)
        else f"{name} is 16-byte aligned"
    )
    return Reason(
        "not_specialized",
        name,
        f"{what}, but the JIT did not specialize on it (do_not_specialize, or a value Triton does not "
        f"specialize), so the compiler cannot count on it",
        f"drop {name} from do_not_specialize, or promise it in the kernel with tl.multiple_of({name}, 16)",
    )


def _shown(value: Any) -> str:
    return f" = {value}" if isinstance(value, int) and not isinstance(value, bool) else ""


def _scales_lane_index(graph: FunctionGraph, reach, arg: str) -> bool:
    """Whether `arg` multiplies a per-lane index (something built from tt.make_range): a stride between
    neighbouring elements, rather than a per-program offset such as `row * row_stride`."""
    for d in reach.ops:
        if d.opcode != "arith.muli" or len(d.operands) != 2 or _row_offset(d):
            continue
        for this, other in (d.operands, d.operands[::-1]):
            if arg in graph.reaching(this).args and any(
                o.opcode == "tt.make_range" for o in graph.reaching(other).ops
            ):
                return True
    return False


def _constant_stride(graph: FunctionGraph, reach) -> int | None:
    for d in reach.ops:
        if d.opcode != "arith.muli" or len(d.operands) != 2 or _row_offset(d):
            continue
        for this, other in (d.operands, d.operands[::-1]):
            k = constant_value(graph, this)
            if (
                k is not None
                and k not in (0, 1)
                and any(o.opcode == "tt.make_range" for o in graph.reaching(other).ops)
            ):
                return k
    return None


def _row_offset(d) -> bool:
    """Whether a multiplication's result is constant along the last (innermost) dimension of the tile, as
    `rows[:, None] * row_stride` is (tensor<4x1xi32>): it moves whole rows, a per-row offset, not the distance
    between a thread's neighbouring elements."""
    found = re.search(r":\s*tensor<((?:\d+x)+)\w+>\s*$", d.text)
    dims = found.group(1).rstrip("x").split("x") if found else []
    return len(dims) > 1 and dims[-1] == "1"
