"""`irscope export`: one self-contained HTML page, checked in a real headless Chromium (CDP over a pipe)."""

import os
import shutil

import pytest
from cdp import Browser, find_chromium
from conftest import ROOT, kernel_path

CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium installed (apt-get install chromium); "
    "the page's links are tested in a real browser",
)


@pytest.fixture(scope="module")
def browser():
    b = Browser(CHROMIUM)
    yield b
    b.close()


def _export(cli, source, out):
    code, stdout, err = cli("export", source, "-o", out)
    assert code == 0, err
    assert stdout.startswith(f"wrote {out}")
    return open(out, encoding="utf-8").read()


def test_palette_is_the_tuis():
    from irscope.commands.export.page import PALETTE
    from irscope.tui.linking import LINK_PALETTE

    assert PALETTE == LINK_PALETTE


@needs_chromium
def test_click_a_ptx_load_highlights_its_source_line_and_nothing_is_fetched(cli, tmp_path, browser):
    out = str(tmp_path / "s.html")
    page = _export(cli, kernel_path("strided.py"), out)
    for name in (
        "strided_gather_kernel",
        "sm_90",
        "registers",
        "occupancy",
        "Triton 3.",
        "irscope 0.",
    ):
        assert name in page
    url = "file://" + out
    session = browser.open_page(url)
    requests = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert requests == [url]  # the page itself, nothing else
    target = browser.evaluate(
        session,
        """(() => {
        const el = Array.from(document.querySelectorAll('[data-stage=ptx] .l[data-s]'))
                        .find(e => e.textContent.includes('ld.global'));
        el.scrollIntoView({block: 'center'});
        const r = el.getBoundingClientRect();
        return {x: r.left + 40, y: r.top + r.height / 2, s: el.dataset.s, i: el.dataset.i};
    })()""",
    )
    browser.click(session, target["x"], target["y"])
    state = browser.evaluate(
        session,
        f"""(() => {{
        const src = document.querySelector('[data-stage=source] .l[data-i="{target["s"]}"]');
        const ptx = document.querySelector('[data-stage=ptx] .l[data-i="{target["i"]}"]');
        const selected = Array.from(document.querySelectorAll('.l.sel'));
        return {{source: src.classList.contains('sel'), ptx: ptx.classList.contains('sel'),
                 stages: Array.from(new Set(selected.map(e => e.closest('.pane').dataset.stage))),
                 others: selected.filter(e => !e.dataset.c.split(' ').includes('{target["s"]}')).length,
                 title: document.getElementById('selected').textContent,
                 sourceText: src.textContent}};
    }})()""",
    )
    assert state["source"] and state["ptx"] and state["others"] == 0
    assert {"source", "ttir", "ttgir", "llir", "ptx"} <= set(state["stages"])
    assert state["title"] == f"source line {target['s']}"
    assert "tl.load" in state["sourceText"]
    assert [e for e in browser.events if e.get("method") == "Network.requestWillBeSent"][1:] == []


@needs_chromium
def test_the_page_carries_the_ranked_findings_and_a_click_selects_the_line(cli, tmp_path, browser):
    """The findings `irscope report` ranks, in its order, with cost and fix; a click on the uncoalesced gather
    selects line 26 in every pane. The launch statistics are in the header."""
    out = str(tmp_path / "f.html")
    page = _export(cli, kernel_path("strided.py"), out)
    assert "Findings (2, most costly first)" in page
    assert "0.002 waves: the grid&#x27;s 4 blocks fill 4 of 2112 block slots" in page
    session = browser.open_page("file://" + out)
    found = browser.evaluate(
        session,
        """Array.from(document.querySelectorAll('#findings li')).map(
            e => [e.querySelector('.sev').textContent, e.dataset.s || null])""",
    )
    assert found == [["warning[uncoalesced]", "26"], ["info[small-grid]", "23"]]
    target = browser.evaluate(
        session,
        """(() => {
        const el = document.querySelector('#findings li.warning');
        el.scrollIntoView({block: 'center'});
        const r = el.getBoundingClientRect();
        return {x: r.left + 20, y: r.top + 8};
    })()""",
    )
    browser.click(session, target["x"], target["y"])
    state = browser.evaluate(
        session,
        """(() => ({
        title: document.getElementById('selected').textContent,
        source: document.querySelector('[data-stage=source] .l[data-i="26"]').classList.contains('sel'),
        stages: Array.from(new Set(Array.from(document.querySelectorAll('.l.sel')).map(
            e => e.closest('.pane').dataset.stage))),
    }))()""",
    )
    assert state["title"] == "source line 26" and state["source"]
    assert {"source", "ttir", "ttgir", "llir", "ptx"} <= set(state["stages"])


