"""`irscope dump --stage sass` without --annotate: the `//## File` rows name the lines the source map
gives each instruction (nvdisasm's own rows put add.py's loads on the blank lines after the kernel)."""

from __future__ import annotations

import re

from conftest import kernel_path
from tui_helpers import source_line_of

from irscope.ir import sass as ir_sass
from irscope.ir.locations.sass import parse_sass

ADD = kernel_path("add.py")
ROW = re.compile(r'//## File "[^"]*add\.py", line (\d+)$')


def _row_before_each(text: str) -> list[tuple[str, int | None]]:
    """(opcode, line of the last outermost row above it) for each instruction."""
    out, line = [], None
    for raw in text.splitlines():
        m = ROW.search(raw)
        if m:
            line = int(m.group(1))
        elif (ins := ir_sass.tokenize(raw)) is not None:
            out.append((ins.base, line))
    return out


def test_the_loads_and_stores_sit_under_their_own_lines(cli):
    code, out, _ = cli("dump", ADD, "--stage", "sass", "--target", "sm_90")
    assert code == 0
    loads = {source_line_of(ADD, "x = tl.load("), source_line_of(ADD, "y = tl.load(")}
    store = source_line_of(ADD, "tl.store(")
    seen = _row_before_each(out)
    assert [line for op, line in seen if op == "LDG"] == sorted(loads) * 2
    assert {line for op, line in seen if op == "STG"} == {store}
    with open(ADD, encoding="utf-8") as f:
        source = f.read().splitlines()
    assert all(source[line - 1].strip() for _, line in seen if line), (
        "no instruction under a blank line"
    )


def test_the_rows_say_what_annotate_says(cli):
    _, plain, _ = cli("dump", ADD, "--stage", "sass", "--target", "sm_90")
    _, annotated, _ = cli("dump", ADD, "--stage", "sass", "--target", "sm_90", "--annotate")
    by_annotate = [
        int(line.split("|")[0])
        for line in annotated.splitlines()
        if re.match(r"^\s*\d+ \|\s*/\*[0-9a-f]+\*/", line)
    ]
    parsed = parse_sass(plain)  # irscope reads its own output back: the same lines
    by_rows = [
        chain[-1].line
        for kind, chain in zip(parsed.kinds, parsed.chains)
        if kind.name == "INSTRUCTION" and chain
    ]
    assert by_rows == by_annotate and len(by_rows) > 20
