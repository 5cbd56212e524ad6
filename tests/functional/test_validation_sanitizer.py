"""irscope's out-of-bounds finding against compute-sanitizer's memcheck on the H100, rebuilt from the committed raw
data (validation/data/h100_sanitizer: memcheck's log, result and launched kernels per case; irscope's report of
each case made offline). The table is the one docs/validation.md shows, and the comparison can fail both ways:
a kernel memcheck flagged that irscope did not, and one irscope flagged that memcheck checked and found clean."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "validation", "data", "h100_sanitizer")
sys.path.insert(0, os.path.join(ROOT, "validation"))

import sanitizer_bounds  # noqa: E402


def test_the_table_is_rebuilt_from_the_raw_data():
    with open(os.path.join(DATA, "sanitizer.md")) as f:
        assert sanitizer_bounds.table(DATA) == f.read().rstrip("\n")


def test_every_kernel_memcheck_flagged_is_flagged_and_the_clean_ones_are_not():
    gpu = sanitizer_bounds.load_gpu(DATA)
    rows, counts = sanitizer_bounds.compare(gpu, _irscope())
    assert counts["missed"] == 0
    assert counts["agree"] == 2  # the planted copy kernel, adasplash's _bwd_preprocess
    assert counts["clean on both"] >= 35  # the examples, the pointer table, the libraries' tests
    # the one irscope flags alone: adasplash's _get_tau loads BLOCK_M=128 rows of a 64-row head unmasked; past
    # `Q` its lanes land in the next tensor, on the GPU in every case (memcheck is silent)
    (alone,) = [r for r in rows if r.endswith("| false alarm |")]
    assert alone.startswith("| _get_tau |") and "lie outside `Q`" in alone


def test_the_parser_reads_memchecks_report():
    log = (
        "========= Invalid __global__ write of size 4 bytes\n"
        "=========     at copy_kernel+0xa0 in stores_past_end.py:12\n"
        "=========     by thread (19,0,0) in block (1,0,0)\n"
    )
    assert sanitizer_bounds.memcheck_kernels(log) == {"copy_kernel": {"write"}}


def _irscope() -> dict:
    import json

    with open(os.path.join(DATA, "irscope.json")) as f:
        return json.load(f)
