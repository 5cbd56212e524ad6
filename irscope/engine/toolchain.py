"""NVIDIA's binary tools (shipped in Triton's wheel) and the resource numbers of compiled kernels."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile

from irscope.base.model import Resources
from irscope.engine.patching import write_atomically
from irscope.engine.triton_compat import find_tool, triton_cache_dir
from irscope.ir.sass import encodings

# nvdisasm: -c code only; -gi source lines from .debug_line with inlined-at frames.
NVDISASM_FLAGS = ("-c", "-gi")


def _cache_path(kind: str, blob: bytes) -> str:
    digest = hashlib.sha256(blob + repr(NVDISASM_FLAGS).encode()).hexdigest()
    return os.path.join(triton_cache_dir(), "irscope", f"{digest}.{kind}")


def _run_on_cubin(tool: str, args: tuple[str, ...], cubin: bytes) -> str:
    path = find_tool(tool)
    if path is None:
        raise RuntimeError(
            f"{tool} not found; it ships with Triton's NVIDIA backend, reinstall triton"
        )
    with tempfile.TemporaryDirectory(prefix="irscope-") as tmp:
        cubin_path = os.path.join(tmp, "kernel.cubin")
        with open(cubin_path, "wb") as f:
            f.write(cubin)
        done = subprocess.run([path, *args, cubin_path], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{tool} failed: {done.stderr.strip()}")
    return done.stdout


def _cached_tool_output(
    kind: str, args: tuple[str, ...], cubin: bytes, tool: str = "nvdisasm"
) -> str:
    """A tool's output for a cubin, cached on disk next to Triton's own cache (keyed by the cubin's hash):
    nvdisasm takes ~0.4 s to start, whatever the kernel, and even cuobjdump's few milliseconds (a fork of
    a process that has torch loaded, a temporary folder) are paid at every reopen of a file otherwise."""
    cached = _cache_path(kind, cubin)
    try:
        with open(cached, encoding="utf-8") as f:
            return f.read()
    except OSError:
        pass
    text = _run_on_cubin(tool, args, cubin)
    # a read-only or full cache: the text is still right, only not kept
    write_atomically(cached, text)
    return text


def disassemble(cubin: bytes) -> str:
    """SASS with source-line comments."""
    return _cached_tool_output("sass", NVDISASM_FLAGS, cubin)


_RES_USAGE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


# From compute capability 9.0, ptxas counts the 1 KB the driver reserves per block in the cubin's SHARED
# whenever the kernel uses shared memory; the driver's static shared size (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
# does not. Measured on an H100: cubin SHARED:1024, driver static 0 (validation/gpu_occupancy.py).
_RESERVED_IN_CUBIN_FROM = 90
_RESERVED_SHARED = 1024


def cubin_resources(
    cubin: bytes, shared_bytes: int | None, capability: int | None = None
) -> Resources:
    """Registers and local memory from `cuobjdump -res-usage`: the numbers the driver reports.

    Triton's driver reports `n_spills` as local-memory bytes / 4; irscope does the same.
    `shared_bytes` is Triton's dynamic shared memory, which the cubin's static count does not include.
    """
    out = _cached_tool_output("res", ("-res-usage",), cubin, tool="cuobjdump")
    match = _RES_USAGE.search(out)
    if match is None:
        return Resources(shared_bytes=shared_bytes)
    reg, stack, static_shared, local = (int(g) for g in match.groups())
    # ptxas puts register spills in the stack frame (STACK), not in declared local memory (LOCAL); the
    # driver's local size per thread counts both. Triton kernels make no calls, so the stack is spills.
    local += stack
    if (
        capability is not None
        and capability >= _RESERVED_IN_CUBIN_FROM
        and static_shared >= _RESERVED_SHARED
    ):
        static_shared -= _RESERVED_SHARED
    return Resources(
        registers=reg,
        spills=local // 4,
        local_bytes=local,
        shared_bytes=(shared_bytes or 0) + static_shared,
    )


def _amd_field(text: str, name: str) -> int | None:
    match = re.search(rf"^\s*\.{name}:\s*(\d+)", text, re.MULTILINE)
    return int(match.group(1)) if match else None


def amdgcn_resources(amdgcn: str, shared_bytes: int | None) -> Resources:
    """VGPRs, SGPRs, spills and scratch from the kernel descriptor metadata in the AMDGCN text."""
    vgprs = _amd_field(amdgcn, "vgpr_count")
    vgpr_spills = _amd_field(amdgcn, "vgpr_spill_count")
    sgpr_spills = _amd_field(amdgcn, "sgpr_spill_count")
    scratch = _amd_field(amdgcn, "private_segment_fixed_size")
    spills = None if vgpr_spills is None else vgpr_spills + (sgpr_spills or 0)
    return Resources(
        registers=vgprs,
        spills=spills,
        local_bytes=scratch,
        shared_bytes=shared_bytes,
        sgprs=_amd_field(amdgcn, "sgpr_count"),
        vgpr_spills=vgpr_spills,
        sgpr_spills=sgpr_spills,
    )


def _msgpack_uint_after(blob: bytes, key: str) -> int | None:
    """The unsigned integer that follows the msgpack string `key` in `blob` (None if absent or not an int)."""
    raw = key.encode()
    at = blob.find(bytes([0xA0 | len(raw)]) + raw) if len(raw) < 32 else -1
    if at < 0:
        return None
    at += 1 + len(raw)
    tag = blob[at]
    if tag < 0x80:  # positive fixint
        return tag
    sizes = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8}  # uint8 / 16 / 32 / 64, big-endian
    if tag in sizes:
        return int.from_bytes(blob[at + 1 : at + 1 + sizes[tag]], "big")
    return None


def hsaco_resources(hsaco: bytes, shared_bytes: int | None) -> Resources:
    """VGPRs, SGPRs and spills from an AMD code object's metadata note (msgpack, the same fields as the
    `.amdgpu_metadata` block of the AMDGCN text): what HIP reports for a loaded kernel."""
    vgpr_spills = _msgpack_uint_after(hsaco, ".vgpr_spill_count")
    sgpr_spills = _msgpack_uint_after(hsaco, ".sgpr_spill_count")
    spills = None if vgpr_spills is None else vgpr_spills + (sgpr_spills or 0)
    return Resources(
        registers=_msgpack_uint_after(hsaco, ".vgpr_count"),
        spills=spills,
        local_bytes=_msgpack_uint_after(hsaco, ".private_segment_fixed_size"),
        shared_bytes=shared_bytes,
        sgprs=_msgpack_uint_after(hsaco, ".sgpr_count"),
        vgpr_spills=vgpr_spills,
        sgpr_spills=sgpr_spills,
    )


def instruction_encodings(cubin: bytes) -> dict[int, tuple[int, int]]:
    """Per instruction offset, the two 64-bit words of its 128-bit encoding (`nvdisasm -hex`). The high word
    holds the scheduling control field (stall, yield, scoreboards) that plain SASS text does not show.
    Cached on disk next to the SASS text."""

    return encodings(_cached_tool_output("sasshex", ("-c", "-hex"), cubin))
