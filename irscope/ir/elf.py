"""The section table of a cubin (an ELF64 file, little-endian): each section's name and size.

The roofline needs one number from it: the bytes of a kernel's code and constant banks, which a launch on
cold caches reads from DRAM beside its data (Nsight Compute flushes the caches before each launch it
measures; on the H100 a launch's DRAM reads were its data sectors plus these sections, within 2 KB)."""

from __future__ import annotations

import struct

_ELF_MAGIC = b"\x7fELF"
_SECTION_HEADER = struct.Struct(
    "<IIQQQQIIQQ"
)  # name, type, flags, addr, offset, size, link, info, align, entsize


def section_sizes(blob: bytes) -> dict[str, int]:
    """{section name: size in bytes}; {} for anything that is not a 64-bit little-endian ELF file."""
    if len(blob) < 64 or blob[:4] != _ELF_MAGIC or blob[4] != 2 or blob[5] != 1:
        return {}
    (table,) = struct.unpack_from("<Q", blob, 0x28)
    entry_size, count, names_index = struct.unpack_from("<HHH", blob, 0x3A)
    if (
        entry_size < _SECTION_HEADER.size
        or table + count * entry_size > len(blob)
        or names_index >= count
    ):
        return {}
    headers = [_SECTION_HEADER.unpack_from(blob, table + i * entry_size) for i in range(count)]
    names_offset = headers[names_index][4]
    sizes: dict[str, int] = {}
    for header in headers:
        start = names_offset + header[0]
        end = blob.find(b"\0", start)
        if end < 0:
            return {}
        sizes[blob[start:end].decode("ascii", "replace")] = header[5]
    return sizes


def kernel_image_bytes(blob: bytes, kernel: str) -> int:
    """The bytes a launch of `kernel` reads for its code and constants: a cubin's `.text.KERNEL` section and
    every constant bank of the file (its parameters' bank, `.nv.constant0.KERNEL`, and the shared ones,
    `.nv.constantN`); an AMD code object's `.text` and `.rodata` (its kernel descriptor)."""
    sections = section_sizes(blob)
    if f".text.{kernel}" in sections:
        return sum(
            size
            for name, size in sections.items()
            if name == f".text.{kernel}" or name.startswith(".nv.constant")
        )
    return sections.get(".text", 0) + sections.get(".rodata", 0)
