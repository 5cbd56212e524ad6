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
