"""TTGIR's layout attributes as written (`#blocked1`, `#ttg.blocked<{...}>`, `#ttg.slice<...>`,
`#ttg.linear<...>`), read into the layout classes of `layouts`.

Apart from `layouts`, which builds linear layouts from those classes and needs no TTGIR text.
"""

from __future__ import annotations

import re
from typing import Any

from irscope.analysis.layouts.owners import (
    BlockedLayout,
    LinearLayoutAttr,
    OpaqueLayout,
    SliceLayout,
)

_ALIAS = re.compile(r"^(#[\w.$-]+)\s*=\s*(#.*)$")
_LIST = re.compile(r"(\w+)\s*=\s*\[([^\]]*)\]")


def _attr_lists(body: str) -> dict[str, tuple[int, ...]]:
    out = {}
    for key, values in _LIST.findall(body):
        out[key] = tuple(int(v) for v in values.replace(" ", "").split(",") if v)
    return out


def parse_layout(text: str, aliases: dict[str, Any]) -> Any:
    """A layout attribute as written in TTGIR (`#blocked1`, `#ttg.blocked<{...}>`, `#ttg.slice<{...}>`)."""
    text = text.strip()
    if text in aliases:
        return aliases[text]
    m = re.match(r"^#(?:ttg|triton_gpu)\.(\w+)<(.*)>$", text, re.S)
    if not m:
        return OpaqueLayout("unknown", text)
    kind, body = m.group(1), m.group(2)
    if kind == "blocked":
        lists = _attr_lists(body)
        if any(v != 1 for v in lists.get("CTAsPerCGA", ())):
            return OpaqueLayout("blocked (multi-CTA)", text)
        try:
            return BlockedLayout(
                lists["sizePerThread"],
                lists["threadsPerWarp"],
                lists["warpsPerCTA"],
                lists["order"],
            )
        except KeyError:
            return OpaqueLayout("blocked", text)
    if kind == "linear":
        bases = {}
        for key in ("register", "lane", "warp", "block"):
            m = re.search(key + r"\s*=\s*\[((?:\s*\[[^\]]*\]\s*,?)*)\]", body)
            if m is None:
                bases[key] = None
                continue
            bases[key] = tuple(
                tuple(int(v) for v in inner.replace(" ", "").split(",") if v)
                for inner in re.findall(r"\[([^\]]*)\]", m.group(1))
            )
        if (
            bases["register"] is not None
            and bases["lane"] is not None
            and bases["warp"] is not None
            and not bases.get("block")
        ):
            return LinearLayoutAttr(bases["register"], bases["lane"], bases["warp"])
        return OpaqueLayout("linear", text)
    if kind == "slice":
        dim = re.search(r"dim\s*=\s*(\d+)", body)
        parent = re.search(r"parent\s*=\s*(#[\w.]+(?:<.*>)?)\s*}?\s*$", body, re.S)
        if dim and parent:
            return SliceLayout(
                int(dim.group(1)), parse_layout(parent.group(1).rstrip("}").strip(), aliases)
            )
    return OpaqueLayout(kind, text)


def layout_aliases(ttgir: str) -> dict[str, Any]:
    """`#blocked = #ttg.blocked<{...}>` definitions at the top of a TTGIR module."""
    aliases: dict[str, Any] = {}
    for line in ttgir.splitlines():
        if line.startswith("#loc"):
            continue
        m = _ALIAS.match(line.strip())
        if m and not m.group(2).startswith("#loc") and not m.group(2).startswith("loc("):
            aliases[m.group(1)] = parse_layout(m.group(2), aliases)
        elif line.startswith("module"):
            break
    return aliases
