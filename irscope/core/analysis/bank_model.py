"""How many shared-memory wavefronts one warp-level access takes: the bank rules, applied to real addresses.

Shared memory has 32 banks of 4-byte words; a wavefront serves at most one word per bank, and lanes that
read the same word share it. A warp's request is taken in groups of lanes: all 32 for 4 bytes or less per
lane, half-warps (16 lanes) for 8- and 16-byte accesses. A group takes as many wavefronts as its busiest
bank has distinct words; a group no lane takes part in costs none. The ideal is the group's distinct bytes
in 128-byte wavefronts (Nsight Compute's "L1 Wavefronts Shared Ideal"); the excess over it is what a bank
conflict costs.

Half-warps, not quarter-warps, for 16-byte accesses: the common account splits LDS.128 into four 8-lane
phases, but an H100 (and an A10) counts 2 wavefronts, not 4, for an LDS.128 whose lanes 0-15 read one
16-byte chunk and lanes 16-31 another (NVIDIA developer forum, "Discrepancy in LDS.128 wavefronts: does
SMEM broadcast across quarter-warps?"); the same thread's other pattern, lanes t and t+16 reading the
chunk at 32·t bytes, takes 8. The half-warp rule gives both counts, the quarter-warp rule only the second.
Where each quarter-warp is conflict-free (the usual case) the two rules agree. This project's own H100 data
has the first pattern: kernels/bank_conflict.py's A reads (LDS.128, lanes 0-15 on one 16-byte chunk, 16-31
on another) take 2 wavefronts each, and 2 also where all 32 lanes read one chunk.

Stores are served otherwise: a phase takes 128 bytes of the lanes' data (32 lanes of 4 bytes, 16 of 8, 8 of
16), each phase a lane takes part in costs a wavefront at least, and lanes of different phases never share
one, however alike their addresses. On the H100 an STS.128 whose 32 lanes all write one 16-byte chunk takes
4 wavefronts (a load of the same pattern takes 2), one whose active lanes are 0-3, 8-11, 16-19 and 24-27
takes 4, and with lanes 0-3 and 16-19 only, 2 (validation/data/h100_smem_patterns: every pattern measured
for STS, STS.64 and STS.128 agrees; kernels/compiled_block.py's Inductor reductions store so).

- `ldmatrix` / `stmatrix` (`LDSM` / `STSM`): matrix i of an `.x1/.x2/.x4` takes its eight 16-byte row
  addresses from lanes 8i..8i+7: one group per matrix.
- `cp.async` (`LDGSTS`): the data reaches shared memory one global 128-byte line at a time, so within an
  8-lane phase (16-byte copies; 16 lanes for 8 bytes, 32 for 4) the lanes are grouped by the global line
  they copy from, and each group is written in wavefronts of its own; lanes that copy nothing (src-size
  0: the zero fill of a masked copy) form one group. The H100's counts for matmul.py show it: 64-byte
  rows of the A tile take two wavefronts per 8-lane phase, 128-byte rows of B one, and the zero-filled
  copies past K one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BANKS = 32
LINE_BYTES = 128


def phase_size(width_bytes: int, store: bool = False) -> int:
    """Lanes per group for an ld.shared (or, `store`, an st.shared) of this many bytes per lane."""
    if store:
        return 32 if width_bytes <= 4 else 16 if width_bytes == 8 else 8
    return 32 if width_bytes <= 4 else 16


def copy_phase_size(width_bytes: int) -> int:
    """Lanes per phase of a cp.async of this many bytes per lane (128 bytes a phase)."""
    return 32 if width_bytes <= 4 else 16 if width_bytes == 8 else 8


@dataclass
class Counted:
    wavefronts: np.ndarray   # per execution (warp)
    ideal: np.ndarray


def count(addresses: np.ndarray, on: np.ndarray, width_bytes: int, phase_of_lane: np.ndarray | None = None,
          group: np.ndarray | None = None) -> Counted:
    """Wavefronts and the ideal for E warp executions: `addresses` and `on` are (E, 32) arrays (byte address
    and whether the lane takes part), `group` an optional (E, 32) int array splitting lane groups further
    (each part is served by wavefronts of its own)."""
    executions = addresses.shape[0]
    if phase_of_lane is None:
        phase_of_lane = np.arange(32) // phase_size(width_bytes)
    wavefronts = np.zeros(executions, dtype=np.int64)
    ideal = np.zeros(executions, dtype=np.int64)
    e_idx, lane = np.nonzero(on)
    if e_idx.size == 0:
        return Counted(wavefronts, ideal)
    words = max(1, width_bytes // 4)
    e64 = e_idx.astype(np.int64)
    phase = phase_of_lane[lane].astype(np.int64)
    sub = group[e_idx, lane].astype(np.int64) if group is not None else np.zeros_like(phase)
    units, unit_of = np.unique(np.stack([e64, phase, sub]), axis=1, return_inverse=True)
    phases, phase_of = np.unique(np.stack([e64, phase]), axis=1, return_inverse=True)
    first_word = (addresses[e_idx, lane] >> np.uint64(2)).astype(np.int64)
    word = (first_word[:, None] + np.arange(words, dtype=np.int64)[None, :]).reshape(-1)
    unit = np.repeat(unit_of.reshape(-1), words)
    # wavefronts: per unit, the busiest bank's distinct words
    distinct = np.unique(((unit * BANKS + word % BANKS) << 32) | (word & 0xFFFFFFFF))
    unit_bank, per_bank = np.unique(distinct >> 32, return_counts=True)
    per_unit = np.zeros(units.shape[1], dtype=np.int64)
    np.maximum.at(per_unit, unit_bank // BANKS, per_bank)
    np.add.at(wavefronts, units[0], per_unit)
    # ideal: per group of lanes, its distinct bytes in 128-byte wavefronts
    phase_words = np.unique((np.repeat(phase_of.reshape(-1), words) << 32) | (word & 0xFFFFFFFF))
    per_phase = np.bincount(phase_words >> 32, minlength=phases.shape[1])
    np.add.at(ideal, phases[0], (per_phase * 4 + 127) // 128)
    return Counted(wavefronts, ideal)


def ldmatrix_lanes(matrices: int) -> tuple[np.ndarray, np.ndarray]:
    """Which lanes give a row address for an `.x<matrices>` ldmatrix/stmatrix, and each one's phase."""
    lanes = np.arange(32)
    return lanes < 8 * matrices, lanes // 8


