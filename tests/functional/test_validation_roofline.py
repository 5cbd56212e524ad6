"""irscope's roofline (DRAM reads and writes, FLOPs, the time estimate) against Nsight Compute and do_bench on
the H100, launch by launch, rebuilt from the committed raw data of two calls (validation/data/h100_launch_stats,
validation/data/h100_roofline, and a third with the tensor path's counters, validation/data/h100_tensor_flops):
ncu's raw pages, do_bench's medians, and irscope's report of the same files made
offline with Triton 3.6; and H200 calls (validation/data/h200_roofline_holdout, irscope's report made on that
GPU): three on probes written after the L2 share it keeps was fitted on the H100's data (their fills fit the
share it keeps dirty), one (`latency`) that the block starts and scattered reads were fitted on, and one
(`call4`) on a probe written after that."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "validation", "data")


def _table(text: str) -> tuple[list[str], list[list[str]]]:
    lines = [row for row in text.splitlines() if row.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return header, [[cell.strip() for cell in row.strip("|").split("|")] for row in lines[1:]]


def _compare(folder: str) -> str:
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "validation", "ncu_roofline.py"), "compare", folder],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    with open(os.path.join(folder, "roofline.md")) as f:
        published = f.read()
    assert _table(done.stdout) == _table(
        published
    )  # the committed table is what the data gives today
    return done.stdout


@pytest.mark.parametrize("call", ["h100_launch_stats", "h100_roofline", "h100_tensor_flops"])
def test_the_roofline_tables_are_rebuilt_and_dram_reads_agree_with_ncu(call):
    header, rows = _table(_compare(os.path.join(DATA, call)))
    column = {name: i for i, name in enumerate(header)}
    assert len(rows) >= 20
    verdicts = [row[column["reads agree"]] for row in rows]
    # every matched launch agrees, but for the ones whose cause the script names
    assert all(v in ("yes", "NO (known)") for v in verdicts)
    assert verdicts.count("yes") >= len(rows) - 1
    # both bounds the small and the large launches get
    assert {"latency", "memory"} <= {row[column["bound"]] for row in rows}


def test_the_second_call_checks_flops_and_do_bench_on_launches_of_a_wave_and_more():
    text = _compare(os.path.join(DATA, "h100_roofline"))
    header, rows = _table(text)
    column = {name: i for i, name in enumerate(header)}
    timed = [row for row in rows if row[column["do_bench"]] != "-"]
    assert len(timed) >= 8 and all(float(row[column["waves"]]) >= 1 for row in timed)
    # the FMA loop's FLOPs are counted as ncu counts them (two per FMA), exactly or within a thousandth
    fma = next(row for row in rows if row[column["kernel"]] == "fma_loop")
    theirs = float(fma[column["FLOP ncu"]].replace(",", ""))
    ours = float(fma[column["FLOP irscope"]].replace(",", ""))
    assert abs(ours - theirs) <= theirs / 1000
    # traffic in sectors, not in the tensor's bytes: the gather reads 8 times what it uses
    gather = next(row for row in rows if row[column["kernel"]] == "gather_stride")
    assert gather[column["reads agree"]] == "yes"
    # a prediction irscope calls a floor is one
    assert any(" floor" in row[column["irscope (code)"]] for row in rows)


def test_the_dots_flops_equal_the_tensor_paths_count():
    """The third call collected the tensor path's counters: every matmul launch's FLOPs as ncu counts them (2 x M
    x N x K; the accumulator's adds are the dot's own, not counted again)."""
    header, rows = _table(_compare(os.path.join(DATA, "h100_tensor_flops")))
    column = {name: i for i, name in enumerate(header)}
    dots = [row for row in rows if "matmul" in row[column["kernel"]]]
    assert len(dots) >= 6
    for row in dots:
        assert row[column["FLOP ncu"]] == row[column["FLOP irscope"]], row
    assert "tile_matmul" in {row[column["kernel"]] for row in dots}


def test_tiles_moved_through_tensor_descriptors_read_what_ncu_counts():
    """On an H200 (validation/h200_descriptor_roofline.sh): TMA tile copies, partial boxes at the tensor's edge
    included, and the autotuned descriptor fixture. The times are not compared: the offline report models an
    H100, the measurement ran on an H200."""
    header, rows = _table(_compare(os.path.join(DATA, "h200_descriptor_roofline")))
    column = {name: i for i, name in enumerate(header)}
    assert {row[column["kernel"]] for row in rows} == {"tile_copy", "copy_rows"}
    assert len(rows) == 5
    assert all(row[column["reads agree"]] == "yes" for row in rows)
    assert all(row[column["total within 10%"]] == "yes" for row in rows)


HOLDOUT = os.path.join(DATA, "h200_roofline_holdout")


@pytest.mark.parametrize("call", ["call1", "call2", "call3", "latency", "call4"])
def test_the_h200_holdout_tables_are_rebuilt(call):
    header, rows = _table(_compare(os.path.join(HOLDOUT, call)))
    column = {name: i for i, name in enumerate(header)}
    assert len(rows) >= 7
    assert all(row[column["reads agree"]] in ("yes", "NO (known)") for row in rows)


def test_on_the_h200_the_fills_the_dirty_share_is_fitted_on_write_what_the_model_says_during_the_launch():
    """L2_DIRTY_SHARE is what L2 held dirty at the end of these fills (validation/roofline_calibration.py); the
    model applies it as a cap past what L2 keeps and within it alike: 107 MB of a 134 MB fill and 14.9 MB of a
    40 MB one written during the launch, within 1% of ncu's (the model before the cap said 84 MB and 0)."""
    header, rows = _table(_compare(os.path.join(HOLDOUT, "call3")))
    column = {name: i for i, name in enumerate(header)}
    by_kernel = {row[column["kernel"]]: row for row in rows}

    def kb(text: str) -> float:
        return float(text.split(" KB")[0].replace(",", ""))

    for kernel in ("fill_f32", "fill_bf16"):
        row = by_kernel[kernel]
        theirs, ours = kb(row[column["writes ncu"]]), kb(row[column["irscope, during (all)"]])
        assert theirs > 10_000 and abs(ours - theirs) <= theirs / 100, row


