"""Syntax colours for stage text: pygments tokens -> rich styles, for dark and light themes.

IR stages are lexed one line at a time, on demand (their lexers never span lines), so a 20,000-line
LLVM module costs nothing until its lines scroll into view. Python source is lexed whole (docstrings
span lines) — it is small.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pygments.lexer import Lexer
from pygments.styles import get_style_by_name
from pygments.token import Error, Token, _TokenType
from rich.style import Style

from irscope.ir.lexers import lexer_for_stage
from irscope.ir.locations.mlir import strip_locations

TAB_SIZE = 4
LONG_LINE = 400


@lru_cache(maxsize=4)
def token_styles(dark: bool) -> "TokenStyles":
    return TokenStyles("monokai" if dark else "default")


class TokenStyles:
    """Foreground/bold/italic of each token type in a pygments style; backgrounds are left to the viewer."""

    def __init__(self, style_name: str) -> None:
        self._style = get_style_by_name(style_name)
        self._cache: dict[_TokenType, Style] = {}

    def __call__(self, token: _TokenType) -> Style:
        style = self._cache.get(token)
        if style is None:
            # pygments' LLVM/PTX lexers flag valid syntax
            known = Token.Text if token in Error else token
            while known not in self._style._styles and known.parent is not None:
                known = known.parent  # a token type the style does not list: use its parent's look
            spec = self._style.style_for_token(known)
            style = Style(
                color=f"#{spec['color']}" if spec["color"] else None,
                bold=spec["bold"] or None,
                italic=spec["italic"] or None,
            )
            self._cache[token] = style
        return style


_LLVM_DBG = re.compile(r",\s*!dbg\s+!\d+")
_WIDE_GAPS = re.compile(r"\s{2,}")


def strip_inline_debug(stage: str, line: str) -> str:
    """A line without its inline debug annotations (MLIR `loc(...)` suffixes, LLVM `, !dbg !12`),
    and SASS without nvdisasm's column padding."""
    if stage in ("ttir", "ttgir"):
        return strip_locations(line)
    if stage == "llir":
        return _LLVM_DBG.sub("", line)
    if stage == "sass":  # nvdisasm pads into wide columns; keep the words, drop the padding
        body = _WIDE_GAPS.sub("  ", line.strip())
        return ("  " + body) if line[:1].isspace() and body else body
    return line


class StageText:
    """The lines of one stage, with tabs expanded, and their tokens (lexed on first use).
    With `strip_debug`, inline debug annotations are left out (the lines stay one for one)."""

    def __init__(self, stage: str, text: str, *, strip_debug: bool = False) -> None:
        self.stage = stage
        lines = text.splitlines()
        if strip_debug:
            lines = [strip_inline_debug(stage, line) for line in lines]
        self.lines = [line.expandtabs(TAB_SIZE) for line in lines]
        self.width = max((len(line) for line in self.lines), default=0)
        self._lexer: Lexer = lexer_for_stage(stage if stage != "error" else "text")
        self._tokens: list[list[tuple[_TokenType, str]] | None] = [None] * len(self.lines)
        if stage == "source":
            self._lex_whole()

    def __len__(self) -> int:
        return len(self.lines)

    def tokens(self, index: int, limit: int | None = None) -> list[tuple[_TokenType, str]]:
        """The tokens of a line. Past LONG_LINE characters only the first `limit` are lexed, and not
        kept: a few lines of LLVM IR run to thousands of characters, and nobody reads them whole."""
        found = self._tokens[index]
        if found is not None:
            return found
        line = self.lines[index]
        if limit is not None and len(line) > max(LONG_LINE, limit):
            return self._lex(line[:limit])
        found = self._tokens[index] = self._lex(line)
        return found

    def _lex(self, line: str) -> list[tuple[_TokenType, str]]:
        return [(tok, value) for tok, value in self._lexer.get_tokens(line) if value != "\n"]

    def _lex_whole(self) -> None:
        current: list[tuple[_TokenType, str]] = []
        row = 0
        for token, value in self._lexer.get_tokens("\n".join(self.lines)):
            parts = value.split("\n")
            for n, part in enumerate(parts):
                if n:
                    if row < len(self._tokens):
                        self._tokens[row] = current
                    row += 1
                    current = []
                if part:
                    current.append((token, part))
        if row < len(self._tokens):
            self._tokens[row] = current
        for index, found in enumerate(self._tokens):
            if found is None:
                self._tokens[index] = [(Token.Text, self.lines[index])]
