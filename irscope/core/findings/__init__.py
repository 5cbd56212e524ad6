"""Findings: what costs a compiled kernel time, ranked, with the cause, the cost, the fix and a what-if.

`findings(comp)` is the one engine behind `irscope report`, `irscope check` and the TUI."""

from .engine import findings, rule_errors
from .model import RULES, SEVERITIES, Cost, Finding, WhatIf, at_least, rank_key, ranked

__all__ = ["RULES", "SEVERITIES", "Cost", "Finding", "WhatIf", "at_least", "findings", "rank_key", "ranked",
           "rule_errors"]
