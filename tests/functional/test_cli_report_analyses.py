"""`irscope report` carries the analyses: memory ops, per-line totals, occupancy, vectorization, what-if."""

import json

from conftest import kernel_path


def test_add_sm90_json_memory_ops_are_16_bytes_and_masked(cli):
    code, out, _ = cli("report", kernel_path("add.py"), "--target", "sm_90", "--json")
    assert code == 0
    k = json.loads(out)["kernels"][0]
    globals_ = [o for o in k["memory_ops"] if o["space"] == "global"]
    assert len(globals_) == 6 and all(o["stage"] == "ptx" for o in globals_)
    assert all(o["width_bytes"] == 16 and o["masked"] for o in globals_)
    assert {o["op"] for o in globals_} == {"load", "store"}
    assert set(globals_[0]) >= {
        "stage",
        "ptx_line",
        "source_line",
        "op",
        "space",
        "width_bytes",
        "masked",
    }
    assert [(r["source_line"], r["loads"], r["stores"]) for r in k["memory_by_line"]] == [
        (26, 2, 0),
        (27, 2, 0),
        (28, 0, 2),
    ]
    assert k["occupancy"]["warps_per_sm"] == 64 and k["occupancy"]["max_warps_per_sm"] == 64
    assert k["occupancy"]["limited_by"] == "warps"
    assert k["vectorization"] == [] and k["what_if"] is None


def test_misaligned_text_report_says_why_and_what_if(cli):
    code, out, _ = cli("report", kernel_path("misaligned.py"), "--target", "sm_90")
    assert code == 0
    assert "not vectorized: line 25 load x_ptr 4 B" in out
    assert "n_elements = 1000, which is not a multiple of 16" in out
    assert "x_ptr is not known to be 16-byte aligned" in out
    assert "what if n_elements 1000 -> 1008:" in out and "line 25 load: 4 B -> 16 B" in out
    # the coalescing advice names what kept each access narrow (n = 1000 in the first launch, the x[1:]
    # views and n = 4095 in the second), and the same advice for several lines is spelled out once
    assert (
        out.count("fix: Pad n_elements to a multiple of 16") == 2
        and out.count("fix: as for line 25") == 2
    )
    assert (
        "fix: Pass a 16-byte-aligned tensor as x_ptr" in out
        and "fix: Pass a 16-byte-aligned tensor as y_ptr" in out
    )
    assert "Let Triton vectorize" not in out and "less traffic" not in out


def test_amd_report_has_waves(cli):
    code, out, _ = cli("report", kernel_path("add.py"), "--target", "gfx942", "--json")
    k = json.loads(out)["kernels"][0]
    assert {o["stage"] for o in k["memory_ops"]} == {"amdgcn"}
    assert all(o["width_bytes"] == 16 for o in k["memory_ops"] if o["space"] == "global")
    assert k["occupancy"]["max_warps_per_sm"] == 32 and k["occupancy"]["waves_per_simd"] == 8
