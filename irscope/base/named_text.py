"""How a kernel's specializations are told apart in a list: by the constexprs whose values differ between them.

Tutorial 02's softmax has one specialization per power of two of its row length: the same name, line,
target and pointer letters, a different BLOCK_SIZE. The report's line on named specializations
(core/report.py) and the TUI's picker (tui/showing.py) name only what differs. Plain data only: the
front end imports this without torch or Triton.
"""

from __future__ import annotations

from typing import Any, Iterable


def differing(values: Iterable[dict[str, Any]]) -> list[str]:
    """The keys whose values are not the same in every dict (a key missing from one differs), in the order
    they first appear."""
    values = list(values)
    names: dict[str, None] = {}
    for value in values:
        names.update(dict.fromkeys(value))
    missing = object()
    return [name for name in names if len({repr(value.get(name, missing)) for value in values}) > 1]


def shown_values(values: dict[str, Any], names: list[str]) -> str:
    """`BLOCK_SIZE=256 num_stages=3`: the named entries of `values` (those present), as NAME=VALUE."""
    return " ".join(f"{name}={values[name]}" for name in names if name in values)
