"""On a GPU the captured launches' tensors are let go of, largest first, when the file is short of memory
(engine/capture/held_memory.py): Gluon tutorial 02 ran an H200 out of memory under irscope, holding sixteen
8 GB tensors the file had dropped. Device tensors here are on PyTorch's `meta` device (real tensors without
data: this machine has no GPU); what a GPU adds, its free memory, is the policy's input `left_to_file`."""

import gc
import weakref

import torch
import triton
import triton.language as tl

from irscope.base.target import Target
from irscope.engine.capture.held_memory import HeldMemory, stand_in
from irscope.engine.triton_compat import RawLaunch, specialize


@triton.jit
def copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offsets, tl.load(src + offsets, mask=offsets < n), mask=offsets < n)


def _launch(src, dst) -> RawLaunch:
    return RawLaunch(copy, (src, dst, src.numel()), {"BLOCK": 128}, (1,), None, None)


def test_a_stand_in_specializes_as_its_tensor_and_reads_zeros():
    """Shape, strides, storage offset and the pointer's alignment modulo 16 are what the JIT sees."""
    base = torch.randn(64, 65)
    for original in (base, base[:, 1:], base.T, base[3:, 5:7]):
        copy_of = stand_in(original)
        assert (copy_of.shape, copy_of.stride(), copy_of.storage_offset(), copy_of.dtype) == (
            original.shape,
            original.stride(),
            original.storage_offset(),
            original.dtype,
        )
        assert copy_of.data_ptr() % 16 == original.data_ptr() % 16
        assert not copy_of.any()
        target = Target("sm_90")
        args = lambda t: (t, torch.empty(8), t.numel())  # noqa: E731
        assert specialize(copy, args(copy_of), {"BLOCK": 128}, target) == specialize(
            copy, args(original), {"BLOCK": 128}, target
        )


def test_dropped_tensors_are_let_go_largest_first_until_enough_is_left():
    short, freed_enough = [False], 3 << 20
    held = HeldMemory(lambda: not short[0] or held.released.bytes >= freed_enough)
    small = _launch(
        torch.empty(1 << 18, device="meta"), torch.empty(1 << 18, device="meta")
    )  # 1 MiB each
    big = _launch(
        torch.empty(1 << 20, device="meta"), torch.empty(1 << 20, device="meta")
    )  # 4 MiB each
    for launch in (small, big):
        held.captured(launch)
    kept_by_file = big.args[1]
    watch_src = [small.args[0], big.args[0]]
    watch_src = [weakref.ref(t) for t in watch_src]
    newest = _launch(torch.empty(1 << 20, device="meta"), torch.empty(1 << 20, device="meta"))
    short[0] = True
    held.captured(newest)
    gc.collect()
    # the biggest the file dropped went: big's source (4 MiB) was enough; the one the file holds stayed as it is
    assert watch_src[1]() is None
    assert big.args[0].device.type == "cpu" and big.args[0].shape == (1 << 20,)
    assert big.args[1] is kept_by_file
    assert big.inputs_released and not small.inputs_released
    assert small.args[0].device.type == "meta" and watch_src[0]() is not None
    # the newest launch is about to run with its tensors
    assert all(t.device.type == "meta" for t in newest.args[:2])
    assert held.released.bytes == 4 << 20
    note = held.released.note()
    assert "1 captured launch " in note and "copy" in note and "zeros" in note


def test_nothing_is_let_go_while_enough_is_left():
    held = HeldMemory(lambda: True)
    launches = [
        _launch(torch.empty(1 << 20, device="meta"), torch.empty(1 << 20, device="meta"))
        for _ in range(3)
    ]
    for launch in launches:
        held.captured(launch)
    assert all(t.device.type == "meta" for launch in launches for t in launch.args[:2])
    assert held.released.note() is None


def test_every_dropped_tensor_goes_while_the_file_is_short():
    """Each of them, the last one looked at included (nothing in irscope keeps one alive)."""
    held = HeldMemory(lambda: False)
    launches = [
        _launch(torch.empty(1 << 10, device="meta"), torch.empty(1 << 10, device="meta"))
        for _ in range(3)
    ]
    watched = [weakref.ref(t) for launch in launches[:2] for t in launch.args[:2]]
    for launch in launches:
        held.captured(launch)
    assert [w() for w in watched] == [None] * 4
    assert held.released.launches == {"copy": 2} and held.released.bytes == 4 * 4 << 10


def test_a_tensor_the_file_still_holds_is_never_let_go():
    """However short of memory: letting go of it frees nothing, and its values would be lost."""
    held = HeldMemory(lambda: False)
    kept = [torch.empty(1 << 20, device="meta") for _ in range(2)]
    first = _launch(*kept)
    held.captured(first)
    held.captured(_launch(torch.empty(8, device="meta"), torch.empty(8, device="meta")))
    assert first.args[0] is kept[0] and first.args[1] is kept[1]
    assert not first.inputs_released and held.released.note() is None


def test_a_launch_whose_inputs_were_let_go_says_so_in_the_report():
    """The run's note names the kernels; each compilation of such a launch says it too (the JSON's
    `inputs_released`, the report's line, the TUI's header), since stepping it reads zeros. The flag goes
    from the capture's launch to the workspace's, then to the report."""
    from conftest import kernel_path

    from irscope.base.model import Kernel
    from irscope.engine.overrides import Overrides
    from irscope.engine.report import compilation_entry, format_report
    from irscope.engine.session import _launch as workspace_launch
    from irscope.engine.session import open_file

    raw = _launch(torch.empty(8, device="meta"), torch.empty(8, device="meta"))
    kernel = Kernel("copy", __file__, 17, copy)
    assert not workspace_launch(raw, {id(copy): kernel}, Overrides()).inputs_released
    raw.inputs_released = True
    assert workspace_launch(raw, {id(copy): kernel}, Overrides()).inputs_released

    ws = open_file(kernel_path("add.py"), target="sm_90", compile_ahead=False)
    (comp,) = ws.compile(ws.kernels[0])
    quiet = compilation_entry(ws, comp)
    comp.launch.inputs_released = True  # as the capture on a GPU leaves a launch it let go of
    said = compilation_entry(ws, comp)
    assert (quiet["inputs_released"], said["inputs_released"]) == (False, True)
    text = format_report({"kernels": [said]})
    assert "inputs let go: the file had dropped this launch's GPU tensors" in text
    assert "inputs let go" not in format_report({"kernels": [quiet]})
