"""How `irscope check` writes its findings: compiler-style text, JSON, SARIF 2.1.0, GitHub annotations.

Every string here may come from a user's file (a kernel's name, a source line); the worker has already
written out its control characters, JSON escapes what is left, and GitHub's annotation syntax gets its
own escapes, so nothing a file holds can be taken as a command by a terminal or by the runner.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from irscope import __version__
from irscope.findings.model import RULES

_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)


def render(fmt: str, findings: list[dict], results: list[dict]) -> str:
    if fmt == "json":
        return json.dumps(json_document(findings, results), indent=2) + "\n"
    if fmt == "sarif":
        return json.dumps(sarif_document(findings, note_lines(results)), indent=2) + "\n"
    if fmt == "github":
        return "".join(github_line(f) + "\n" for f in findings)
    return "".join(text_lines(f) for f in findings)


def location(f: dict) -> str:
    where = f["file"]
    if f.get("cell"):  # a notebook's line: its cell and the line in it
        return f"{where} {f['cell']}"
    if f.get("source_line"):
        where += f":{f['source_line']}"
        if f.get("column"):
            where += f":{f['column']}"
    return where


def headline(f: dict) -> str:
    """`SEVERITY[RULE] in KERNEL: message (cost)` — the part after the location."""
    kernel = f" in {f['kernel']}" if f.get("kernel") else ""
    cost = f["cost"]["text"] if f["cost"].get("text") and f["cost"]["unit"] != "none" else ""
    share = (f.get("launches") or {}).get("text")  # merged over launches (findings/merge.py)
    message = f"{share}: {f['message']}" if share else f["message"]
    return f"{f['severity']}[{f['rule']}]{kernel}: {message}" + (f" ({cost})" if cost else "")


def text_lines(f: dict) -> str:
    out = f"{location(f)}: {headline(f)}\n    fix: {f['fix']}\n"
    if f.get("what_if"):
        out += f"    what if: {f['what_if']['text']}\n"
    return out


def summary(
    files: int, findings: list[dict], accepted: int, results: list[dict] = (), command: bool = False
) -> str:
    """The last line (stderr). `command`: the run was `check -m MODULE ...`, one run, not files."""
    counts = {
        s: sum(1 for f in findings if f["severity"] == s) for s in ("error", "warning", "info")
    }
    checked = "1 run" if command else f"{files} file(s)"
    text = (
        f"irscope check: {checked}, {len(findings)} finding(s): {counts['error']} error(s), "
        f"{counts['warning']} warning(s), {counts['info']} info"
    )
    text += f"; {accepted} accepted by the baseline" if accepted else ""
    quiet = [r for r in results if r.get("opened") and r.get("not_launched")]
    if quiet:
        kernels = sum(len(r["not_launched"]) for r in quiet)
        launched = sum(r.get("kernels", 0) for r in results)
        text += f"; {launched} compilation(s) checked" if command else ""
        where = "beside the launched ones" if command else f"in {len(quiet)} file(s)"
        how = (
            ""
            if command
            else " (check them as your tests launch them: irscope check -m pytest TESTS)"
        )
        text += f"; {kernels} kernel(s) {where} not launched in this run, so not checked{how}"
    return text


def note_lines(results: list[dict]) -> list[str]:
    """One line per file (or per kernel module of a `-m` run) naming the kernels nothing launched in this
    run: not a finding (the kernel may be right), but not a silence either."""
    out = []
    for r in results:
        if not r.get("opened") or not r.get("not_launched"):
            continue
        by_file: dict[str, list[dict]] = {}
        for k in r["not_launched"]:
            by_file.setdefault(k.get("file") or r["path"], []).append(k)
        for path, kernels in by_file.items():
            names = ", ".join(f"{k['name']} (line {k['line']})" for k in kernels)
            out.append(f"{path}: note: not launched in this run, not checked: {names}")
    return out


def json_document(findings: list[dict], results: list[dict]) -> dict[str, Any]:
    return {
        "files": [
            {
                "path": r["path"],
                "opened": r["opened"],
                "kernels": r["kernels"],
                "notes": r.get("notes", []),
                "not_launched": r.get("not_launched", []),
            }
            for r in results
        ],
        "findings": findings,
    }


# ---------------------------------------------------------------------------------------------- GitHub


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(f: dict) -> str:
    """`::warning file=F,line=L,col=C,title=...::message`: an annotation on the line in the pull request."""
    props = [f"file={_escape_property(f['file'])}"]
    if f.get("source_line"):
        props.append(f"line={f['source_line']}")
        if f.get("column"):
            props.append(f"col={f['column']}")
    props.append(f"title={_escape_property('irscope ' + f['rule'])}")
    body = headline(f) + f" Fix: {f['fix']}"
    return f"::{_GITHUB_LEVEL[f['severity']]} {','.join(props)}::{_escape_data(body)}"


# ---------------------------------------------------------------------------------------------- SARIF


def sarif_document(findings: list[dict], notes: list[str] = ()) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run: irscope's rules, and one result per finding."""

    rule_ids = list(RULES)
    rules = [
        {
            "id": rid,
            "name": "".join(w.capitalize() for w in rid.split("-")),
            "shortDescription": {"text": RULES[rid][0]},
            "defaultConfiguration": {"level": _SARIF_LEVEL[RULES[rid][1]]},
        }
        for rid in rule_ids
    ]
    results = []
    for f in findings:
        result: dict[str, Any] = {
            "ruleId": f["rule"],
            "ruleIndex": rule_ids.index(f["rule"]),
            "level": _SARIF_LEVEL[f["severity"]],
            "message": {"text": headline(f).split(": ", 1)[1] + f" Fix: {f['fix']}"},
            "locations": [{"physicalLocation": _physical(f)}],
            "partialFingerprints": {"irscopeFinding/v1": _fingerprint(f)},
            "properties": {
                "kernel": f.get("kernel"),
                "cost": f["cost"],
                "whatIf": f["what_if"]["text"] if f.get("what_if") else None,
            },
        }
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "irscope", "version": __version__, "rules": rules}},
                "originalUriBaseIds": {
                    "%SRCROOT%": {"description": {"text": "the directory irscope ran in"}}
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
                # what was not checked (kernels nothing launched): said, not a result
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "toolExecutionNotifications": [
                            {"level": "note", "message": {"text": text}} for text in notes
                        ],
                    }
                ],
            }
        ],
    }


def _physical(f: dict) -> dict[str, Any]:
    path = f["file"]
    if path.startswith("/"):
        artifact = {"uri": "file://" + _uri_path(path)}
    else:
        artifact = {"uri": _uri_path(path), "uriBaseId": "%SRCROOT%"}
    out: dict[str, Any] = {"artifactLocation": artifact}
    if f.get("source_line"):
        region: dict[str, Any] = {"startLine": f["source_line"]}
        if f.get("column"):
            region["startColumn"] = f["column"]
        if f.get("source_text"):
            region["snippet"] = {"text": f["source_text"]}
        out["region"] = region
    return out


def _uri_path(path: str) -> str:
    from urllib.parse import quote

    return quote(path.replace("\\", "/"), safe="/")


def _fingerprint(f: dict) -> str:
    """Stable across edits elsewhere in the file: the same fields a baseline matches on."""
    key = "\x00".join(str(f.get(k) or "") for k in ("file", "kernel", "rule", "source_text"))
    return hashlib.sha256(key.encode()).hexdigest()[:32]
