"""How a kernel's specializations are told apart in a list: by the constexprs whose values differ between them.

Tutorial 02's softmax has one specialization per power of two of its row length: the same name, line,
target and pointer letters, a different BLOCK_SIZE. The report's line on named specializations
(core/report.py) and the TUI's picker (tui/showing.py) name only what differs. Plain data only: the
front end imports this without torch or Triton.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

_CALL = re.compile(r"^(\w+)\((.*)\)$", re.DOTALL)


def differing(values: Iterable[dict[str, Any]]) -> list[str]:
    """The keys whose values are not the same in every dict (a key missing from one differs), in the order
    they first appear."""
    values = list(values)
    names: dict[str, None] = {}
    for value in values:
        names.update(dict.fromkeys(value))
    missing = object()
    return [name for name in names if len({repr(value.get(name, missing)) for value in values}) > 1]


def shown_values(
    values: dict[str, Any], names: list[str], among: Iterable[dict[str, Any]] = ()
) -> str:
    """`BLOCK_SIZE=256 num_stages=3`: the named entries of `values` (those present), as NAME=VALUE. A value
    written as a call (a Gluon layout: `BlockedLayout(size_per_thread=[4], threads_per_warp=[32], ...)`) shows
    only the fields that differ from the same call in the other rows (`among`): Gluon tutorial 02's 31
    compilations were all `layout=BlockedL...` in the picker's column, the size that tells them apart cut off."""
    among = list(among)
    return " ".join(
        f"{name}={_differing_fields(values[name], [other.get(name) for other in among])}"
        for name in names
        if name in values
    )


def _differing_fields(value: Any, others: list[Any]) -> str:
    mine = _call_fields(value)
    if mine is None:
        return str(value)
    head, fields = mine
    theirs = [_call_fields(other) for other in others]
    theirs = [t[1] for t in theirs if t is not None and t[0] == head]
    if not theirs:
        return str(value)
    kept = [key for key, text in fields.items() if any(t.get(key) != text for t in theirs)]
    return f"{head}({', '.join(f'{key}={fields[key]}' for key in kept)})" if kept else str(value)


def _call_fields(value: Any) -> tuple[str, dict[str, str]] | None:
    """`Head(a=1, b=[2, 3])` -> ("Head", {"a": "1", "b": "[2, 3]"}); None for anything else."""
    match = _CALL.match(str(value))
    if match is None:
        return None
    fields, depth, start, body = {}, 0, 0, match.group(2)
    for index, char in enumerate(body + ","):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            key, equals, text = body[start:index].strip().partition("=")
            if not equals:
                return None
            fields[key.strip()] = text.strip()
            start = index + 1
    return match.group(1), fields
