"""Every line number in `irscope report --json` is 1-based and named for what it counts (`source_line`,
`ptx_line`, `ttir_line`, `ttgir_line`, `def_line`; `column` 1-based too): each one checked against the
text it points into, on misaligned.py's first launch."""

from __future__ import annotations

import json

from conftest import kernel_path

from irscope.findings.rules.launch import KERNEL_LINE_RULES

MISALIGNED = kernel_path("misaligned.py")


def _stage(cli, stage: str) -> list[str]:
    code, out, _ = cli("dump", MISALIGNED, "--stage", stage, "--target", "sm_90", "--launch", "0")
    assert code == 0
    return out.splitlines()


def _line_keys(value, path="") -> set[str]:
    found = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if "line" in key and isinstance(item, int):
                found.add(key)
            found |= _line_keys(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            found |= _line_keys(item, path)
    return found


def test_every_line_number_is_one_based_and_points_at_what_its_name_says(cli):
    code, out, _ = cli("report", MISALIGNED, "--target", "sm_90", "--json")
    assert code == 0
    k = json.loads(out)["kernels"][0]
    with open(MISALIGNED, encoding="utf-8") as f:
        source = f.read().splitlines()
    ptx, ttir, ttgir = _stage(cli, "ptx"), _stage(cli, "ttir"), _stage(cli, "ttgir")
    named = {"source_line", "ptx_line", "ttir_line", "ttgir_line", "def_line"}
    # counts aside, each is named for what it counts
    assert _line_keys(k) - {"lines", "instruction_lines"} <= named

    assert source[k["def_line"] - 1].startswith("def add_kernel")
    for op in k["memory_ops"]:
        assert op["opcode"] in ptx[op["ptx_line"] - 1]
        assert f"tl.{op['op']}(" in source[op["source_line"] - 1]
    for d in k["vectorization"]:
        assert f"tt.{d['op']} " in ttir[d["ttir_line"] - 1]
        assert f"tl.{d['op']}(" in source[d["source_line"] - 1]
    for row in k["coalescing"]:
        assert f"tt.{row['kind']} " in ttgir[row["ttgir_line"] - 1]
        assert f"tl.{row['kind']}(" in source[row["source_line"] - 1]
    for row in k["memory_by_line"] + k["what_if"]["rows"]:
        assert (
            "tl.load(" in source[row["source_line"] - 1]
            or "tl.store(" in source[row["source_line"] - 1]
        )
    for finding in k["findings"]:
        text = source[finding["source_line"] - 1]
        assert text.strip() == finding["source_text"]
        # 1-based: the call Triton's location names; a finding about the launch, the kernel's def
        start = "def " if finding["rule"] in KERNEL_LINE_RULES else "tl."
        assert text[finding["column"] - 1 :].startswith(start)


def test_a_findings_column_is_the_call_whichever_column_triton_recorded():
    from irscope.findings.engine import _callee_start

    line = "    tl.store(out_ptr + offsets, tl.sum(x, 0) + y, mask=mask)"
    assert _callee_start(line, 5) == 5  # newer Tritons: at the callee already
    assert _callee_start(line, 13) == 5  # Triton 3.6, a load: at the opening parenthesis
    assert _callee_start(line, 32) == 5  # Triton 3.6, a store: inside its arguments
    # an inner call keeps its own
    assert _callee_start(line, line.index("tl.sum") + 1) == line.index("tl.sum") + 1
    # after a closed inner call: the outer one
    assert _callee_start(line, line.index("+ y") + 1) == 5
