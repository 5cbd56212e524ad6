"""Recording one program in Triton's interpreter: steps, locals, and memory accesses, on real kernels."""

import numpy as np
import pytest
import torch
from conftest import fixture_path, kernel_path

from irscope.base.errors import IrscopeError
from irscope.engine.recording import record_program
from irscope.engine.session import open_file


def launch_of(name, path=None):
    ws = open_file(path or kernel_path(name), target="sm_90")
    return ws.launches_of(ws.kernel(None))[0]


@pytest.fixture(scope="module")
def add_launch():
    return launch_of("add.py")


def test_add_accesses_are_element_offsets_of_the_program_block(add_launch):
    rec = record_program(add_launch, 1, with_locals=False)
    assert rec.error is None and rec.steps == []
    kinds = [(a.kind, a.param, a.line) for a in rec.accesses]
    assert kinds == [("load", "x_ptr", 26), ("load", "y_ptr", 27), ("store", "out_ptr", 28)]
    for access in rec.accesses:
        assert access.offsets.dtype == np.int64 and access.shape == (1024,)
        assert np.array_equal(access.offsets, np.arange(1024, 2048))
        assert np.array_equal(access.byte_offsets, access.offsets * 4)
        assert access.elem_bytes == 4 and access.mask is None


def test_add_steps_have_locals_and_the_store_matches_the_real_launch(add_launch):
    rec = record_program(add_launch, (1,))
    assert [s.line for s in rec.steps if s.event == "line"] == [22, 24, 25, 26, 27, 28]
    at_load = next(s for s in rec.steps if s.line == 26)
    assert np.array_equal(at_load.locals["offsets"].data, np.arange(1024, 2048))
    assert at_load.locals["mask"].dtype == "int1" and at_load.locals["mask"].data.all()
    assert at_load.locals["x_ptr"].kind == "pointer" and at_load.locals["x_ptr"].param == "x_ptr"
    assert [rec.accesses[i].kind for i in at_load.accesses] == ["load"]
    # the program's copy of `out` holds exactly what the real launch wrote for this block
    x, y, out = (t.cpu() for t in add_launch.args[:3])  # on a GPU machine: the real launch's result
    block = slice(1024, 2048)
    assert torch.equal(rec.tensors["out_ptr"][block], out[block])
    assert torch.equal(rec.tensors["out_ptr"][block], x[block] + y[block])


def test_recording_runs_on_copies(add_launch):
    out = add_launch.args[2]
    before = out.clone()
    out[1024:2048] = -1.0
    try:
        rec = record_program(add_launch, 1, with_locals=False)
        # untouched by the recording
        assert torch.equal(out[1024:2048].cpu(), torch.full((1024,), -1.0))
        assert rec.tensors["out_ptr"].device.type == "cpu"
        assert not torch.equal(rec.tensors["out_ptr"][1024:2048], out[1024:2048].cpu())
    finally:
        out.copy_(before)


def test_program_outside_the_grid_is_one_clear_error(add_launch):
    with pytest.raises(IrscopeError, match=r"outside the launch's grid \(4,1,1\)"):
        record_program(add_launch, 4)


def test_softmax_masked_lanes_and_reduction():
    rec = record_program(launch_of("softmax.py"), 3)
    load, store = rec.accesses
    assert load.mask is not None and load.mask.sum() == 781 and load.shape == (1024,)
    assert load.offsets[0] == 3 * 781
    last = rec.steps[-1]
    assert last.event == "return"
    assert last.locals["den"].kind == "scalar"
    num = last.locals["num"].data
    assert np.isclose(num[:781].sum() / last.locals["den"].data[0], 1.0, atol=1e-5)


