"""A Jupyter notebook opened as a file (issue 33, item 2): its code cells run in order, IPython's own lines are
left out and said, and every place that names a line of it in the report and `check` says the cell and the line
in the cell; the terminal UI's header too, and its source pane shows the cells."""

import json

from conftest import fixture_path, run_irscope
from tui_helpers import pane_showing, run_async, wait_until_shown

from irscope.tui.app import IrscopeApp

NOTEBOOK = fixture_path("add_notebook.ipynb")


def test_report_runs_the_code_cells_and_says_cell_and_line():
    done = run_irscope("report", NOTEBOOK, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    (kernel,) = doc["kernels"]
    assert kernel["name"] == "add_kernel" and kernel["registers"] > 0
    assert kernel["cell"] == "cell 3, line 3"  # the def, under %matplotlib and @triton.jit
    found = {f["rule"]: f for f in kernel["findings"]}
    assert found["uncoalesced"]["cell"] == "cell 3, line 6"  # the strided load
    text = run_irscope("report", NOTEBOOK)
    assert "add_notebook.ipynb cell 3, line 6 (add_kernel)" in text.stdout
    assert "add_notebook.ipynb cell 3, line 3)" in text.stdout
    # what was left out, in one line; the cells' place in the script
    assert "4 IPython line(s) left out" in text.stderr and "cell 2, line 1: !pip" in text.stderr
    assert "cell 3 at 7-14" in text.stderr
    # a plain file keeps its path:line
    plain = run_irscope("report", "kernels/add.py")
    assert "add_kernel  (kernels/add.py:21)  target sm_90" in plain.stdout


def test_check_names_the_cell():
    done = run_irscope("check", NOTEBOOK)
    assert done.returncode == 1, done.stderr  # the uncoalesced load is a warning: the gate fails
    assert "add_notebook.ipynb cell 3, line 6: warning[uncoalesced]" in done.stdout


def test_a_notebook_irscope_cannot_read_is_one_line(tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    done = run_irscope("report", str(broken))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "broken.ipynb is not a Jupyter notebook irscope can read" in done.stderr
    bad = tmp_path / "bad.ipynb"
    bad.write_text(
        json.dumps(
            {
                "cells": [{"cell_type": "code", "source": ["x = (\n"]}],
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )
    done = run_irscope("report", str(bad))
    assert done.returncode == 2 and "bad.ipynb cell 1, line 1: has a syntax error" in done.stderr


@run_async
async def test_the_tui_header_names_the_cell_and_the_source_pane_shows_the_cells():
    app = IrscopeApp(NOTEBOOK, target="sm_90")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until_shown(app, pilot)
        assert app.main.shown.comp.kernel.cell == "cell 3, line 3"
        header = app.main.query_one("#header").render()
        assert "add_notebook.ipynb cell 3, line 3" in str(header)
        source = app.main.shown.texts["source"].lines
        assert source[0] == "# In[cell 2]" and "# In[cell 3]" in source
        # the gutter numbers each line as its cell and line: the def is 3:3, a cell's marker line has none
        labels = app.main.shown.comp.kernel.line_labels
        assert labels[source.index("# In[cell 3]")] == ""
        def_index = next(i for i, line in enumerate(source) if line.startswith("def add_kernel"))
        assert labels[def_index] == "3:3"
        pane = pane_showing(app, "source")
        gutter = "".join(s.text for s in pane.view._row_strips(def_index, 0, 80)[0])
        assert gutter.strip().startswith("3:3")
        # the findings name their lines the same way (the strided load: cell 3, line 6)
        from irscope.tui.findings import FindingsView

        view = app.query_one(FindingsView)
        uncoalesced = next(f for f in view.findings if f.rule == "uncoalesced")
        assert uncoalesced.line_label == "3:6" and "line 3:6" in view.plain_text(160)
