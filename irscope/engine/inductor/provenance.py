"""Which ATen ops and source nodes each Inductor kernel fuses, as Inductor wrote them.

A wrapper (`output_code.py`) puts a comment block above each `NAME = async_compile.triton('NAME', ...)`:
`# Topologically Sorted Source Nodes: [layer_norm], Original ATen: [aten.native_layer_norm]` (older
PyTorch: `# Source Nodes: [...], Original ATen: [...]`) and, from 2.4 on, `# Source node to ATen node
mapping:` with one `#   node => aten nodes` line each. A kernel module alone carries none of that; its
name (`triton_per_fused_gelu_sum_1`) is built from the ATen ops it fuses, and is split back into them only
where every piece is an ATen op name (said as read from the name).
"""

from __future__ import annotations

import functools
import re

_ASSIGN = re.compile(r"^(\w+)\s*=\s*async_compile\.triton\(\s*['\"](\w+)['\"]", re.MULTILINE)
_NODES = re.compile(
    r"#\s*(?:Topologically Sorted )?Source Nodes:\s*\[(?P<nodes>[^\]]*)\],\s*"
    r"Original ATen:\s*\[(?P<aten>[^\]]*)\]"
)
_MAPPING = re.compile(r"^#\s+(\S+)\s+=>\s+(.*)$")


def _split_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def wrapper_provenance(text: str) -> dict[str, dict]:
    """Per kernel name (the wrapper's variable): aten_ops, source_nodes, node_map, line (of the assignment)."""
    lines = text.splitlines()
    found: dict[str, dict] = {}
    for match in _ASSIGN.finditer(text):
        number = text.count("\n", 0, match.start())  # 0-based line of the assignment
        block: list[str] = []
        above = number - 1
        while above >= 0 and lines[above].lstrip().startswith("#"):
            block.insert(0, lines[above].strip())
            above -= 1
        entry = {"aten_ops": [], "source_nodes": [], "node_map": {}, "line": number + 1}
        in_mapping = False
        for comment in block:
            nodes = _NODES.search(comment)
            if nodes:
                entry["source_nodes"] = _split_list(nodes.group("nodes"))
                entry["aten_ops"] = _split_list(nodes.group("aten"))
                continue
            if comment.startswith("# Source node to ATen node mapping"):
                in_mapping = True
                continue
            if comment.startswith("# Graph fragment") or comment.startswith("# kernel path"):
                in_mapping = False
                continue
            mapped = _MAPPING.match(comment) if in_mapping else None
            if mapped:
                entry["node_map"][mapped.group(1)] = _split_list(mapped.group(2))
        found[match.group(1)] = entry
    return found


@functools.lru_cache(maxsize=1)
def _aten_names() -> frozenset[str]:
    import torch

    return frozenset(name for name in dir(torch.ops.aten) if not name.startswith("__"))


def ops_from_name(kernel_name: str) -> list[str]:
    """`triton_poi_fused_add_mul_0` -> ['aten.add', 'aten.mul'] when the name splits wholly into ATen op
    names (the fewest pieces); [] otherwise (a template's, or a name Inductor shortened)."""
    match = re.match(r"^triton_\w+?_fused_(?P<ops>.+?)_\d+$", kernel_name)
    if not match:
        return []
    words = match.group("ops").split("_")
    names = _aten_names()
    best: list[list[str] | None] = [None] * (len(words) + 1)
    best[0] = []
    for end in range(1, len(words) + 1):
        for start in range(end):
            if best[start] is None:
                continue
            piece = "_".join(words[start:end])
            # a leading underscore is its own word: '_to_copy' arrives as ['', 'to', 'copy']
            if piece in names and (best[end] is None or len(best[start]) + 1 < len(best[end])):
                best[end] = best[start] + [piece]
    return [f"aten.{op}" for op in best[-1]] if best[-1] else []


# Where each source node of the graphs torch.compile handed to Inductor in this process came from: the
# innermost frame of its stack trace outside torch and irscope (the model's own line).
_node_lines: dict[str, list[tuple[str, int]]] = {}
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def remember_node_lines(graph_module) -> None:
    """Called with each graph Dynamo hands to the inductor backend (virtual_compile.py)."""
    import os

    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for node in getattr(getattr(graph_module, "graph", None), "nodes", []):
        trace = (getattr(node, "meta", {}) or {}).get("stack_trace") or ""
        frames = [(m.group("file"), int(m.group("line"))) for m in _FRAME.finditer(trace)]
        frames = [
            f for f in frames if "-packages" not in f[0] and not f[0].startswith(here + os.sep)
        ]
        if frames and frames[-1] not in _node_lines.setdefault(node.name, []):
            _node_lines[node.name].append(frames[-1])


def model_lines(nodes: list[str]) -> list[dict]:
    """The model's own lines of these source nodes, where torch.compile ran in this process."""
    return [
        {"node": n, "file": f, "line": line} for n in nodes for f, line in _node_lines.get(n, [])
    ]


def describe_kernel(kernel, wrapper_text: str = "") -> dict:
    """An Inductor kernel as plain data: what it is, what it fuses and where that was read."""
    written = wrapper_provenance(wrapper_text).get(kernel.name) if wrapper_text else None
    if written and written["aten_ops"]:
        aten, nodes, node_map, ops_from = (
            written["aten_ops"],
            written["source_nodes"],
            written["node_map"],
            "wrapper",
        )
    else:
        aten, nodes, node_map = ops_from_name(kernel.name), [], {}
        ops_from = "kernel name" if aten else "none"
    generated_for = kernel.generated_for
    device = kernel.triton_meta.get("device")
    fields = ("type", "cc", "multi_processor_count", "warp_size")
    device_data = (
        {f: getattr(device, f) for f in fields if hasattr(device, f)} if device is not None else {}
    )
    return {
        "device": device_data,
        "kernel_kind": kernel.heuristic_type,
        "aten_ops": aten,
        "source_nodes": nodes,
        "node_map": node_map,
        "ops_from": ops_from,
        "generated_for": generated_for,
        "size_hints": {str(k): v for k, v in kernel.size_hints.items()}
        if isinstance(kernel.size_hints, dict)
        else list(kernel.size_hints or []),
        "kernel_name": kernel.inductor_meta.get("kernel_name", kernel.name),
        "model_lines": model_lines(nodes),
        "wrapper_line": written["line"] if written else None,
        "note": CPU_NOTE if generated_for == "cpu" else None,
    }


CPU_NOTE = (
    "generated for CPU by Inductor's Triton CPU backend: a GPU run may choose other block sizes"
)
