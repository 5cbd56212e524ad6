"""SASS listings from two disassemblers, made comparable: irscope's SASS stage (nvdisasm) and
`cuobjdump -sass` print the same instructions at the same addresses, but branch and call targets are labels
in one and addresses in the other. `instructions()` reads either into {address: instruction}, targets as
addresses. Used by gpu_fidelity.py (the real cubin, read by cuobjdump on the GPU machine) and by
tests/functional/test_validation_sass_cuobjdump.py."""

from __future__ import annotations

import re
import struct
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
    return {
        a: re.sub(r"`\(([^)\s]+)\)", lambda m: hex(labels.get(m.group(1), -1)), text)
        for a, text in found.items()
    }


def cuobjdump_instructions(cubin: bytes, cuobjdump: str) -> dict[int, str]:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run(
            [cuobjdump, "-sass", f.name], capture_output=True, text=True, check=True
        ).stdout
    return instructions(out)


def without_file_times(cubin: bytes) -> bytes:
    """The cubin with the modification time of each source file in its DWARF line tables set to 0.

    ptxas reads each file the PTX's `.file` lines name, when it runs, and writes its modification time and
    size into `.debug_line`'s file table: the same PTX gives another cubin on a machine where the file was
    written at another time (a copy of a tutorial, Triton's own `standard.py` installed elsewhere). With
    the times zeroed (each number's encoded length kept), two such cubins compare equal if nothing else
    differs. A cubin with no such section, or one this cannot read, comes back as it was."""
    data = bytearray(cubin)
    try:
        if data[:4] != b"\x7fELF" or data[4] != 2:  # 64-bit ELF only, as ptxas writes for sm_50 on
            return cubin
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

        def section(index: int) -> tuple[int, int, int]:  # name offset, file offset, size
            at = shoff + index * shentsize
            (name,) = struct.unpack_from("<I", data, at)
            offset, size = struct.unpack_from("<QQ", data, at + 0x18)
            return name, offset, size

        _, names_at, _ = section(shstrndx)
        for index in range(shnum):
            name, offset, size = section(index)
            end = data.index(0, names_at + name)
            if bytes(data[names_at + name : end]) == b".debug_line":
                _zero_line_table_times(data, offset, offset + size)
    except (struct.error, ValueError, IndexError):
        return cubin
    return bytes(data)


def _zero_line_table_times(data: bytearray, at: int, end: int) -> None:
    """Each unit of a DWARF 2-4 `.debug_line` section: its file table's times, zeroed in place."""

    def uleb(pos: int) -> int:  # the position after the number
        while data[pos] & 0x80:
            pos += 1
        return pos + 1

    while at < end:
        (length,) = struct.unpack_from("<I", data, at)
        (version,) = struct.unpack_from("<H", data, at + 4)
        if version > 4 or length >= 0xFFFFFFF0:  # DWARF 5's table, or 64-bit DWARF: left as it is
            return
        pos = at + 10  # past the unit length, version and header length
        pos += 4 + (
            1 if version >= 4 else 0
        )  # instruction length, (ops per instruction), is_stmt, base, range
        opcode_base = data[pos]
        pos += opcode_base  # the opcode base and the lengths of the opcodes below it
        while data[pos]:  # include directories, each a string; an empty one ends them
            pos = data.index(0, pos) + 1
        pos += 1
        while data[pos]:  # files: name, directory, time, size
            pos = uleb(data.index(0, pos) + 1)
            time_end = uleb(pos)
            data[pos : time_end - 1] = b"\x80" * (time_end - 1 - pos)
            data[time_end - 1] = 0
            pos = uleb(time_end)
        at += 4 + length
