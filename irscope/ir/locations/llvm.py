"""Locations in LLVM IR: `!dbg !N` on instructions → `!DILocation(line, column, scope, inlinedAt)`,
whose scope (DISubprogram / DILexicalBlock / DILexicalBlockFile) names the DIFile, and whose
`inlinedAt` chain leads out to the kernel.

Instructions without `!dbg` (phi nodes at a block's top, mostly) take the location of the next located
instruction of their basic block, marked as inferred.
"""

from __future__ import annotations

import os

from irscope.ir import llvm as ir
from irscope.ir.line_types import Chain, LineKind, Parsed, SourceLoc, infer_gaps


class _Metadata:
    def __init__(self, nodes: dict[str, tuple[str, str]]) -> None:
        self.nodes = nodes
        self.fields: dict[str, dict[str, str]] = {}
        self.files: dict[str, str | None] = {}
        self.chains: dict[str, Chain | None] = {}

    def field_map(self, node: str) -> dict[str, str]:
        got = self.fields.get(node)
        if got is None:
            got = ir.metadata_fields(self.nodes.get(node, ("", ""))[1])
            self.fields[node] = got
        return got

    def file_of_scope(self, node: str, depth: int = 0) -> str | None:
        if node in self.files:
            return self.files[node]
        kind = self.nodes.get(node, ("", ""))[0]
        f = self.field_map(node)
        path = None
        if kind == "DIFile":
            name = f.get("filename", "")
            directory = f.get("directory", "")
            path = name if os.path.isabs(name) or not directory else f"{directory}/{name}"
        elif "file" in f:
            path = self.file_of_scope(f["file"], depth + 1)
        elif "scope" in f and depth < 32:
            path = self.file_of_scope(f["scope"], depth + 1)
        self.files[node] = path
        return path

    def chain(self, node: str, depth: int = 0) -> Chain | None:
        if node in self.chains:
            return self.chains[node]
        self.chains[node] = None  # guards against cycles in malformed input
        kind = self.nodes.get(node, ("", ""))[0]
        f = self.field_map(node)
        result: Chain | None = None
        if kind == "DILocation":
            line = int(f.get("line", "0") or 0)
            here = (
                SourceLoc(
                    self.file_of_scope(f.get("scope", "")) or "",
                    line,
                    int(f.get("column", "0") or 0),
                ),
            )
            outer = (
                self.chain(f["inlinedAt"], depth + 1) if "inlinedAt" in f and depth < 64 else None
            )
            if line <= 0:
                result = outer
            else:
                result = here + outer if outer else here
        elif kind == "DISubprogram":  # `define ... !dbg !N`: the function's own line
            line = int(f.get("line", "0") or 0)
            if line > 0:
                result = (SourceLoc(self.file_of_scope(node) or "", line, 0),)
        self.chains[node] = result
        return result


def parse_llvm(text: str) -> Parsed:
    lines = text.splitlines()
    nodes: dict[str, tuple[str, str]] = {}
    for line in lines:
        if line.startswith("!"):
            found = ir.metadata_node(line)
            if found:
                nodes[found[0]] = (found[1], found[2])
    meta = _Metadata(nodes)
    kinds: list[LineKind] = []
    chains: list[Chain | None] = []
    INSTR = LineKind.INSTRUCTION
    for line in lines:
        if not line or line.isspace():
            kinds.append(LineKind.BLANK)
            chains.append(None)
            continue
        first = line[0]
        if first == " " or first == "\t":
            s = line.lstrip()
            if s.startswith(";"):
                kinds.append(LineKind.COMMENT)
                chains.append(None)
                continue
            kinds.append(INSTR)
            ref = ir.debug_location(line)
            chains.append(meta.chain(ref) if ref else None)
            continue
        if first == "!":
            kinds.append(LineKind.DEBUG)
            chains.append(None)
        elif first == ";":
            kinds.append(LineKind.COMMENT)
            chains.append(None)
        elif line.startswith("define "):
            kinds.append(LineKind.DIRECTIVE)
            ref = ir.debug_location(line)
            chains.append(meta.chain(ref) if ref else None)
        elif ir.label(line) is not None:
            kinds.append(LineKind.LABEL)
            chains.append(None)
        else:
            kinds.append(LineKind.DIRECTIVE)
            chains.append(None)
    inferred = infer_gaps(kinds, chains, prefer_next=True)
    return Parsed(kinds, chains, inferred)
