"""triton.language is patched for Triton's interpreter once per launch and module (triton_compat/lang_patch.py),
not at every call of a @triton.jit function inside the launch, and is exactly as before once the launch ends.
Real Triton throughout: its interpreter, its own @triton.jit functions (tl.cdiv, tl.max, tl.sum)."""

import os
import textwrap

import torch
import triton
import triton.language as tl
import triton.runtime.interpreter as interp

from irscope.engine.session import open_file
from irscope.engine.triton_compat import lang_patch


def _language_state() -> dict:
    """Every attribute of the objects Triton's and irscope's patches change, by identity."""
    import triton.language.extra.libdevice as stub

    owners = {
        "tl": tl,
        "tl.core": tl.core,
        "tl.math": tl.math,
        "tl.tensor": tl.tensor,
        "tl.standard": tl.standard,
        "libdevice stub": stub,
        "interpreter": interp,
        "builder": interp.InterpreterBuilder,
        "descriptor": tl.core.tensor_descriptor_base,
    }
    return {
        (label, name): value
        for label, owner in owners.items()
        for name, value in list(vars(owner).items())
    }


def _assert_as_before(before: dict) -> None:
    """Every attribute there before is there still, the same object. (Triton's rewrite of a function for the
    interpreter adds names to its module for good, which is not a patch: new names are not compared.)"""
    after = _language_state()
    assert [key for key in before if key not in after or after[key] is not before[key]] == []


@triton.jit
def _kernel_of_this_module(x):
    return x


def test_calls_in_a_launch_share_one_patch_per_module_and_all_of_it_is_undone():
    """tl.cdiv is a @triton.jit function of triton.language.standard: the first call inside a launch patches
    for its module (which sees tl.core, which this module's patch left alone), later calls patch nothing. A
    helper of the launched kernel's own module needs no patch of its own."""
    before = _language_state()
    builtin_add = tl.core.add
    scope = lang_patch.launch_patch(_kernel_of_this_module.fn)
    try:
        assert lang_patch._kept == []
        assert lang_patch.call_interpreted(_kernel_of_this_module, 5) == 5
        assert lang_patch._kept == []  # the launch's own patch covers its module
        results = [lang_patch.call_interpreted(tl.cdiv, n, 4) for n in range(1, 9)]
        assert results == [1, 1, 1, 1, 2, 2, 2, 2]
        # Rewriting a function adds the interpreter's names to its module (so the module may see one
        # more triton.language module after its first call): at most two patches, not one per call.
        assert 1 <= len(lang_patch._kept) <= 2
        # standard.py's patch is still in force, as Triton's would be
        assert tl.core.add is not builtin_add
    finally:
        scope.restore()
    assert lang_patch._kept is None
    _assert_as_before(before)


def test_a_call_outside_any_launch_is_patched_for_itself_alone():
    before = _language_state()
    assert lang_patch._kept is None
    assert lang_patch.call_interpreted(tl.cdiv, 9, 4) == 3
    assert lang_patch._kept is None
    _assert_as_before(before)


REDUCTIONS = """
import torch
import triton
import triton.language as tl


@triton.jit
def _row_stats(x):
    return tl.max(x, 0), tl.sum(x, 0)


@triton.jit
def stats(x_ptr, max_ptr, sum_ptr, n_rows, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for row in range(0, n_rows):  # a helper and two of triton.language's own jit functions, per row
        x = tl.load(x_ptr + row * BLOCK + cols)
        top, total = _row_stats(x)
        tl.store(max_ptr + row, top)
        tl.store(sum_ptr + row, total + tl.cdiv(BLOCK, 64) - 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6, 64)
    stats[(1,)](x, torch.empty(6), torch.empty(6), 6, BLOCK=64)
"""


def test_a_kernel_that_calls_jit_functions_in_a_loop_computes_what_torch_does(tmp_path):
    """Through the capture (GridExecutor under irscope's patch): results exact against torch, the language as
    it was afterwards, and the kernel still compiles (a patch left behind breaks every later compile)."""
    path = tmp_path / "stats.py"
    path.write_text(textwrap.dedent(REDUCTIONS))
    before = _language_state()
    ws = open_file(os.fspath(path), target="sm_90")
    _assert_as_before(before)
    x, top, total = ws.launches[0].args[:3]
    assert torch.equal(top, x.max(dim=1).values)
    torch.testing.assert_close(total, x.sum(dim=1), rtol=1e-6, atol=1e-6)
    (comp,) = ws.compile(ws.kernel("stats"))
    assert comp.ok, comp.failure
    assert "tt.reduce" in comp.stage("ttir")


@triton.jit
def _wrapping_product(x_ptr, out_ptr, FACTOR: tl.constexpr):
    offsets = tl.arange(0, 4)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) * FACTOR + 7)


def test_the_overflow_check_whose_result_is_dropped_is_off_for_a_launch_and_back_after():
    """Triton's interpreter redoes each 32-bit add and multiply in 64 bits for an overflow check that ends in a
    device_assert it drops unless `debug` is set: off while a launch runs, the options put back after, and the
    results wrap as a GPU's do."""
    options = interp.interpreter_builder.options
    assert options.sanitize_overflow and not options.debug
    scope = lang_patch.launch_patch(_wrapping_product.fn)
    try:
        assert interp.interpreter_builder.options.sanitize_overflow is False
    finally:
        scope.restore()
    assert interp.interpreter_builder.options is options

    from irscope.engine.triton_compat import run_one_program

    x = torch.tensor([1, 2**20, -(2**21), 2**31 - 1], dtype=torch.int32)
    out = torch.zeros(4, dtype=torch.int32)
    arguments = {"x_ptr": x, "out_ptr": out, "FACTOR": 4099}
    run_one_program(_wrapping_product, arguments, (1, 1, 1), (0, 0, 0))
    wrapped = ((x.to(torch.int64) * 4099 + 7 + 2**31) % 2**32 - 2**31).to(torch.int32)
    assert (
        out.tolist() == wrapped.tolist() and out.tolist() != (x.to(torch.int64) * 4099 + 7).tolist()
    )
    assert interp.interpreter_builder.options is options


def test_a_debug_interpreter_keeps_its_overflow_check():
    options = interp.interpreter_builder.options
    interp.interpreter_builder.options = type(options)(debug=True)
    try:
        scope = lang_patch.launch_patch(_wrapping_product.fn)
        assert interp.interpreter_builder.options.sanitize_overflow is True
        scope.restore()
    finally:
        interp.interpreter_builder.options = options