@needs_chromium
def test_the_page_draws_each_access_lane_by_lane_and_a_click_selects_its_line(
    cli, tmp_path, browser
):
    """The strided gather's load and its store, each with one warp drawn as the Coalescing panel draws it: the
    load's 32 lanes in 32 sectors, one each (lane k alone in sector k), the store's two to a sector; the roofline's
    traffic and time in the header, said as a model; a click on the load selects line 26."""
    out = str(tmp_path / "c.html")
    page = _export(cli, kernel_path("strided.py"), out)
    assert "a model, not a measurement" in page and "from DRAM" in page
    session = browser.open_page("file://" + out)
    drawn = browser.evaluate(
        session,
        """Array.from(document.querySelectorAll('#coalescing li.access')).map(e => ({
            s: e.dataset.s, title: e.querySelector('.t').textContent,
            rows: e.querySelector('pre.warp').textContent.split('\\n').filter(r => r.includes('█'))
                .map(r => r.split('│')[1])}))""",
    )
    assert [d["s"] for d in drawn] == ["26", "27"]
    load, store = drawn
    assert "load x_ptr" in load["title"] and "32.0 sectors per request, ideal 4.0" in load["title"]
    assert len(load["rows"]) == 32 and [row.index("█") for row in load["rows"]] == list(range(32))
    assert all(row.count("█") == 1 for row in load["rows"])
    # the store is 16 bytes per lane: two lanes fill each of 16 sectors
    assert "store" in store["title"] and len(store["rows"]) == 16
    assert all(row.count("█") == 2 for row in store["rows"])
    target = browser.evaluate(
        session,
        """(() => {
        const el = document.querySelector('#coalescing li.access .t');
        el.scrollIntoView({block: 'center'});
        const r = el.getBoundingClientRect();
        return {x: r.left + 20, y: r.top + r.height / 2};
    })()""",
    )
    browser.click(session, target["x"], target["y"])
    title = browser.evaluate(session, "document.getElementById('selected').textContent")
    assert title == "source line 26"


@needs_chromium
def test_user_text_is_escaped(cli, tmp_path, browser):
    text = (
        open(kernel_path("add.py"))
        .read()
        .replace(
            "    pid = tl.program_id(axis=0)\n",
            "    pid = tl.program_id(axis=0)  # </div><script>window.pwned = 1</script><b>x</b> \x1b[31mred\n",
        )
    )
    path = tmp_path / "evil_add.py"
    path.write_text(text)
    out = str(tmp_path / "e.html")
    page = _export(cli, str(path), out)
    assert "<script>window.pwned" not in page and "\x1b" not in page
    assert "&lt;script&gt;window.pwned" in page and "\\x1b[31mred" in page
    session = browser.open_page("file://" + out)
    assert browser.evaluate(
        session,
        "[window.pwned === undefined, document.scripts.length, "
        "document.querySelectorAll('header b, .pane b').length]",
    ) == [True, 1, 0]


def test_corpus_tutorial_exports(cli, tmp_path):
    src = os.path.join(ROOT, "tests", "corpus", "tutorials", "triton-3.6", "02-fused-softmax.py")
    path = tmp_path / "02-fused-softmax.py"
    shutil.copy(src, path)
    page = _export(cli, str(path), str(tmp_path / "softmax.html"))
    assert 'data-stage="sass"' in page and "softmax_kernel" in page
    assert 'data-c="' in page and "--c:#" in page


def test_bad_output_is_one_line(cli, tmp_path):
    code, _, err = cli(
        "export", kernel_path("add.py"), "-o", str(tmp_path / "no" / "such" / "k.html")
    )
    assert code != 0 and "does not exist" in err and len(err.strip().splitlines()) == 1
