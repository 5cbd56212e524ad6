"""SASS listings from two disassemblers, made comparable: irscope's SASS stage (nvdisasm) and
`cuobjdump -sass` print the same instructions at the same addresses, but branch and call targets are labels
in one and addresses in the other. `instructions()` reads either into {address: instruction}, targets as
addresses. Used by gpu_fidelity.py (the real cubin, read by cuobjdump on the GPU machine) and by
tests/functional/test_validation_sass_cuobjdump.py."""

from __future__ import annotations

import re
import subprocess
import tempfile

_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_LABEL = re.compile(r"^\s*([^\s:/]+):\s*$")  # a branch label (.L_x_3) or a function's symbol


def instructions(text: str) -> dict[int, str]:
    """address -> instruction text, labels replaced by the address they name."""
    labels, pending, found = {}, [], {}
    for line in text.splitlines():
        label = _LABEL.match(line)
        if label:
            pending.append(label.group(1))
            continue
        match = _INSTRUCTION.search(line)
        if match:
            address = int(match.group(1), 16)
            labels.update((name, address) for name in pending)
            pending = []
            found[address] = re.sub(r"\s+", " ", match.group(2))
    for name in pending:  # a label after the last instruction: the end of the code
        labels[name] = max(found, default=-16) + 16
    return {a: re.sub(r"`\(([^)\s]+)\)", lambda m: hex(labels.get(m.group(1), -1)), text) for a, text in found.items()}


def cuobjdump_instructions(cubin: bytes, cuobjdump: str) -> dict[int, str]:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([cuobjdump, "-sass", f.name], capture_output=True, text=True, check=True).stdout
    return instructions(out)
