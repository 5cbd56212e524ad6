"""Info panels hosted in the main view's panel area. Add a panel class to PANELS to show it."""

from __future__ import annotations

from .base import InfoPanel
from .coalescing import CoalescingPanel
from .explain import ExplainPanel
from .info import LineInfoPanel
from .measured import MeasuredPanel
from .memory import MemoryPanel

PANELS: list[type[InfoPanel]] = [LineInfoPanel, ExplainPanel, MemoryPanel, CoalescingPanel, MeasuredPanel]

__all__ = ["PANELS", "InfoPanel"]
