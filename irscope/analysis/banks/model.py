"""How many shared-memory wavefronts one warp-level access takes: the bank rules, applied to real addresses.

Shared memory has 32 banks of 4-byte words; a wavefront serves at most one word per bank, and lanes that
read the same word share it. A warp's request is taken in phases of 128 bytes of lane data: all 32 lanes
for 4 bytes or less per lane, 16 lanes for 8 bytes, 8 for 16. A phase takes as many wavefronts as its
busiest bank has distinct words; a phase no lane takes part in costs none. The ideal is the phase's
distinct bytes in 128-byte wavefronts (Nsight Compute's "L1 Wavefronts Shared Ideal"); the excess over it
is what a bank conflict costs.

Loads may serve two neighbouring phases as one (lanes 0-31 of an LDS.64, 0-15 or 16-31 of an LDS.128):
when each lane pair 2k, 2k+1 of both reads one address, the pair takes one slot of lane data. Stores never
do, and lanes of different store phases never share a wavefront, however alike their addresses. Measured
on the H100 for 12 lane patterns of each width (validation/data/h100_smem_patterns; all 72 counts agree):
- an LDS.128 whose 32 lanes read one 16-byte chunk takes 2 wavefronts (a half-warp each), the STS.128 of
  the same pattern 4; lanes 0-15 on one chunk and 16-31 on another, 2 (also in an NVIDIA developer forum
  thread, "Discrepancy in LDS.128 wavefronts: does SMEM broadcast across quarter-warps?", and in
  kernels/bank_conflict.py's A reads); lanes t and t+16 on the chunk at 32·t bytes, 8;
- an LDS.128 whose lane i reads chunk i % 8 takes 4, though each half-warp reads only 128 distinct bytes:
  lanes 2k and 2k+1 differ, so each quarter-warp is a phase (two fla kernels read a vector back so, to
  broadcast it over a tile: 4 wavefronts an LDS.128 on the H100, docs/validation.md);
- an LDS.64 whose lanes 2k, 2k+1 share 8 bytes (or the whole warp one) takes 1, one whose lane i reads
  word i % 16 takes 2;
- an STS.128 whose active lanes are 0-3, 8-11, 16-19 and 24-27 takes 4, with lanes 0-3 and 16-19 only, 2
  (kernels/compiled_block.py's Inductor reductions store so).

- `ldmatrix` / `stmatrix` (`LDSM` / `STSM`): matrix i of an `.x1/.x2/.x4` takes its eight 16-byte row
  addresses from lanes 8i..8i+7: one group per matrix.
- `cp.async` (`LDGSTS`): 128 bytes of lane data a phase (8 lanes of 16-byte copies, 16 of 8, 32 of 4), and
  conflicts on both sides: the data is read from global 128-byte lines through the bank of each byte's
  offset in its line, so lanes that copy from different lines at offsets of one bank take a wavefront per
  line, as lanes that write different words of one shared bank do. A phase takes as many wavefronts as its
  busiest bank on either side. The zero fill of a 16-byte copy (src-size 0) is written in wavefronts of its
  own; a 4-byte copy's zero-filled lanes go with the others. The H100's counts show it: matmul.py's A tile,
  64-byte rows at offsets 0-63 of two lines per 8-lane phase, 2 wavefronts a phase (128-byte rows of B, 1;
  the zero-filled copies past K, 1); tutorial 02's 4-byte copies of 128 contiguous bytes across two lines,
  1 a warp (the bytes of the two lines lie in different banks); fla's 4-byte copies of one float every 16
  bytes, four lines of 8 lanes each on banks 0, 4, ..., 28, 4 a warp.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BANKS = 32
LINE_BYTES = 128


def phase_size(width_bytes: int) -> int:
    """Lanes per phase: 128 bytes of lane data (32 lanes of 4 bytes or less, 16 of 8, 8 of 16)."""
    return 32 if width_bytes <= 4 else 16 if width_bytes == 8 else 8


def load_phases(addresses: np.ndarray, on: np.ndarray, width_bytes: int) -> np.ndarray:
    """The phase of each lane of E ld.shared executions ((E, 32) arrays in, (E, 32) out): 128 bytes of lane
    data a phase, and two neighbouring phases (lanes 0-31 for 8 bytes, 0-15 / 16-31 for 16) as one where
    each of their lane pairs 2k, 2k+1 reads one address (or neither lane takes part)."""
    lanes = np.arange(32)
    size = phase_size(width_bytes)
    alone = np.broadcast_to(lanes // size, on.shape)
    if size == 32:
        return alone.copy()
    even, odd = on[:, 0::2], on[:, 1::2]
    same = (even == odd) & (~even | (addresses[:, 0::2] == addresses[:, 1::2]))
    paired = same.reshape(on.shape[0], 16 // size, size).all(axis=2)
    double = lanes // (2 * size)
    return np.where(paired[:, double], 2 * double, alone)


def copy_phase_size(width_bytes: int) -> int:
    """Lanes per phase of a cp.async of this many bytes per lane (128 bytes a phase)."""
    return 32 if width_bytes <= 4 else 16 if width_bytes == 8 else 8


@dataclass
class Counted:
    wavefronts: np.ndarray  # per execution (warp)
    ideal: np.ndarray


def count(
    addresses: np.ndarray,
    on: np.ndarray,
    width_bytes: int,
    phase_of_lane: np.ndarray | None = None,
    group: np.ndarray | None = None,
    source: np.ndarray | None = None,
    fetching: np.ndarray | None = None,
) -> Counted:
    """Wavefronts and the ideal for E warp executions: `addresses` and `on` are (E, 32) arrays (byte address
    and whether the lane takes part), `group` an optional (E, 32) int array splitting lane groups further
    (each part is served by wavefronts of its own). cp.async: `source` the global byte address each lane
    copies from, for the lanes `fetching` says read one; a unit then takes as many wavefronts as its busiest
    bank on either side (source_banks)."""
    executions = addresses.shape[0]
    if phase_of_lane is None:
        phase_of_lane = load_phases(addresses, on, width_bytes)
    wavefronts = np.zeros(executions, dtype=np.int64)
    ideal = np.zeros(executions, dtype=np.int64)
    e_idx, lane = np.nonzero(on)
    if e_idx.size == 0:
        return Counted(wavefronts, ideal)
    words = max(1, width_bytes // 4)
    e64 = e_idx.astype(np.int64)
    phase = (phase_of_lane[e_idx, lane] if phase_of_lane.ndim == 2 else phase_of_lane[lane]).astype(
        np.int64
    )
    sub = group[e_idx, lane].astype(np.int64) if group is not None else np.zeros_like(phase)
    units, unit_of = np.unique(np.stack([e64, phase, sub]), axis=1, return_inverse=True)
    phases, phase_of = np.unique(np.stack([e64, phase]), axis=1, return_inverse=True)
    unit_of = unit_of.reshape(-1)
    word = _words(addresses[e_idx, lane], words)
    per_unit = _busiest(np.repeat(unit_of, words), word, units.shape[1])
    if source is not None:
        reads = fetching[e_idx, lane]
        per_unit = np.maximum(
            per_unit,
            _busiest(
                np.repeat(unit_of[reads], words),
                _words(source[e_idx[reads], lane[reads]], words),
                units.shape[1],
            ),
        )
    np.add.at(wavefronts, units[0], per_unit)
    # ideal: per group of lanes, its distinct bytes in 128-byte wavefronts
    phase_words = np.unique((np.repeat(phase_of.reshape(-1), words) << 32) | (word & 0xFFFFFFFF))
    per_phase = np.bincount(phase_words >> 32, minlength=phases.shape[1])
    np.add.at(ideal, phases[0], (per_phase * 4 + 127) // 128)
    return Counted(wavefronts, ideal)


def _words(addresses: np.ndarray, words: int) -> np.ndarray:
    """The 4-byte words an access of `words` words per lane touches, lane by lane."""
    first = (addresses.astype(np.uint64) >> np.uint64(2)).astype(np.int64)
    return (first[:, None] + np.arange(words, dtype=np.int64)[None, :]).reshape(-1)


def _busiest(unit: np.ndarray, word: np.ndarray, units: int) -> np.ndarray:
    """Per unit of lanes, how many distinct words its busiest bank holds."""
    per_unit = np.zeros(units, dtype=np.int64)
    if unit.size == 0:
        return per_unit
    distinct = np.unique(np.stack([unit * BANKS + word % BANKS, word]), axis=1)
    unit_bank, per_bank = np.unique(distinct[0], return_counts=True)
    np.maximum.at(per_unit, unit_bank // BANKS, per_bank)
    return per_unit


def ldmatrix_lanes(matrices: int) -> tuple[np.ndarray, np.ndarray]:
    """Which lanes give a row address for an `.x<matrices>` ldmatrix/stmatrix, and each one's phase."""
    lanes = np.arange(32)
    return lanes < 8 * matrices, lanes // 8


