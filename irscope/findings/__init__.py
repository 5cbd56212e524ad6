"""Findings: what costs a compiled kernel time, ranked, with the cause, the cost, the fix and a what-if.

`findings(comp)` is the one engine behind `irscope report`, `irscope check` and the TUI. Importing this
package loads only the nouns (model.py): `irscope check`'s front end reads them without NumPy or Triton."""

from irscope.base.compiled import CompiledKernel, LaunchedKernel
from irscope.findings.model import (
    RULES,
    SEVERITIES,
    Cost,
    Finding,
    WhatIf,
    at_least,
    rank_key,
    ranked,
)


def findings(comp: LaunchedKernel) -> list[Finding]:
    """The ranked findings of a compilation (engine.py; cached on the compilation)."""
    # deferred: the front end imports findings.model, which runs this file, without the rules and the
    # analyses they read (NumPy)
    from irscope.findings.engine import findings as run

    return run(comp)


def rule_errors(comp: CompiledKernel) -> list[str]:
    """Rules that failed on this compilation (a bug in irscope): named so the report can say so."""
    # deferred: as above
    from irscope.findings.engine import rule_errors as errors

    return errors(comp)


__all__ = [
    "RULES",
    "SEVERITIES",
    "Cost",
    "Finding",
    "WhatIf",
    "at_least",
    "findings",
    "rank_key",
    "ranked",
    "rule_errors",
]
