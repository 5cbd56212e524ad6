"""One warp-level load or store as text: a column per lane, a row per 32-byte sector it touches, the lanes
that read or write in each sector marked. The Coalescing panel draws it, and so does the exported page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from irscope.base.target import SECTOR_BYTES

if TYPE_CHECKING:
    from irscope.analysis.coalescing.requests import WarpPicture

MAX_SECTOR_ROWS = 64  # the panel scrolls: a whole warp, one sector per lane, and more (AMD)
LABEL_END = "\u2502"  # ends each picture line's label


def picture_registers(access) -> str:
    """The registers the drawn request moves per lane: `register 0`, or `registers 0–3` for a vector access
    (`access`: an AccessCoalescing with a picture)."""
    first = access.picture.register
    vector = max(1, (access.width_bytes or access.elem_bytes) // access.elem_bytes)
    return f"register {first}" if vector == 1 else f"registers {first}–{first + vector - 1}"


def warp_picture_lines(picture: WarpPicture, elem_bytes: int) -> list[str]:
    """One warp-level instruction as text: a column per lane, a row per 32-byte sector touched
    (offsets from the lowest one), `█` where the lane reads or writes in that sector. Each line is
    label + LABEL_END + the lanes."""
    lane_sectors = picture.lane_sectors()
    lanes = len(lane_sectors)
    touched = sorted({s for sectors in lane_sectors if sectors for s in sectors})
    first = touched[0] if touched else 0
    label_width = 12
    ruler = "".join(str(lane // 10) if lane % 10 == 0 else " " for lane in range(lanes))
    units = "".join(str(lane % 10) for lane in range(lanes))
    active = "".join("●" if s else "·" for s in lane_sectors)
    out = [
        f"{'lane':>{label_width}}{LABEL_END}{ruler}",
        f"{'':>{label_width}}{LABEL_END}{units}",
        f"{'active':>{label_width}}{LABEL_END}{active}",
    ]
    for sector in touched[:MAX_SECTOR_ROWS]:
        row = "".join("█" if sectors and sector in sectors else "·" for sectors in lane_sectors)
        out.append(
            f"{'+' + str((sector - first) * SECTOR_BYTES) + ' B':>{label_width}}{LABEL_END}{row}"
        )
    if len(touched) > MAX_SECTOR_ROWS:
        out.append(f"{'':>{label_width}}{LABEL_END}… {len(touched) - MAX_SECTOR_ROWS} more sectors")
    return out
