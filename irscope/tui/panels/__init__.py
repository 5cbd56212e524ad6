"""Info panels hosted in the main view's panel area. Add a panel class to PANELS to show it."""

from __future__ import annotations

from .base import InfoPanel
from .info import LineInfoPanel

PANELS: list[type[InfoPanel]] = [LineInfoPanel]

__all__ = ["PANELS", "InfoPanel"]
