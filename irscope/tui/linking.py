"""Line links between stages, as the viewer needs them: per stage, the source line of each IR line,
whether it is debug metadata, and back from a source line to its IR lines. Built once per stage from
`comp.source_map` (irscope.ir.sourcemap) and then answered from arrays, so a cursor move costs O(1)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

# Okabe–Ito: distinguishable for the common colour-vision deficiencies; order chosen so that
# neighbours differ in lightness as well as hue.
LINK_PALETTE = (
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#F0E442",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#999999",
)


_EMPTY: frozenset[int] = frozenset()


@dataclass
class StageLinks:
    """The links of one stage of one compilation."""

    source_of: list[int | None]  # per IR line: the user-file line (innermost frame), or None
    chain_of: list[tuple[int, ...]]  # per IR line: every user-file line in its chain
    debug: list[bool]  # per IR line: debug metadata (#loc, !DILocation, .loc, ...)
    # user line -> IR lines whose chain has it
    by_source: dict[int, list[int]] = field(default_factory=dict)
    _sets: dict[int, frozenset[int]] = field(default_factory=dict)

    def line_set(self, source_line: int | None) -> frozenset[int]:
        """The IR lines of a source line as a set (one object per source line: cheap to compare)."""
        if source_line is None:
            return _EMPTY
        found = self._sets.get(source_line)
        if found is None:
            found = self._sets[source_line] = frozenset(self.by_source.get(source_line, ()))
        return found

    @classmethod
    def build(cls, source_of, chain_of, debug) -> "StageLinks":
        by_source: dict[int, list[int]] = {}
        for index, chain in enumerate(chain_of):
            for line in chain:
                hits = by_source.setdefault(line, [])
                if not hits or hits[-1] != index:
                    hits.append(index)
        return cls(list(source_of), list(chain_of), list(debug), by_source)


class LinkIndex:
    """Everything the panes ask about links for one compilation; stages are built on first use."""

    def __init__(self, comp) -> None:
        self.comp = comp
        self._stages: dict[str, StageLinks] = {}
        self._lock = threading.Lock()
        self._colours: dict[int, int] | None = None

    def stage(self, stage: str) -> StageLinks:
        links = self._stages.get(stage)
        if links is None:
            with self._lock:
                links = self._stages.get(stage)
                if links is None:
                    links = self._build(stage)
                    self._stages[stage] = links
        return links

    def _build(self, stage: str) -> StageLinks:
        text = self.comp.stage(stage) if (stage == "source" or self.comp.ok) else ""
        count = len(text.splitlines())
        if stage == "source":
            return StageLinks.build(
                [i + 1 for i in range(count)], [(i + 1,) for i in range(count)], [False] * count
            )
        source_map = _source_map(self.comp)
        if source_map is None:
            return StageLinks.build([None] * count, [()] * count, [False] * count)
        lines = source_map.lines(stage)
        source_of, chain_of, debug = [], [], []
        for ir_line in lines[:count]:
            kind = getattr(ir_line.kind, "value", ir_line.kind)
            source_of.append(ir_line.loc.line if ir_line.loc is not None else None)
            chain = tuple(dict.fromkeys(f.line for f in ir_line.frames))
            if ir_line.loc is not None and ir_line.loc.line not in chain:
                chain = (ir_line.loc.line, *chain)
            chain_of.append(chain)
            debug.append(kind == "debug")
        missing = count - len(source_of)
        source_of += [None] * missing
        chain_of += [()] * missing
        debug += [False] * missing
        return StageLinks.build(source_of, chain_of, debug)

    # ---- questions the viewer asks

    def source_line(self, stage: str, index: int) -> int | None:
        links = self.stage(stage)
        return links.source_of[index] if 0 <= index < len(links.source_of) else None

    def chain(self, stage: str, index: int) -> tuple[int, ...]:
        links = self.stage(stage)
        return links.chain_of[index] if 0 <= index < len(links.chain_of) else ()

    def ir_lines(self, stage: str, source_line: int | None) -> list[int]:
        if source_line is None:
            return []
        return self.stage(stage).by_source.get(source_line, [])

    def ir_line_set(self, stage: str, source_line: int | None) -> frozenset[int]:
        return self.stage(stage).line_set(source_line)

    def colour_slot(self, source_line: int | None) -> int | None:
        """The palette slot of a source line that produced IR (None: it produced none)."""
        if source_line is None:
            return None
        if self._colours is None:
            self._colours = self._assign_colours()
        return self._colours.get(source_line)

    def _assign_colours(self) -> dict[int, int]:
        produced: set[int] = set()
        if self.comp.ok:
            for stage in self.comp.stage_names:
                if stage in ("source", "sass"):
                    continue  # SASS needs nvdisasm; the other stages name the same lines
                produced.update(s for s in self.stage(stage).source_of if s is not None)
        return {line: n % len(LINK_PALETTE) for n, line in enumerate(sorted(produced))}

    def produced_ir(self, source_line: int) -> bool:
        return self.colour_slot(source_line) is not None


def _source_map(comp):
    try:
        return comp.source_map
    except AttributeError:
        return None
