"""Measured mode without a GPU: the one-line refusal, and everything that does not need a GPU checked on
the committed output of a real H100 run (tests/fixtures/ncu: Nsight Compute's source and raw pages of
kernels/strided.py and kernels/softmax.py; validation/data/h100_device.json: the device's properties and
do_bench times). The timing and ncu runs themselves are proven by validation/gpu_measure.py on the H100."""

import json
import os

import pytest
from conftest import ROOT, fixture_path, kernel_path, run_irscope

from irscope.analysis.coalescing.sectors import analyze_coalescing
from irscope.analysis.measured.format import format_measured
from irscope.analysis.measured.ncu_parse import parse_raw_page, parse_source_page
from irscope.analysis.measured.per_line import binary_mismatch, listed_offsets, per_source_line
from irscope.analysis.roofline import LAUNCH_READ_BYTES, roofline
from irscope.engine.measure import Measurement
from irscope.engine.measure.peaks import peaks_of
from irscope.engine.measure.work import launch_work
from irscope.engine.session import open_file
from irscope.engine.triton_compat import TRITON_VERSION
from irscope.findings.agreement import agreements, disagreement_findings
from irscope.ir.elf import kernel_image_bytes

DEVICE = json.load(open(os.path.join(ROOT, "validation", "data", "h100_device.json")))
# The binaries ncu profiled were built by Triton 3.6.0. 3.9.0 builds the same strided kernel, instruction for
# instruction, and another softmax (binary_mismatch says so; the tests below also prove it can fail). CI runs
# the suite on both.
SAME_BINARY = TRITON_VERSION.startswith(("3.6.", "3.9."))
SAME_SOFTMAX = TRITON_VERSION.startswith("3.6.")


def _page(name: str):
    return parse_source_page(open(fixture_path(f"ncu/{name}.source_sass.csv")).read())[0]


def _raw(name: str) -> dict:
    return parse_raw_page(open(fixture_path(f"ncu/{name}.raw.csv")).read())[0]


@pytest.fixture(scope="module")
def strided():
    ws = open_file(kernel_path("strided.py"), target="sm_90")
    return ws.compile_all()[0]


def test_without_a_gpu_measure_refuses_in_one_line_before_the_file_runs():
    done = run_irscope("report", kernel_path("strided.py"), "--measure")
    assert done.returncode == 2
    assert done.stdout == ""  # the file did not run (it prints "strided: OK" when it does)
    lines = done.stderr.strip().splitlines()
    assert (
        len(lines) == 1
        and "--measure: measuring needs a GPU" in lines[0]
        and "Traceback" not in done.stderr
    )


def test_the_source_page_is_read_instruction_by_instruction():
    page = _page("strided")
    assert page.kernel == "strided_gather_kernel" and len(page.rows) == 48
    loads = [r for r in page.rows if r.space == "Global" and r.operation == "Load"]
    assert len(loads) == 8 and all(r.get("Instructions Executed") == 16 for r in loads)
    assert page.rows[0].offset == 0 and page.rows[1].offset == 0x10
    raw = _raw("strided")
    assert (
        raw["Kernel Name"] == "strided_gather_kernel"
        and raw["launch__registers_per_thread"] == "18"
    )


