"""One ranked list of findings per compilation: every rule run over the analyses, once.

The report, `irscope check` and the TUI all read this list (the TUI through its worker), so they
show the same findings. A rule that fails is a bug in irscope, not in the kernel: it is dropped from the
list and named in `rule_errors`, and the other rules still run. With IRSCOPE_STRICT_RULES=1 in the
environment (the test suite sets it, tests/conftest.py, for its worker processes too) a rule's error is raised
instead, so that no test of the findings can pass because the rule it tests crashed.
"""

from __future__ import annotations

import os
import re

from irscope.base.compiled import CompiledKernel, LaunchedKernel
from irscope.findings.model import Cost, Finding, WhatIf, ranked
from irscope.findings.rules.banks import bank_findings
from irscope.findings.rules.bounds import bounds_findings
from irscope.findings.rules.ir import dot_findings, shuffle_findings
from irscope.findings.rules.launch import launch_findings
from irscope.findings.rules.memory import access_findings
from irscope.findings.rules.resources import local_findings, occupancy_findings

RULE_FUNCTIONS = (
    bounds_findings,
    access_findings,
    local_findings,
    occupancy_findings,
    shuffle_findings,
    dot_findings,
    bank_findings,
    launch_findings,
)


def findings(comp: LaunchedKernel) -> list[Finding]:
    """The ranked findings of a compilation (computed once per compilation)."""
    return comp.analyses.get("findings", lambda: _run_rules(comp))


def _run_rules(comp: LaunchedKernel) -> list[Finding]:
    if not comp.ok:
        return [_compile_error(comp)]
    result = []
    errors = comp.analyses.get("finding_rule_errors", list)
    new = finding_builder(comp)
    for rule in RULE_FUNCTIONS:
        try:
            result.extend(rule(comp, new))
        except Exception as exc:  # noqa: BLE001 - one rule's bug must not hide the others' findings
            if os.environ.get("IRSCOPE_STRICT_RULES") == "1":
                raise
            errors.append(f"{rule.__name__}: {type(exc).__name__}: {exc}")
    return ranked(result)


def rule_errors(comp: CompiledKernel) -> list[str]:
    """What each rule that raised said, for this compilation (after `findings`)."""
    return list(comp.analyses.peek("finding_rule_errors") or [])


def finding_builder(comp: CompiledKernel):
    file = comp.kernel.file
    source = comp.source_text.splitlines()

    def new(
        rule: str,
        severity: str,
        source_line: int | None,
        message: str,
        fix: str,
        cost: Cost,
        weight: float | None,
        what_if: WhatIf | None = None,
        stage: str | None = None,
        stage_line: int | None = None,
    ) -> Finding:
        text = source[source_line - 1] if source_line and 0 < source_line <= len(source) else None
        return Finding(
            rule,
            severity,
            comp.kernel.name,
            file,
            source_line,
            _column(comp, stage, stage_line, source_line, text),
            message,
            fix,
            cost,
            weight,
            what_if,
            text.strip() if text is not None else None,
        )

    return new


def _column(
    comp: CompiledKernel,
    stage: str | None,
    stage_line: int | None,
    source_line: int | None,
    text: str | None,
) -> int | None:
    """The column the compiler recorded for the IR line behind the finding, when it lies on the finding's
    source line; else the line's first non-blank character."""
    if stage is not None and stage_line is not None:
        try:
            loc = comp.source_map.lines(stage)[stage_line].loc
        except Exception:  # noqa: BLE001 - no map for this stage: fall back to the line's indentation
            loc = None
        if loc is not None and loc.line == source_line and loc.column > 0:
            return _callee_start(text, loc.column)
    if text is None:
        return None
    return len(text) - len(text.lstrip()) + 1


_CALL_START = re.compile(r"[A-Za-z_][\w.]*\s*\(")
_CALLEE_END = re.compile(r"[A-Za-z_][\w.]*\s*$")


def _callee_start(text: str | None, column: int) -> int:
    """Where the call behind a finding starts. Newer Tritons record a call's column at its callee
    (`|tl.load(`); Triton 3.6 at its opening parenthesis (`tl.load|(`) or, for a store, inside its
    arguments. A column that does not start a call is moved back to the callee of the call around it, so
    that `irscope check`'s annotations stay put when Triton is upgraded."""
    if text is None or not 0 < column <= len(text) or _CALL_START.match(text, column - 1):
        return column
    depth = 0
    for i in range(min(column, len(text)) - 1, -1, -1):
        c = text[i]
        if c == ")" and i != column - 1:
            depth += 1
        elif c == "(":
            if depth == 0:
                callee = _CALLEE_END.search(text[:i])
                return callee.start() + 1 if callee else column
            depth -= 1
    return column


def _compile_error(comp: CompiledKernel) -> Finding:
    f = comp.failure
    text = f.source_line
    column = len(text) - len(text.lstrip()) + 1 if text else None
    return Finding(
        "compile-error",
        "error",
        comp.kernel.name,
        f.file or comp.kernel.file,
        f.line,
        column,
        f"{comp.kernel.name} does not compile for {comp.target.name}: {f.message}",
        "fix the kernel at this line (the message is Triton's)",
        Cost(None, "none", "the kernel cannot run"),
        1.0,
        None,
        text.strip() if text else None,
    )
