"""Info panels hosted in the main view's panel area. Add a panel class to PANELS to show it."""

from __future__ import annotations

from irscope.tui.panels.base import InfoPanel
from irscope.tui.panels.coalescing import CoalescingPanel
from irscope.tui.panels.explain import ExplainPanel
from irscope.tui.panels.info import LineInfoPanel
from irscope.tui.panels.measured import MeasuredPanel
from irscope.tui.panels.memory import MemoryPanel

PANELS: list[type[InfoPanel]] = [
    LineInfoPanel,
    ExplainPanel,
    MemoryPanel,
    CoalescingPanel,
    MeasuredPanel,
]

__all__ = ["PANELS", "InfoPanel"]
