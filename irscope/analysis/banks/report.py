"""The bank-conflict analysis of a compilation (`bank_report`), and its launch as the PTX sees it.

`launch_inputs`: the grid, the threads of a block, and the value of each `.param`.
Scalars are the launch's own values. Pointers get synthetic addresses: argument i's tensor starts at
(i + 1) << 40 plus its offset in its storage, which keeps what decides global line boundaries (the
address modulo 128: allocations are at least 256-byte aligned on a GPU) and nothing else; shared-memory
addresses never depend on them. Parameters past the kernel's own (Triton's scratch pointers) are pointers
too. Floats and descriptors are left unknown.
"""

from __future__ import annotations

from typing import Any

from irscope.analysis.banks.conflicts import POINTER_STRIDE, BankReport, LaunchInputs, predict
from irscope.analysis.ptx.program import parse_program
from irscope.base.compiled import LaunchedKernel

# What the findings engine simulates of a launch: a few programs spread over the grid, and a bound on the
# instructions stepped (a long K loop is cut short; the counts per execution are what the rule reports).
# No bound in seconds: one cut the run short on a busy machine, so the same file got other counts, and a
# finding of another severity, than on an idle one (the example's bank conflict: info, then warning).
SAMPLED_PROGRAMS = 8
STEP_LIMIT = 400_000


def bank_report(comp: LaunchedKernel) -> BankReport | None:
    """Every shared-memory access of an NVIDIA compilation with its predicted wavefronts (cached on it);
    None for AMD targets, failed compiles and compilations without a launch grid."""
    return comp.analyses.get(
        "bank_report",
        lambda: _predicted(comp, max_programs=SAMPLED_PROGRAMS, step_limit=STEP_LIMIT),
    )


def whole_launch_report(
    comp: LaunchedKernel, max_programs: int, time_limit: float
) -> BankReport | None:
    """The prediction over every program of the launch (measured mode compares it with Nsight Compute's
    totals); a report that stopped short or sampled says so in `complete`. Not cached: it is asked once."""
    return _predicted(comp, max_programs=max_programs, time_limit=time_limit)


def _predicted(comp: LaunchedKernel, **limits) -> BankReport | None:
    if not (comp.ok and comp.target.is_nvidia):
        return None
    program = parse_program(comp.stage("ptx"))
    inputs = launch_inputs(comp, program.params, program.threads)
    if inputs is None:
        return None
    report = predict(program, inputs, **limits)
    for result in report.accesses:
        result.source_line = comp.source_map.source_line("ptx", result.access.line)
    return report


def launch_inputs(
    comp: LaunchedKernel, ptx_params: list[str], threads: int | None, launch=None
) -> LaunchInputs | None:
    """None when the compilation has no launch grid (nothing ran it). `launch`: another launch of the same
    compilation (compile_launch gives every launch of one specialization the first one's Compilation, whose
    `launch` is that first launch: its arguments are not the others')."""
    launch = launch or comp.launch
    grid = launch.grid
    if not grid:
        return None
    grid3 = tuple(int(g) for g in (list(grid) + [1, 1, 1])[:3])
    # one value per PTX parameter, in order; the parameters after the user's are Triton's scratch pointers
    values = comp.runtime_values(launch)
    params: dict[str, int | None] = {}
    for i, ptx_name in enumerate(ptx_params):
        if i < len(values):
            params[ptx_name] = scalar(values[i], i)
        else:
            params[ptx_name] = (i + 1) * POINTER_STRIDE
    return LaunchInputs(grid3, threads or comp.num_warps * 32, params)


def scalar(value: Any, index: int) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if hasattr(value, "data_ptr"):
        offset = 0
        try:
            offset = int(value.storage_offset()) * int(value.element_size())
        except Exception:  # noqa: BLE001 - not a torch tensor: its own start
            offset = 0
        return (index + 1) * POINTER_STRIDE + offset
    return None
