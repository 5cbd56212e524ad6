"""An instruction of any stage with what does not change its meaning blanked, so that two compilations'
instructions can be compared line by line (the diff's per-source-line view)."""

from __future__ import annotations

import re

# debug, comments
# registers and SSA values (%r12, %rd3, %5)
_BLANKS = [
    (
        re.compile(r"\s*(loc\([^()]*(\([^()]*\))*[^()]*\)|!dbg ![0-9]+|//.*|#loc[0-9]*)"),
        "",
    ),
    (re.compile(r"/\*[0-9a-f]{4,}\*/"), ""),  # SASS addresses
    (
        re.compile(r"%[A-Za-z_$.]*[0-9]+(?![0-9A-Za-z_])"),
        "%_",
    ),
    (re.compile(r"%[A-Za-z_][\w.$]*"), "%_"),  # named SSA values (%arg0, %offsets)
    (re.compile(r"\b(U?R|P|UP)[0-9]+\b"), r"\1_"),  # SASS registers
    (re.compile(r"\$L__\w+|\.L\w+"), "L_"),  # labels
]


def normalized(text: str) -> str:
    """An instruction with what does not change its meaning blanked: debug locations, register numbers,
    SSA names, SASS addresses, labels. `ld.global.v4.b32 {%r1,...}` and `ld.global.b32 %r5` still differ."""
    for pattern, repl in _BLANKS:
        text = pattern.sub(repl, text)
    return " ".join(text.split())
