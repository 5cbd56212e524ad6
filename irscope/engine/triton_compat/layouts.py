"""Linear layouts of a TTGIR module's loads and stores, from Triton's own layout code (the coalescing
analysis)."""

from __future__ import annotations

import functools
import os

from irscope.analysis.layouts.owners import LinearLayout
from irscope.analysis.memory.ttgir import ACCESS_OP_NAMES, ttgir_access_ops
from irscope.engine.triton_compat.kernel_prints import stderr_captured


def ttgir_access_linear_layouts(ttgir: str) -> list[dict | None] | None:
    """Triton's own linear layout of the pointer operand of every load/store-like op, in text order.

    Each item: {"op", "shape", "reg", "lane", "warp"} (bases as lists), or None for a scalar pointer or a
    layout Triton cannot turn into a distributed linear layout. Returns None when this Triton does not
    expose the machinery to Python (gluon's `to_linear_layout` appeared in 3.5/3.6) or the module does
    not parse. Parsing a module costs about 0.2 s, so callers use this only for layouts they cannot build.
    """
    import tempfile

    try:
        import triton._C.libtriton as libtriton
        from triton._C.libtriton import gluon_ir, ir
    except ImportError:
        return None
    if not hasattr(gluon_ir, "GluonOpBuilder") or not hasattr(
        gluon_ir.GluonOpBuilder, "to_linear_layout"
    ):
        return None
    _silence_nanobind_leak_report()
    out: list[dict | None] = []
    try:
        context = ir.context()
        ir.load_dialects(context)
        for backend in ("nvidia", "amd"):
            loader = getattr(getattr(libtriton, backend, None), "load_dialects", None)
            if loader is not None:
                loader(context)
        # MLIR prints parse diagnostics on fd 2: keep them off the terminal
        with tempfile.NamedTemporaryFile("w", suffix=".ttgir") as f, stderr_captured():
            f.write(ttgir)
            f.flush()
            module = ir.parse_mlir_module(f.name, context)
        builder = gluon_ir.GluonOpBuilder(context)

        def visit(op):
            if op.get_name() not in ACCESS_OP_NAMES:
                return
            try:
                value = op.get_operand(0)
                shape = _value_shape(value)
                layout = builder.get_gluon_layout_from_tensor(value)
                attr = layout._to_ir(builder)
                linear = builder.to_linear_layout(attr, shape)
                out.append(
                    {
                        "op": op.get_name(),
                        "shape": shape,
                        "reg": [list(b) for b in linear.reg_bases],
                        "lane": [list(b) for b in linear.lane_bases],
                        "warp": [list(b) for b in linear.warp_bases],
                    }
                )
            except Exception:  # a scalar pointer, or a layout with no distributed linear form
                out.append(None)

        # No gc.collect() after: the MLIR objects hold no reference cycle (a collect after 40 calls finds
        # nothing), they go when this returns, and a full collect costs 0.1-0.2 s a call on a large heap.
        module.walk(visit)
    except Exception:
        return None
    return out


def _value_shape(value) -> list[int]:
    """A tensor value's shape: `value.get_shape()` where the bindings have it (3.7+); Triton 3.6's values
    only print their type, `tensor<16x128x!tt.ptr<f16>, #layout>`, so the shape is read from that."""
    if hasattr(value, "get_shape"):
        return list(value.get_shape())
    import re

    m = re.match(r"\s*tensor<((?:\d+x)+)", str(value.get_type()))
    if m is None:
        raise ValueError("not a ranked tensor")
    return [int(d) for d in m.group(1).rstrip("x").split("x")]


_leak_report_silenced = False


def _silence_nanobind_leak_report() -> None:
    """Triton's gluon bindings keep a few MLIR attributes alive until the interpreter exits, and nanobind
    then prints a "leaked instances" report on stderr. It is Triton's, harmless, and would end every
    irscope run that used them: after the program's own exit handlers, stderr goes to /dev/null."""
    global _leak_report_silenced
    if _leak_report_silenced:
        return
    _leak_report_silenced = True
    import atexit

    def silence() -> None:
        try:
            sys_stderr_fd = 2
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys_stderr_fd)
        except OSError:
            pass

    atexit.register(silence)


@functools.lru_cache(maxsize=8)
def linear_layouts_by_line(ttgir: str) -> dict[int, LinearLayout]:
    """Linear layouts of the module's load/store pointer tensors from Triton itself, by TTGIR line.
    Triton parses the whole module for this (~0.2 s): kept for the few TTGIR texts last asked about
    (coalescing and the why-not-vectorized analysis both ask). Callers only read the dict."""
    found = ttgir_access_linear_layouts(ttgir)
    if not found:
        return {}
    ops = ttgir_access_ops(ttgir, lambda i: None)
    out = {}
    for op, item in zip(ops, found):
        if item is None or tuple(item["shape"]) != op.shape:
            continue
        out[op.index] = LinearLayout(
            op.shape,
            tuple(map(tuple, item["reg"])),
            tuple(map(tuple, item["lane"])),
            tuple(map(tuple, item["warp"])),
        )
    return out
