"""Sibling loads: one argument's adjacent fields read by separate loads (an array of structs read as
`p[4*i]`, `p[4*i + 1]`, ...). Each load alone touches whole sectors it uses a fraction of, and counts them:
its sectors per request are what Nsight Compute measures, the L1 wavefronts and issue it costs. But the
siblings read the rest of the same sectors, which the memory system fetched once for the first of them:
together they use every byte, and DRAM / L2 traffic is what the bytes need. So the traffic to weigh is the
group's, and the fix is one wider access of the fields together, not a different stride.
"""

from __future__ import annotations

import numpy as np

from irscope.base.target import SECTOR_BYTES


def find_siblings(entries: list) -> None:
    """Set `siblings` (the others' source lines) and `together_moved` on each analysed load whose sectors other
    loads of the same argument also read, when together they use more of those sectors than it does alone."""
    loads = [
        e for e in entries if e.kind == "load" and e.analysed and e.param and _active(e) is not None
    ]
    for entry in loads:
        mine = _active(entry)
        sectors = np.unique(mine // SECTOR_BYTES)
        mates = [
            o
            for o in loads
            if o is not entry
            and o.param == entry.param
            and o.elem_bytes == entry.elem_bytes
            and _shares(sectors, _active(o))
        ]
        if not mates:
            continue
        together = np.concatenate([mine] + [_active(o) for o in mates])
        alone, with_mates = (
            _moved(sectors, mine, entry.elem_bytes),
            _moved(sectors, together, entry.elem_bytes),
        )
        if with_mates < 0.9 * alone:
            entry.siblings = tuple(
                sorted({o.source_line for o in mates}, key=lambda line: line or 0)
            )
            entry.together_moved = with_mates


def _active(entry) -> np.ndarray | None:
    """The addresses the active lanes of the access's sampled execution use."""
    if entry.sample is None:
        return None
    addresses, mask = np.asarray(entry.sample[0]).reshape(-1), entry.sample[1]
    if mask is not None:
        addresses = addresses[np.asarray(mask, bool).reshape(-1)]
    return addresses if addresses.size else None


def _shares(sectors: np.ndarray, others: np.ndarray) -> bool:
    """Whether the other access reads at least half of these sectors."""
    return np.isin(sectors, np.unique(others // SECTOR_BYTES)).sum() * 2 >= sectors.size


def _moved(sectors: np.ndarray, addresses: np.ndarray, elem_bytes: int) -> float:
    """The bytes of `sectors` over the bytes of them that `addresses` use."""
    used = np.unique(addresses[np.isin(addresses // SECTOR_BYTES, sectors)])
    return (
        sectors.size
        * SECTOR_BYTES
        / max(1, min(used.size * elem_bytes, sectors.size * SECTOR_BYTES))
    )