def copy_groups(fetching: np.ndarray) -> np.ndarray:
    """cp.async of 8 or 16 bytes: lanes that copy nothing (the zero fill of a masked copy) are written in
    wavefronts of their own (0: fetching, -1: not)."""
    return np.where(fetching, 0, -1)


def source_ways(
    source: np.ndarray, fetching: np.ndarray, phase_of_lane: np.ndarray, width_bytes: int
) -> np.ndarray:
    """cp.async, per execution ((E, 32) arrays): the most global 128-byte lines whose bytes one phase reads
    through one bank (1: no conflict on the global side)."""
    e_idx, lane = np.nonzero(fetching)
    words = max(1, width_bytes // 4)
    unit = e_idx.astype(np.int64) * 32 + phase_of_lane[lane]
    per_unit = _busiest(
        np.repeat(unit, words), _words(source[e_idx, lane], words), source.shape[0] * 32
    )
    return per_unit.reshape(-1, 32).max(axis=1)


def worst_bank(
    addresses: np.ndarray,
    on: np.ndarray,
    width_bytes: int,
    phase_of_lane: np.ndarray | None = None,
    group: np.ndarray | None = None,
) -> tuple[int, list[int], int]:
    """For one warp execution ((32,) arrays): the busiest bank, the lanes that hit it with different words
    (one lane per word), and how many words that is."""
    if phase_of_lane is None:
        phase_of_lane = load_phases(addresses[None], on[None], width_bytes)[0]
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
