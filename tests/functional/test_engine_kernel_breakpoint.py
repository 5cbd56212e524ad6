"""breakpoint() and pdb.set_trace() in a kernel (issue 29): the compile leaves them out, exactly as if the
kernel had been written without them, says so in one line, and the stepper stops where they are."""

import asyncio
import json
import shutil

from conftest import fixture_path, run_irscope
from stepper_harness import StepperHarness, wait_recorded
from tui_helpers import open_view

from irscope.engine.recording import record_program
from irscope.engine.session import open_file

FIXTURE = fixture_path("kernel_breakpoint_loop.py")
BREAKPOINT_LINE = 21  # breakpoint(), in the kernel's loop
HELPER_LINE = 10  # import pdb; pdb.set_trace(), in the helper `scaled`
NOTE = "left out of the compile (Triton compiles no debugger call); the stepper (ctrl+t, irscope step) stops there"


def _source_line(line: int) -> str:
    return open(FIXTURE).read().splitlines()[line - 1].strip()


def test_fixture_lines():
    assert _source_line(BREAKPOINT_LINE) == "breakpoint()"
    assert _source_line(HELPER_LINE) == "import pdb; pdb.set_trace()"


def test_report_compiles_the_kernel_and_says_so_in_one_line_per_call():
    done = run_irscope("report", FIXTURE, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["notes"] == [
        f"line {HELPER_LINE}: pdb.set_trace() {NOTE}",
        f"line {BREAKPOINT_LINE}: breakpoint() {NOTE}",
    ]
    (kernel,) = doc["kernels"]
    assert kernel["name"] == "row_sum_kernel" and not kernel.get("error")
    assert "Traceback" not in done.stderr and "(Pdb)" not in done.stdout + done.stderr


def test_every_stage_is_the_kernel_written_without_the_calls(tmp_path):
    """Compiled from one path, the kernel with its debugger calls and the same file with `pass` in their
    place give the same text in every stage (debug locations included) and the same cubin."""
    path = tmp_path / "row_sum.py"
    shutil.copyfile(FIXTURE, path)
    with_calls = open_file(str(path), target="sm_90")
    (debugged,) = with_calls.compile(with_calls.kernel("row_sum_kernel"))
    assert debugged.ok, debugged.failure
    lines = open(FIXTURE).read().splitlines(keepends=True)
    for n in (HELPER_LINE, BREAKPOINT_LINE):
        indent = lines[n - 1][: len(lines[n - 1]) - len(lines[n - 1].lstrip())]
        lines[n - 1] = f"{indent}pass\n"
    path.write_text("".join(lines))
    plain_ws = open_file(str(path), target="sm_90")
    (plain,) = plain_ws.compile(plain_ws.kernel("row_sum_kernel"))
    assert plain.ok, plain.failure
    assert set(debugged.asm) == set(plain.asm) >= {"ttir", "ttgir", "llir", "ptx", "cubin"}
    for stage in set(debugged.asm) - {"cubin"}:
        assert debugged.asm[stage] == plain.asm[stage], stage
    # the cubins by their instructions: under Triton 3.6 the two cubins differ in one byte while their PTX is the
    # same (not traced; the H100 fidelity runs met such a byte in FlagGems' cubin), so they are compared as SASS
    assert debugged.stage("sass") == plain.stage("sass") and "LDG" in debugged.stage("sass")
    # the line after keeps its location
    assert f'row_sum.py":{BREAKPOINT_LINE + 1}:' in debugged.asm["ttir"]
    changed = [
        n
        for n, (a, b) in enumerate(
            zip(debugged.stage("source").splitlines(), plain.stage("source").splitlines()), start=1
        )
        if a != b
    ]
    assert changed == [HELPER_LINE, BREAKPOINT_LINE]  # the source's own lines, and nothing else


def test_recording_notes_each_debugger_call_and_starts_no_debugger():
    ws = open_file(FIXTURE, target="sm_90")
    (launch,) = ws.launches
    rec = record_program(launch, 1)
    assert rec.error is None
    # 300 columns in blocks of 128: three iterations, each stopping at the kernel's line, then the helper's
    assert [rec.steps[i].line for i in rec.debugger_steps] == [BREAKPOINT_LINE, HELPER_LINE] * 3
    assert rec.debugger_lines == [BREAKPOINT_LINE, HELPER_LINE]


def test_step_stops_at_the_breakpoint_without_break(cli):
    code, out, err = cli("step", FIXTURE, "--program", "1", "--print", "start")
    assert code == 0, err
    lines = out.splitlines()
    assert f"kernel_breakpoint_loop.py:{BREAKPOINT_LINE} in row_sum_kernel" in lines[0], out
    assert "breakpoint()" in lines[1]
    assert "start = 0" in out  # the loop's first iteration
    assert (
        f"irscope: note: stopped at line {BREAKPOINT_LINE}, where the program calls the debugger (as --break "
        f"{BREAKPOINT_LINE} stops); give --break LINE to stop elsewhere"
    ) in err


def test_tui_stepper_opens_at_the_breakpoint_and_continues_to_the_next():
    session, comp = open_view(FIXTURE)
    try:

        async def scenario():
            app = StepperHarness(session, comp, (2,))
            async with app.run_test(size=(150, 48)) as pilot:
                screen = await wait_recorded(pilot)
                assert screen.stepper is not None, screen.failure
                assert screen.stepper.step.line == BREAKPOINT_LINE
                assert screen.breakpoints == {BREAKPOINT_LINE, HELPER_LINE}
                status = str(screen.query_one("#stepper-status").render())
                assert "the program calls the debugger here (left out of the compile)" in status
                source = screen.query_one("#stepper-source")
                assert str(source.row_text(BREAKPOINT_LINE - 1)).startswith("●▶")
                await pilot.press("c")
                # into the helper, as pdb would stop there
                assert screen.stepper.step.line == HELPER_LINE
                await pilot.press("c")
                assert screen.stepper.step.line == BREAKPOINT_LINE  # the loop's second iteration
                assert screen.stepper.step.index == screen.stepper.recording.debugger_steps[2]

        asyncio.run(scenario())
    finally:
        session.close()


def test_the_pass_dumps_compile_leaves_the_calls_out_too(cli):
    """`irscope passes` compiles once more in a child of its own, with the dumps on: the same parse."""
    code, out, err = cli("passes", FIXTURE)
    assert code == 0, err
    assert out.startswith("row_sum_kernel on sm_90: ") and " passes ran " in out.splitlines()[0]
