"""Text from a user's file never reaches the terminal raw: control characters are shown, not obeyed."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and C1 controls (a lone 0x9b is a CSI on some terminals).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _shown(match: re.Match) -> str:
    code = ord(match.group())
    return "\\r" if code == 13 else f"\\x{code:02x}"


def safe_text(text: str) -> str:
    """`text` with every control character but tab and newline written out (`\\x1b`), so that escape
    sequences in a file's names, messages or output can move no cursor, set no title, touch no clipboard."""
    return _CONTROLS.sub(_shown, text)


def scrub(value, _seen: set | None = None):
    """Every string in an answer (dataclasses, lists, tuples, dicts, nested) made safe in place; returns it.
    The worker scrubs what it sends, so no pane, panel, title or message can carry a raw control byte."""
    seen = set() if _seen is None else _seen
    if isinstance(value, str):
        return safe_text(value)
    if id(value) in seen or value is None or isinstance(value, (int, float, bytes)):
        return value
    seen.add(id(value))
    if isinstance(value, list):
        value[:] = [scrub(v, seen) for v in value]
    elif isinstance(value, tuple):
        items = tuple(scrub(v, seen) for v in value)
        return type(value)(*items) if hasattr(value, "_fields") else items
    elif isinstance(value, dict):
        items = [(scrub(k, seen), scrub(v, seen)) for k, v in value.items()]
        dict.clear(value)
        # dict's own methods: a Counter's update would count the pairs instead
        for (
            key,
            item,
        ) in items:
            dict.__setitem__(value, key, item)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            current = getattr(value, name, None)
            cleaned = scrub(current, seen)
            if cleaned is not current:
                object.__setattr__(value, name, cleaned)
    return value