def test_on_the_h100_do_bench_is_within_a_quarter_of_the_estimate_after_earlier_work():
    """The seven launches the H100's second call timed (one to eight waves: copies, a three-input add, a strided
    gather, a row softmax), none of which any constant is fitted on since stop 51: all within 25% (the strided
    gather 1.26 before its reads one line a lane cost more)."""
    header, rows = _table(_compare(os.path.join(DATA, "h100_roofline")))
    column = {name: i for i, name in enumerate(header)}
    timed = [
        float(row[column["do_bench / irscope"]]) for row in rows if row[column["do_bench"]] != "-"
    ]
    memory = [
        ratio
        for ratio, row in zip(timed, (r for r in rows if r[column["do_bench"]] != "-"))
        if row[column["bound"]] in ("memory", "blocks")
    ]
    assert len(memory) == 7 and all(0.75 <= ratio <= 1.25 for ratio in memory), memory


def test_on_the_h200_do_bench_is_within_a_quarter_of_the_estimate_after_earlier_work():
    header, rows = _table(_compare(os.path.join(HOLDOUT, "call3")))
    column = {name: i for i, name in enumerate(header)}
    timed = [
        float(row[column["do_bench / irscope"]])
        for row in rows
        if row[column["do_bench / irscope"]] != "-"
        and row[column["bound"]] in ("memory", "blocks")
        and float(row[column["waves"]]) >= 1
    ]
    assert len(timed) == 23
    # every one: the strided gather (1.31 before reads one line a lane cost more) and the row sum of 32,768
    # programs (1.27 before block starts) included
    assert all(0.75 <= ratio <= 1.25 for ratio in timed), timed


def _rows(call: str) -> list[dict[str, str]]:
    header, rows = _table(_compare(os.path.join(HOLDOUT, call)))
    return [dict(zip(header, row)) for row in rows]


def test_on_the_h200_many_short_programs_take_what_starting_their_blocks_takes():
    """BLOCK_START_SECONDS was fitted on the latency call's copies and row sums of at most 4 warps; held out on
    the third holdout's bf16 copy, softmax of 256-float rows with one warp and fp16 row moments with two
    (call4), and the first holdout's row sum (call3): each within 5% of Nsight Compute's duration."""
    for call, kernels in (
        ("call4", {"copy_bf16", "softmax_short_rows", "row_moments_f16"}),
        ("call3", {"row_sum_f32"}),
    ):
        held_out = [row for row in _rows(call) if row["kernel"] in kernels]
        assert {row["kernel"] for row in held_out} == kernels
        for row in held_out:
            assert row["bound"] == "blocks" and 0.95 <= float(row["ncu / irscope"]) <= 1.05, row
    # the one launch of 8-warp blocks, which the model leaves to a block's own latency, is slower than it says
    (eight_warps,) = [row for row in _rows("latency") if row["grid"] == "65533"]
    assert float(eight_warps["ncu / irscope"]) > 1.4


def test_on_the_h200_a_read_of_one_sector_of_a_64_byte_pair_reads_the_pair():
    """Gathers of one float per 64 and 128 bytes (latency), a matrix's first column, a permuted gather and a
    gather of one half per 64 bytes (call4): DRAM read twice their sectors, as irscope counts them now."""
    latency = {row["grid"]: row for row in _rows("latency") if row["kernel"] == "strided_gather"}
    call4 = {row["kernel"]: row for row in _rows("call4")}
    pairs = [latency["4095"], latency["4094"]] + [
        call4[k] for k in ("first_column", "permuted_gather", "gather_half_per_64")
    ]
    for row in pairs:
        assert row["reads agree"] == "yes", row
        assert float(row["reads ncu"].split(" KB")[0].replace(",", "")) > 134_000


def test_on_the_h200_reads_one_line_a_lane_are_slower_than_their_bytes_and_what_is_left():
    """SCATTERED_READ_COST (1.38) was fitted on the latency call's strided gathers; held out on call4, it
    brings the half gather within 25% of ncu's duration, the first column and the permuted gather to 1.3
    from 1.75 and 1.68 (the model's remaining miss, in docs/validation.md)."""
    call4 = {row["kernel"]: float(row["ncu / irscope"]) for row in _rows("call4")}
    assert 0.8 <= call4["gather_half_per_64"] <= 1.25
    assert 1.25 < call4["first_column"] < 1.4 and 1.25 < call4["permuted_gather"] < 1.4
