"""Pygments lexers for the stages pygments has none for: MLIR (TTIR, TTGIR) and NVIDIA SASS.

LLVM IR and PTX use pygments' own lexers; AMDGCN is GNU-assembler syntax, so it uses `GasLexer`.
The lexers here work line by line (no token spans a newline), so a viewer can lex a huge stage once
and keep one token list per line.
"""

from __future__ import annotations

from pygments.lexer import Lexer, RegexLexer
from pygments.lexers import get_lexer_by_name
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

__all__ = ["MlirLexer", "SassLexer", "lexer_for_stage"]


class MlirLexer(RegexLexer):
    """MLIR as Triton prints it: `%x = dialect.op %a, %b : type loc(#loc3)`, `#loc` tables, attributes."""

    name = "MLIR"
    aliases = ["mlir", "ttir", "ttgir"]
    filenames = ["*.mlir", "*.ttir", "*.ttgir"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*$", Comment.Single),
            # debug locations: `loc(...)` suffixes and `#locN = loc(...)` definitions
            (r"#loc\d*", Comment.Preproc),
            (r"\bloc\(", Comment.Preproc, "loc"),
            (r'"(\\\\|\\"|[^"])*"', String),
            (r"%[\w$.\-#]+", Name.Variable),
            (r"\^[\w$.\-]+", Name.Label),
            (r"@[\w$.\-]+", Name.Function),
            (r"![\w$.\-]+", Keyword.Type),
            (r"#[\w$.\-]+", Name.Attribute),
            (
                r"\b(module|func|attributes|public|private|loc|unknown|true|false|dense|to|step|iter_args)\b",
                Keyword,
            ),
            (r"\b(tensor|memref|vector|ptr|index|none|[ifu]\d+|bf16|f8E\w+|tf32)\b", Keyword.Type),
            (r"\b[a-z_][\w]*\.[\w.]+", Name.Builtin),  # dialect.op: tt.load, arith.addi, scf.for
            (r"-?0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+\.\d*(e[+-]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"->|[=:<>x*+\-]", Operator),
            (r"[(){}\[\],]", Punctuation),
            (r"[\w$.]+", Text),
            (r".", Text),
        ],
        "loc": [
            (r"\(", Comment.Preproc, "#push"),
            (r"\)", Comment.Preproc, "#pop"),
            (r"[^()\n]+", Comment.Preproc),
            (r"\n", Whitespace, "#pop"),
        ],
    }


class SassLexer(RegexLexer):
    """NVIDIA SASS as nvdisasm prints it: `/*0040*/  @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;`."""

    name = "SASS"
    aliases = ["sass"]
    filenames = ["*.sass"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//##.*$", Comment.Preproc),  # `//## File "...", line N`: debug line info
            (r"//.*$", Comment.Single),
            (r"/\*[0-9a-fA-F]+\*/", Comment.Special),  # instruction address
            (r"/\*.*?\*/", Comment.Multiline),
            (r"\.[A-Za-z_][\w.$]*:", Name.Label),
            (r"[A-Za-z_.$][\w.$]*:", Name.Label),
            (r"\.[a-z_][\w]*", Keyword.Pseudo),  # directives: .section .align .global
            (r"@!?U?P[T\d]+", Keyword.Pseudo),  # predicate guard
            (r"\b(U?R[Z\d]+|U?P[T\d]+|SR_[\w.]+|SRZ|RZ|PT|UPT|URZ)(\.\w+)*\b", Name.Variable),
            (r"\b[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*\b", Name.Builtin),  # opcode with modifiers
            (r"c\[0x[0-9a-fA-F]+\]", Name.Constant),
            (r"\b(desc|gdesc)\b", Keyword),
            (r"-?0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+\.\d*(e[+-]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r'"(\\\\|\\"|[^"])*"', String),
            (r"[\[\]{}(),;|]", Punctuation),
            (r"[-+!~*@=]", Operator),
            (r"[\w$.]+", Text),
            (r".", Text),
        ],
    }


_BY_STAGE = {"ttir": MlirLexer, "ttgir": MlirLexer, "sass": SassLexer}
_PYGMENTS_NAME = {"source": "python", "llir": "llvm", "ptx": "ptx", "amdgcn": "gas"}


def lexer_for_stage(stage: str) -> Lexer:
    """The lexer for a stage name (source, ttir, ttgir, llir, ptx, sass, amdgcn)."""
    if stage in _BY_STAGE:
        return _BY_STAGE[stage](stripnl=False, ensurenl=False)
    return get_lexer_by_name(_PYGMENTS_NAME.get(stage, "text"), stripnl=False, ensurenl=False)
