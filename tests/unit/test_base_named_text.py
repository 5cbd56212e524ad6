"""How a kernel's specializations are told apart in a list (base/named_text.py)."""

from irscope.base.named_text import differing, shown_values

# Gluon tutorial 02's memcpy: one kernel compiled for each layout its author tried, as Gluon prints them
LAYOUT = (
    "BlockedLayout(size_per_thread=[{}], threads_per_warp=[32], warps_per_cta=[4], order=[0], "
    "cga_layout=[])"
)


def test_only_the_constexprs_that_differ_are_shown():
    rows = [{"BLOCK": 128, "EVEN": True}, {"BLOCK": 256, "EVEN": True}]
    names = differing(rows)
    assert names == ["BLOCK"]
    assert [shown_values(row, names, rows) for row in rows] == ["BLOCK=128", "BLOCK=256"]


def test_a_layout_shows_the_fields_that_tell_the_rows_apart():
    """The picker's column cut every row of Gluon tutorial 02 at `layout=BlockedL`: now the size per thread."""
    rows = [
        {"XBLOCK": 2048, "layout": LAYOUT.format(1)},
        {"XBLOCK": 2048, "layout": LAYOUT.format(4)},
        {"XBLOCK": 1024, "layout": LAYOUT.format(4)},
    ]
    names = differing(rows)
    assert [shown_values(row, names, rows) for row in rows] == [
        "XBLOCK=2048 layout=BlockedLayout(size_per_thread=[1])",
        "XBLOCK=2048 layout=BlockedLayout(size_per_thread=[4])",
        "XBLOCK=1024 layout=BlockedLayout(size_per_thread=[4])",
    ]
    # alone, or beside a value of another kind, a layout is shown whole
    assert shown_values(rows[0], ["layout"]) == f"layout={LAYOUT.format(1)}"
    assert shown_values(rows[0], ["layout"], [{"layout": "None"}]) == f"layout={LAYOUT.format(1)}"