def test_matmul_loop_and_dot_match_torch():
    launch = launch_of("matmul.py")
    rec = record_program(launch, (1, 1))
    assert rec.error is None
    a_loads = [a for a in rec.accesses if a.param == "a_ptr"]
    assert len(a_loads) == 4 and a_loads[0].shape == (64, 32)  # K=128 in BLOCK_K=32 steps
    assert a_loads[1].offsets[0, 0] - a_loads[0].offsets[0, 0] == 32
    iterations = [s.locals["k"].data[0] for s in rec.steps if s.line == 53 and "k" in s.locals]
    assert list(iterations) == [0, 1, 2, 3]
    a, b, c = (t.cpu() for t in launch.args[:3])
    tile = (slice(64, 128), slice(64, 128))
    # the file's own launch ran in the interpreter too: bit-exact
    if launch.args[2].device.type == "cpu":
        assert torch.equal(rec.tensors["c_ptr"][tile], c[tile])
    else:  # a real GPU launch: tensor cores sum in another order
        torch.testing.assert_close(rec.tensors["c_ptr"][tile], c[tile], atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(
        rec.tensors["c_ptr"][tile].float(), (a.float() @ b.float())[tile], atol=2e-2, rtol=1e-2
    )


def test_helper_frames_are_stepped_into_with_a_call_stack():
    rec = record_program(launch_of("helper.py"), 2)
    inside = [s for s in rec.steps if s.function == "scaled_relu"]
    assert len(inside) == 8  # 4 loop iterations: one line and one return each
    assert [f.function for f in inside[0].stack] == ["relu_sum_max_kernel", "scaled_relu"]
    assert inside[0].stack[0].line == 34
    returned = [s for s in inside if s.event == "return"][0]
    assert returned.locals["(return)"].shape == (256,)


def test_out_of_bounds_read_becomes_the_last_step():
    rec = record_program(launch_of("", fixture_path("out_of_bounds.py")), 1)
    assert rec.error is not None and "x_ptr[256]" in rec.error and "lane 127" in rec.error
    last = rec.steps[-1]
    assert last.event == "exception" and last.line == 12 and last.message == rec.error
    assert "offsets" in last.locals
    assert rec.accesses[-1].kind == "load" and rec.accesses[-1].offsets.max() == 256
    # program 0 stays in bounds
    assert record_program(launch_of("", fixture_path("out_of_bounds.py")), 0).error is None


def test_stepper_moves_over_into_out_and_back():
    from irscope.analysis.recording.stepper import Stepper

    rec = record_program(launch_of("helper.py"), 0)
    st = Stepper(rec)
    assert st.step.line == 27 and st.step.index == 0
    st.breakpoints.add(34)
    assert st.cont().line == 34 and st.step.locals["i"].data[0] == 0
    assert st.step_into().function == "scaled_relu"
    assert st.finish().function == "relu_sum_max_kernel"  # back in the caller, past the helper
    assert st.step.line in (34, 35)
    st.restart()
    st.cont()
    over = st.step_over()
    assert over.function == "relu_sum_max_kernel" and over.line == 35  # the helper ran through
    assert st.cont().locals["i"].data[0] == 1  # the next iteration's hit
    assert st.back().line == 33
    assert st.toggle_breakpoint(34) is False and st.cont() is st.recording.steps[-1]
    assert st.at_end and st.step.event == "return"
    st.restart()
    assert st.finish() is rec.steps[-1]


def test_a_shape_error_in_the_kernel_is_the_last_step_with_its_values():
    rec = record_program(launch_of("", fixture_path("shape_error.py")), 1)
    assert rec.error.startswith("ValueError: Cannot make_shape_compatible")
    last = rec.steps[-1]
    assert last.event == "exception" and last.line == 12
    assert np.array_equal(last.locals["x"].data, np.arange(128, 256, dtype=np.float32))


def test_past_the_memory_budget_tensors_keep_only_their_summary():
    rec = record_program(launch_of("matmul.py"), (0, 0), budget_bytes=64 * 1024)
    acc = [s.locals["acc"] for s in rec.steps if "acc" in s.locals]
    assert acc[0].data is not None and acc[-1].data is None
    assert acc[-1].summary().startswith("fp32[64,64] min") and acc[-1].summary().endswith(
        "(elements not kept)"
    )
    assert acc[-1].stats()["max"] > 0


def test_reinterpreted_arguments_are_copied_too():
    launch = launch_of("", fixture_path("reinterpret.py"))
    x_wrapper, out = launch.args[0], launch.args[1]
    out.zero_()
    rec = record_program(launch, 0, with_locals=False)
    assert [(a.kind, a.param, a.dtype) for a in rec.accesses] == [
        ("load", "x_ptr", "int32"),
        ("store", "out_ptr", "int32"),
    ]
    assert torch.equal(rec.tensors["out_ptr"].cpu(), torch.ones(16, dtype=torch.int32))
    assert out.abs().sum() == 0  # the file's own tensor is untouched
    assert rec.tensors["x_ptr"].data_ptr() != x_wrapper.base.data_ptr()


def test_in_a_forked_copy_a_program_runs_on_the_launchs_memory_and_puts_it_back(monkeypatch):
    from irscope.engine import forked_map

    launch = launch_of(None, fixture_path("writes_twice.py"))
    count, out = launch.args[:2]
    before = count.clone(), out.clone()
    assert count.item() == 12  # the file's own run

    def seen(rec):  # the count each atomic returned, in order
        return [
            int(np.asarray(s.locals["seen"].data).reshape(-1)[0])
            for s in rec.steps
            if "seen" in s.locals
        ]

    on_copies = record_program(launch, 1)
    monkeypatch.setattr(forked_map, "_throwaway", True)  # as in a copy forked_map made
    in_place = [record_program(launch, 1), record_program(launch, 1)]
    assert on_copies.regions["count_ptr"].base != count.data_ptr()
    for rec in in_place:
        assert rec.error is None
        assert rec.regions["count_ptr"].base == count.data_ptr()  # no copy was made
        assert rec.tensors == {}
        assert seen(rec) == seen(on_copies)
    assert sorted(set(seen(on_copies))) == [12, 13, 14]
    # written three times each, put back to what the file's run left
    assert torch.equal(count, before[0]) and torch.equal(out, before[1])
