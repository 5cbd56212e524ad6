"""A Jupyter notebook as the Python file irscope runs: its code cells in order, each after a line that names
it, IPython's own lines (shell `!cmd`, line magics `%name`, cell magics `%%name`) left out and said.

The script's lines are what every view shows and what Triton reads the kernels from (`linecache` holds it
under the notebook's path, so `inspect.getsource` finds a kernel defined in a cell); `cell_of` turns one of
its lines back into the cell and the line within the cell, as the notebook numbers them (every cell counts,
markdown too, from 1)."""

from __future__ import annotations

import json
import linecache
from dataclasses import dataclass, field

from irscope.base.errors import IrscopeError

# Cell magics whose body is Python that runs as it is (timing, capturing output).
_PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")


@dataclass
class NotebookScript:
    text: str
    # script line (1-based) of each code cell's first line -> (cell number, lines)
    cells: list[tuple[int, int, int]] = field(
        default_factory=list
    )  # (first script line, cell, lines)
    skipped: list[str] = field(default_factory=list)  # "cell 3, line 1: !pip install triton"

    def cell_of(self, line: int) -> tuple[int, int] | None:
        """(cell, line within it) of a script line; None for a line between cells."""
        for first, cell, count in self.cells:
            if first <= line < first + count:
                return cell, line - first + 1
        return None

    def position(self, line: int | None) -> str:
        """`cell 3, line 5` for a script line; `line N` where it is no cell's."""
        found = self.cell_of(line) if line else None
        return f"cell {found[0]}, line {found[1]}" if found else f"line {line}"

    def notes(self, shown: str) -> list[str]:
        """What irscope says about the notebook when it opens: which cells the script's line numbers are (the
        views that number lines count the script's), and what it left out."""
        ranges = ", ".join(
            f"cell {cell} at {first}-{first + count - 1}" if count else f"cell {cell} empty"
            for first, cell, count in self.cells
        )
        out = [
            f"{shown} is a notebook: its code cells run in order; its source is numbered cell:line, and lines "
            f"numbered alone are the script's ({ranges})"
        ]
        if self.skipped:
            first = "; ".join(self.skipped[:3]) + ("; …" if len(self.skipped) > 3 else "")
            out.append(
                f"{shown}: {len(self.skipped)} IPython line(s) left out (shell commands and magics do not run "
                f"in irscope): {first}"
            )
        return out


def notebook_script(path: str, raw: bytes, shown: str) -> NotebookScript:
    """The script of the notebook at `path` (its bytes `raw`), registered with linecache under `path`."""
    try:
        document = json.loads(raw.decode("utf-8"))
        cells = document["cells"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise IrscopeError(
            f"{shown} is not a Jupyter notebook irscope can read (nbformat 4 JSON with a list of cells); "
            f"save it again from Jupyter, or export it as a .py file"
        ) from None
    script = NotebookScript("")
    lines: list[str] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        body = ("".join(source) if isinstance(source, list) else str(source)).splitlines()
        lines.append(f"# In[cell {number}]")
        script.cells.append((len(lines) + 1, number, len(body)))
        lines.extend(_python_lines(body, number, script.skipped))
    script.text = "\n".join(lines) + "\n"
    linecache.cache[path] = (len(script.text), None, script.text.splitlines(keepends=True), path)
    return script


def _python_lines(body: list[str], cell: int, skipped: list[str]) -> list[str]:
    """The cell's lines, one for one, with IPython's own lines made comments (a `pass` where a block needs one)."""
    first = body[0].strip() if body else ""
    if first.startswith("%%") and not first.startswith(_PYTHON_CELL_MAGICS):
        skipped.append(f"cell {cell}: {first.split()[0]} (the whole cell)")
        return [f"# irscope left out: {line}" for line in body]
    out = []
    for index, line in enumerate(body, start=1):
        stripped = line.lstrip()
        if stripped.startswith(("!", "%")):
            indent = line[: len(line) - len(stripped)]
            skipped.append(f"cell {cell}, line {index}: {stripped.split()[0]}")
            out.append(f"{indent}pass  # irscope left out: {stripped}")
        else:
            out.append(line)
    return out
