"""What ptxas does to a kernel's shared-memory loads on the way from PTX to SASS, as far as irscope models it.

The bank rules count SASS instructions, and two things ptxas does change which instructions there are,
both seen on the H100 (docs/validation.md, "Bank conflicts"):

- It merges loads. Where the PTX reads one buffer with several `ld.shared` of one base register at
  constant offsets (Triton 3.6 writes an FMA dot's operand reads as mixes of `.b32`, `.v2.b32` and
  `.v4.b32`), ptxas emits one LDS.128 for each naturally aligned 16 bytes they cover, and LDS.64 for
  each 8. kernels/bank_conflict.py (BLOCK_K = 32): 160 PTX loads of the A tile became 64 LDS.128, and
  that decides the wavefronts (a 16-byte load is served 8 or 16 lanes at a time, a 4-byte one 32 at a time:
  read one `.b32` at a time the PTX has a 2-way conflict that the SASS does not).
  Modelled: loads of 4 bytes or more, with one guard, in one stretch of straight code (no barrier, shared
  store, branch or branch target between them) in which the base register keeps its value, when the base
  is provably aligned: the alignment every definition of the register keeps (a shift left by n gives
  2^n, `global_smem` its `.align`), as a compiler can prove it, not as one run's values happen to be.
- It exits early. When everything with an effect after a kernel's last barrier is guarded by one
  predicate (Triton's scalar `tl.store` of a reduction: thread 0 only), ptxas ends the other threads
  there (`@!P EXIT`), and the loads before those stores run only in warps that still have a thread.
  kernels/helper.py: the last `ld.shared` of `tl.max` executes in 1 warp of 4 per program. The PTX may
  compute that predicate after the loads (Inductor's reductions: `setp` and `and.pred` just before the
  store); ptxas computes it first all the same when it needs no data the tail loads, and the H100 shows it:
  kernels/compiled_block.py's `triton_per_fused_addmm_gelu_sum_1` runs its last LDS in 1 warp of 2.
"""

from __future__ import annotations

import re
from dataclasses import replace

from irscope.analysis.ptx.program import Program, destinations, immediate, sources

CAP = 1 << 20  # "aligned to anything": a register not yet defined, or 0
_ADDRESS = re.compile(r"^\[\s*([%$\w@.]+)\s*(?:\+\s*(-?\d+))?\s*\]$")
_STRAIGHT_ENDS = (
    "bar",
    "barrier",
    "bra",
    "ret",
    "exit",
    "call",
    "atom",
    "red",
    "cp",
    "fence",
    "membar",
    "wgmma",
    "stmatrix",
    "mbarrier",
    "tcgen05",
    "griddepcontrol",
)
_EFFECTS = ("st", "atom", "red", "cp", "wgmma", "stmatrix", "call", "tcgen05", "mbarrier")
_READS = ("ld", "ldu", "atom", "tex", "tld4", "suld", "ldmatrix")


def ptxas_view(program: Program, accesses: list) -> list:
    """The accesses as SASS will have them: merged loads in place of their parts, tail loads guarded."""
    guards = tail_guards(program)
    out = []
    for access in merge_loads(program, accesses, alignments(program)):
        if access.kind == "load" and access.index in guards:
            access = replace(
                access, tail_guard=guards[access.index][0], tail_guard_at=guards[access.index][1]
            )
        out.append(access)
    return out


# ---------------------------------------------------------------------------------------------- alignment


def _lowbit(n: int) -> int:
    n &= 0xFFFFFFFFFFFFFFFF
    return CAP if n == 0 else min(CAP, n & -n)


def alignments(program: Program) -> dict[str, int]:
    """Per register, the power of two that divides every value it can hold (the least over its
    definitions, iterated to a fixed point through loops); per shared variable, its `.align`."""
    align: dict[str, int] = {}

    def of(text: str) -> int:
        text = text.strip()
        if text in program.shared_align:
            return program.shared_align[text]
        if text.startswith("%"):
            return align.get(text, CAP) if "." not in text.split("@")[0][1:] else 1
        number = immediate(text)
        return 1 if number is None else _lowbit(number)

    changed = True
    while changed:
        changed = False
        for ins in program.instrs:
            dests = destinations(ins)
            if not dests:
                continue
            got = _transfer(ins.parts, ins.operands[1:], of) if len(dests) == 1 else 1
            for d in dests:
                new = min(align.get(d, CAP), got)
                if new != align.get(d, CAP):
                    align[d] = new
                    changed = True
    return {**align, **program.shared_align}


