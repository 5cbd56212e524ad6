"""What an edit changed in the compiled code (analysis/changes.py), on add.py compiled before and after real
edits: a comment added above the kernel (lines move, nothing changes), and the load of x moved by one
element (the loads of that line become scalar)."""

from conftest import kernel_path

from irscope.analysis.changes import changes
from irscope.engine.session import open_file

LOAD_X = "    x = tl.load(x_ptr + offsets, mask=mask)\n"


def _compiled(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    (comp,) = open_file(str(path), target="sm_90").compile_all()
    assert comp.ok
    return comp


def test_lines_that_only_moved_are_the_same_lines_and_an_offset_load_becomes_scalar(tmp_path):
    text = open(kernel_path("add.py")).read()
    assert LOAD_X in text
    before = _compiled(tmp_path, "before.py", text)
    line_x = text[: text.index(LOAD_X)].count("\n") + 1

    moved = _compiled(
        tmp_path, "moved.py", text.replace("@triton.jit", "# a note\n# another\n@triton.jit")
    )
    same = changes(before, moved)
    decorator = text[: text.index("@triton.jit")].count("\n") + 1
    assert same.edited == (decorator, decorator + 1)  # the two new lines, and nothing below them
    assert same.lines == () and same.summary() == "no change in memory instructions or registers"

    offset = _compiled(
        tmp_path, "offset.py", text.replace(LOAD_X, LOAD_X.replace("offsets,", "offsets + 1,"))
    )
    changed = changes(before, offset)
    assert changed.edited == (line_x,)
    (line,) = [c for c in changed.lines if c.line == line_x]
    assert set(line.before) == {"ld.global.v4.b32"} and line.after
    assert all(".v" not in opcode for opcode in line.after)  # every load of x scalar now
    assert sum(line.after.values()) == 4 * sum(line.before.values())
    assert changed.summary().startswith(f"line {line_x}: ")
    assert "ld.global.v4.b32 → " in changed.summary()