@pytest.mark.skipif(
    not SAME_BINARY, reason=f"Triton {TRITON_VERSION} may build another binary than 3.6.0 did"
)
def test_ncu_counters_land_on_the_source_lines_irscope_maps(strided):
    lines, why = per_source_line(strided, _page("strided"))
    assert why is None
    by_line = {c.source_line: c for c in lines}
    gather, store = by_line[26], by_line[27]
    # the README's example: the stride-8 gather, 32 sectors per request, measured
    assert (gather.ld_sectors, gather.ld_requests, gather.ld_sectors_per_request) == (
        4096,
        128,
        32.0,
    )
    assert (store.st_sectors, store.st_requests, store.st_sectors_per_request) == (512, 32, 16.0)
    # the mapping neither loses nor doubles: the per-line sums are ncu's own kernel totals
    raw = _raw("strided")
    assert sum(c.ld_sectors for c in lines) == float(
        raw["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    )
    assert sum(c.ld_requests for c in lines) == float(
        raw["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    )
    assert sum(c.instructions for c in lines) == sum(
        r.get("Instructions Executed") for r in _page("strided").rows
    )


def test_another_binary_is_refused_not_mapped(strided):
    page = _page("strided")
    listed = listed_offsets(strided.stage("sass"))
    shorter = type(page)(page.kernel, page.rows[:-1])
    assert "not the same binary" in binary_mismatch(shorter, listed)
    changed = type(page)(page.kernel, list(page.rows))
    row = changed.rows[10]
    changed.rows[10] = type(row)(row.offset, "IADD3 R99, R99, 0x1, RZ", row.values)
    why = binary_mismatch(changed, listed)
    assert "IADD3 R99" in why and "not the same binary" in why
    lines, why = per_source_line(strided, changed)
    assert lines == [] and why


@pytest.mark.skipif(
    not SAME_SOFTMAX, reason=f"Triton {TRITON_VERSION} builds another softmax binary than 3.6.0 did"
)
def test_shared_memory_wavefronts_are_summed_per_line():
    comp = open_file(kernel_path("softmax.py"), target="sm_90").compile_all()[0]
    lines, why = per_source_line(comp, _page("softmax"))
    assert why is None
    raw = _raw("softmax")
    shared = float(raw["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]) + float(
        raw["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"]
    )
    assert sum(c.shared_wavefronts for c in lines) == shared > 0
    # softmax's masked tail: ncu counts executions whose lanes are all masked off (no request), so the sectors
    # are compared and the ratio is shown beside them, not compared
    found = {
        (a.what, a.source_line): a for a in agreements(comp, analyze_coalescing(comp), lines, raw)
    }
    assert found[("ld sectors", 26)].agrees and found[("ld sectors", 26)].measured == 956
    ratio = found[("ld sectors/request", 26)]
    assert ratio.agrees is None and "24 executions with every lane masked off" in ratio.note


@pytest.mark.skipif(
    not SAME_BINARY, reason=f"Triton {TRITON_VERSION} may build another binary than 3.6.0 did"
)
def test_predictions_and_measurements_agree_and_a_disagreement_is_a_finding(strided):
    lines, _ = per_source_line(strided, _page("strided"))
    found = agreements(strided, analyze_coalescing(strided), lines, _raw("strided"))
    by = {(a.what, a.source_line): a for a in found}
    assert (
        by[("ld sectors/request", 26)].predicted == 32.0 and by[("ld sectors/request", 26)].agrees
    )
    assert by[("ld sectors", 26)].predicted == by[("ld sectors", 26)].measured == 4096
    assert by[("registers", None)].measured == 18 and by[("registers", None)].agrees
    assert by[("occupancy %", None)].agrees
    assert all(a.agrees for a in found) and not disagreement_findings(strided, found)
    # break the measurement: line 26 measured at half the sectors
    lines[[c.source_line for c in lines].index(26)].ld_sectors /= 2
    found = agreements(strided, analyze_coalescing(strided), lines, _raw("strided"))
    bad = disagreement_findings(strided, found)
    assert len(bad) == 1 and bad[0].rule == "measured-disagrees" and bad[0].source_line == 26
    assert (
        "irscope predicted ld sectors 4096, Nsight Compute measured 2048 (100% apart)"
        in bad[0].message
    )


def test_bytes_to_move_are_the_sectors_the_programs_touch_with_the_code(strided):
    """The offline roofline's bytes (checked against ncu's DRAM bytes): every sector of x (the gather reads one
    float of each 32 bytes, so all of them), out once, and the cubin's code and constants."""
    work = launch_work(strided, analyze_coalescing(strided))
    n = 4096  # strided.py's __main__: x has 8 * n floats, out n
    image = kernel_image_bytes(strided.asm["cubin"], strided.kernel.name)
    assert image > 0
    assert (work.bytes_read, work.bytes_written) == (8 * n * 4 + image + LAUNCH_READ_BYTES, n * 4)
    assert work.tensors == {"x_ptr": "read", "out_ptr": "written"} and work.flops == 0


def test_dot_work_counts_each_tile_the_programs_run():
    comp = open_file(kernel_path("attention.py"), target="sm_90").compile_all()[0]
    work = launch_work(comp, analyze_coalescing(comp))
    # attention.py: causal, 2 heads of 256 queries, BLOCK_M 128, BLOCK_N 64, HEAD_DIM 128. Query block 0 sees
    # 2 key tiles, block 1 sees 4: 6 per head, 12 in all, each q@k (128x128 by 128x64) and p@v (128x64 by 64x128)
    per_tile = 2 * 128 * 64 * 128 + 2 * 128 * 128 * 64
    dots = roofline(comp).flops
    assert dots[("fp16", True)] == 12 * per_tile  # the softmax's elementwise FLOPs come beside them
    assert work.flops == sum(dots.values()) and work.flop_kind == "fp16" and work.flop_programs == 4


def test_the_dram_peak_is_read_from_the_device():
    peaks = peaks_of(DEVICE["driver_props"] | {"name": "NVIDIA H100 80GB HBM3"})
    assert round(peaks.dram_gbps, 1) == 3352.3  # NVIDIA's datasheet: 3.35 TB/s
    assert peaks.math_tflops["fp16"] == 989.4 and "datasheet" in peaks.math_source
    # the measured copy bandwidth stays under it: the peak is an upper bound, not a tuned number
    assert DEVICE["copy_gbps"] < peaks.dram_gbps


@pytest.mark.skipif(
    not SAME_BINARY, reason=f"Triton {TRITON_VERSION} may build another binary than 3.6.0 did"
)
def test_the_report_block_says_time_bandwidth_and_line_26(strided):
    lines, _ = per_source_line(strided, _page("strided"))
    m = Measurement(strided.kernel.name)
    m.time_ms = tuple(DEVICE["strided_n4096_ms_q50_q20_q80"])
    m.peaks = peaks_of(DEVICE["driver_props"] | {"name": "NVIDIA H100 80GB HBM3"})
    m.work = launch_work(strided, analyze_coalescing(strided))
    m.lines, m.raw = lines, _raw("strided")
    m.agreements = agreements(strided, analyze_coalescing(strided), lines, m.raw)
    text = "\n".join(format_measured(m.to_json()))
    assert "measured   4.9 µs" in text
    gbps = m.work.bytes_moved / (DEVICE["strided_n4096_ms_q50_q20_q80"][0] * 1e-3) / 1e9
    assert f"{gbps:.1f} GB/s = {gbps / 3352.32:.1%} of its 3352 GB/s DRAM peak" in text
    assert "line 26: ld sectors/request: measured 32, predicted 32  agrees" in text
    assert "roofline   memory-bound" in text


def test_ncus_child_finds_every_torch_compile_kernel_again_in_a_fresh_inductor_cache(tmp_path):
    """The process ncu profiles re-opens the file and launches the chosen compilation once. Inductor names its
    kernels' modules per run and a kernel it loads from its caches has no Python function, so the child gets a
    fresh cache: here, on the virtual GPU, it must find each of compiled_block.py's compilations and their
    arguments (the launch under ncu itself is run by validation/h100_measure.sh on the H100)."""
    import subprocess

    from irscope.engine.measure import child_key
    from irscope.engine.measure.ncu_run import child_command, child_env

    path = str(tmp_path / "compiled_block.py")
    with open(kernel_path("compiled_block.py")) as src, open(path, "w") as dst:
        dst.write(src.read())
    ws = open_file(path, target="sm_90")
    keys = [child_key(ws, comp) for comp in ws.compile_all()]
    assert len(keys) >= 2 and None not in keys
    # the first two and the last, each once (compiled_block.py has two: the last is the second)
    for name, config, index in dict.fromkeys(keys[:2] + keys[-1:]):
        done = subprocess.run(
            child_command(path, name, config, index),
            env=child_env(str(tmp_path)),
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr[-1500:]
        assert (
            f"found {name.rsplit(':', 1)[-1]} and its arguments; no GPU to launch it on"
            in done.stderr
        )


def test_ncus_child_stops_the_file_once_the_wanted_specialization_is_launched():
    """The specialization named by the parent's compilation (spec_id) is recognised in the child's capture
    hook from the raw launch, so a file with a benchmark sweep stops there; another launch never stops it."""
    from irscope.base.target import Target
    from irscope.engine.capture.budget import CaptureBudget
    from irscope.engine.measure.ncu_child import spec_id, stop_at

    path = kernel_path("misaligned.py")  # two launches, two specializations
    first, second = open_file(path, target="sm_90", compile_ahead=False).compile_all()
    assert spec_id(first.spec, first.kernel.jit) != spec_id(second.spec, second.kernel.jit)
    for wanted, stopped in ((spec_id(second.spec, second.kernel.jit), True), ("0" * 20, False)):
        budget = CaptureBudget(path, quiet_s=30, limit_s=60)
        ws = open_file(
            path,
            target="sm_90",
            compile_ahead=False,
            budget=budget,
            on_launch=stop_at(f"__main__:{first.kernel.name}", wanted, budget, Target("sm_90")),
        )
        assert budget._stop_asked is stopped
        last = ws.compile_all()[-1]
        assert spec_id(last.spec, last.kernel.jit) == spec_id(second.spec, second.kernel.jit)


_LATE_MODULE = """import triton
import triton.language as tl


@triton.jit
def last_kernel(x_ptr):
    tl.store(x_ptr + tl.arange(0, 32), 2 * tl.arange(0, 32).to(tl.float32))
"""

# As FlagGems does with the kernels it generates: a module loaded from a file at run time, not in sys.modules,
# so that only its launch makes its kernel known
_LATE_LAUNCH = """import importlib.util
import os
import time
import torch
import triton
import triton.language as tl


@triton.jit
def first_kernel(x_ptr):
    tl.store(x_ptr + tl.arange(0, 32), tl.arange(0, 32).to(tl.float32))


x = torch.empty(32, device="cuda")
first_kernel[(1,)](x)
time.sleep(4)  # longer than the capture budget's quiet time (3 s) without a new launch
spec = importlib.util.spec_from_file_location("_generated_at_run_time",
                                              os.path.join(os.path.dirname(__file__), "late_module.py"))
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.last_kernel[(1,)](x)
"""


def test_ncus_child_is_not_cut_short_where_the_parents_run_was_not(tmp_path):
    """Under ncu the file runs slower than it did for the parent, and a capture budget spent on the wall clock
    stopped the H100's child before FlagGems' add, the last launch of flag_gems_use_gems.py (call 4). Here a
    pause longer than the default quiet time stands for that slowness: the child still reaches the last
    launch; and where a kernel is missing, the child's one line says how its run went."""
    import subprocess

    from irscope.engine.measure.ncu_run import child_command, child_env

    path = tmp_path / "late_launch.py"
    path.write_text(_LATE_LAUNCH)
    (tmp_path / "late_module.py").write_text(_LATE_MODULE)
    env = child_env(str(tmp_path))
    KERNEL = "_generated_at_run_time:last_kernel"  # noqa: N806 - as the parent names it
    done = subprocess.run(
        child_command(str(path), KERNEL, None, 0),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-1500:]
    assert "found last_kernel and its arguments; no GPU to launch it on" in done.stderr
    # the user's own budget still decides, and the error says it stopped the run
    done = subprocess.run(
        child_command(str(path), KERNEL, None, 0),
        env=dict(env, IRSCOPE_CAPTURE_QUIET="1"),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert last.startswith(f"irscope_measure: no kernel named '{KERNEL}'")
    assert "this run of the file:" in last and "nothing launched in the last 3 s" in last