def _transfer(parts: list[str], ops: list[str], of) -> int:
    head = parts[0]
    if "hi" in parts:  # the high half of a product: nothing known
        return 1
    a = [of(o) for o in ops]
    if head in ("mov", "cvt", "cvta", "neg") and a:
        return a[0]
    if head in ("add", "sub", "or", "xor", "selp", "min", "max") and len(a) >= 2:
        return min(a[0], a[1])
    if head == "and" and len(a) >= 2:
        return max(a[0], a[1])
    if head == "mul" and len(a) >= 2:
        return min(CAP, a[0] * a[1])
    if head == "mad" and len(a) >= 3:
        return min(CAP, a[0] * a[1], a[2])
    if head == "shl" and len(a) >= 2:
        shift = immediate(ops[1])
        return min(CAP, a[0] << shift) if shift is not None and 0 <= shift < 64 else a[0]
    if head == "shr" and len(a) >= 2:
        shift = immediate(ops[1])
        return max(1, a[0] >> shift) if shift is not None and 0 <= shift < 64 and a[0] < CAP else 1
    return 1


# ---------------------------------------------------------------------------------------------- merging


def _branch_targets(program: Program) -> set[int]:
    return {
        program.labels[op]
        for ins in program.instrs
        if ins.parts[0] == "bra"
        for op in ins.operands
        if op in program.labels
    }


def _ends_stretch(parts: list[str]) -> bool:
    if parts[0] == "st":
        return "global" not in parts and "local" not in parts and "param" not in parts
    return parts[0] in _STRAIGHT_ENDS


def merge_loads(program: Program, accesses: list, align: dict[str, int]) -> list:
    """Loads that ptxas emits as one LDS.64 / LDS.128 replaced by one access each (at the first part)."""
    candidates = {
        a.index: a
        for a in accesses
        if a.kind == "load"
        and a.not_modelled is None
        and a.width in (4, 8)
        and "volatile" not in a.opcode
        and _ADDRESS.match(a.address)
    }
    if not candidates:
        return accesses
    targets = _branch_targets(program)
    stretch, version = 0, {}
    groups: dict[tuple, list] = {}
    for index, ins in enumerate(program.instrs):
        if index in targets or _ends_stretch(ins.parts):
            stretch += 1
        access = candidates.get(index)
        if access is not None:
            m = _ADDRESS.match(access.address)
            base, offset = m.group(1), int(m.group(2) or 0)
            key = (
                stretch,
                base,
                version.get(base, 0),
                ins.guard,
                ins.negated,
                version.get(ins.guard, 0),
            )
            groups.setdefault(key, []).append((offset, access))
        for d in destinations(ins):
            version[d] = version.get(d, 0) + 1
        if _ends_stretch(ins.parts):
            stretch += 1
    replaced: dict[int, object] = {}
    for key, members in groups.items():
        base = key[1]
        base_align = align.get(base, CAP if base.startswith("%") else 1)
        for size in (16, 8):
            if base_align < size:
                continue
            windows: dict[int, list] = {}
            for offset, access in members:
                start = offset - offset % size
                if access.index not in replaced and offset + access.width <= start + size:
                    windows.setdefault(start, []).append((offset, access))
            for start, parts in windows.items():
                covered = {
                    b for offset, access in parts for b in range(offset, offset + access.width)
                }
                if len(parts) < 2 or covered != set(range(start, start + size)):
                    continue
                first = min((access for _, access in parts), key=lambda a: a.index)
                merged = replace(
                    first,
                    width=size,
                    address=f"[{base}+{start}]",
                    opcode=f"{first.opcode} (ptxas: {len(parts)} loads as one {size * 8}-bit)",
                    merged=tuple(sorted(a.line for _, a in parts)),
                )
                for _, access in parts:
                    replaced[access.index] = merged if access is first else None
    return [replaced.get(a.index, a) for a in accesses if replaced.get(a.index, a) is not None]


# ---------------------------------------------------------------------------------------------- early exit


def tail_guards(program: Program) -> dict[int, tuple[str, int | None]]:
    """Instruction index -> the predicate (`%p8` or `!%p8`) under which it runs, for the instructions after
    the kernel's last barrier when everything there with an effect has that one guard; with it, the index of
    the tail instruction that last writes the predicate (None: it is set before the tail). A predicate the
    tail computes from data that the tail loads is not known before those loads: no early exit then."""
    instrs = program.instrs
    barriers = [i for i, ins in enumerate(instrs) if ins.parts[0] in ("bar", "barrier")]
    if not barriers:
        return {}
    last = barriers[-1]
    targets = _branch_targets(program)
    tail = range(last + 1, len(instrs))
    if any(i in targets or instrs[i].parts[0] in ("bra", "call") for i in tail):
        return {}
    effects = {(instrs[i].guard, instrs[i].negated) for i in tail if instrs[i].parts[0] in _EFFECTS}
    if len(effects) != 1:
        return {}
    guard, negated = effects.pop()
    if guard is None:
        return {}
    writes = [i for i in tail if guard in destinations(instrs[i])]
    needed = {guard}
    for i in reversed(tail):  # the predicate's backward slice within the tail
        ins = instrs[i]
        if needed & set(destinations(ins)):
            if ins.parts[0] in _READS and "param" not in ins.parts:
                return {}
            needed.update(sources(ins))
    return {i: (("!" if negated else "") + guard, writes[-1] if writes else None) for i in tail}