def copy_groups(global_addresses: np.ndarray, fetching: np.ndarray) -> np.ndarray:
    """cp.async: the group of each lane within its phase: its global 128-byte line, or -1 (no fetch)."""
    line = (global_addresses // np.uint64(LINE_BYTES)).astype(np.int64)
    return np.where(fetching, line, -1)


def worst_bank(addresses: np.ndarray, on: np.ndarray, width_bytes: int, phase_of_lane: np.ndarray | None = None,
               group: np.ndarray | None = None) -> tuple[int, list[int], int]:
    """For one warp execution ((32,) arrays): the busiest bank, the lanes that hit it with different words
    (one lane per word), and how many words that is."""
    if phase_of_lane is None:
        phase_of_lane = np.arange(32) // phase_size(width_bytes)
    best: tuple[int, list[int], int] = (0, [], 0)
    words = max(1, width_bytes // 4)
    units: dict[tuple, dict[int, dict[int, int]]] = {}
    for lane in np.nonzero(on)[0]:
        unit = (int(phase_of_lane[lane]), int(group[lane]) if group is not None else 0)
        first = int(addresses[lane]) >> 2
        for w in range(first, first + words):
            units.setdefault(unit, {}).setdefault(w % BANKS, {}).setdefault(w, int(lane))
    for banks in units.values():
        for bank, by_word in banks.items():
            if len(by_word) > best[2]:
                best = (bank, sorted(by_word.values()), len(by_word))
    return best
