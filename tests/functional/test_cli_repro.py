"""`irscope repro`: one launch as a standalone script that compiles to the same code, checked by opening the
script and comparing every stage byte for byte, in an empty Triton cache (commands/repro.py)."""

from __future__ import annotations

import linecache

import pytest
import triton
from conftest import kernel_path

from irscope.base.errors import IrscopeError

STAGES = ["ttir", "ttgir", "llir", "ptx", "sass"]


def _stages(out: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)


def test_a_kernel_and_its_helper_round_trip_byte_identical(cli, tmp_path):
    target = tmp_path / "repro.py"
    code, out, err = cli("repro", kernel_path("helper.py"), "-o", target, "--check")
    assert code == 0, err
    said = _stages(out)
    assert list(said) == STAGES
    assert all(result.startswith("byte-identical") for result in said.values()), out
    text = target.read_text()
    # the helper is defined again before the kernel, each from its own source text
    assert text.index("[('__main__', 'scaled_relu')])") < text.index("kernel = _define(")
    assert "import linecache" in text and 'if __name__ == "__main__":' in text
    assert "    _inductors_ptxas()\n" not in text  # not Inductor's launch: Triton's own ptxas


def test_a_launch_on_an_offset_view_keeps_its_alignment(cli, tmp_path):
    """misaligned.py's second launch passes x[1:]: its pointer is not 16-byte aligned, which the JIT
    specializes on; the reproducer's tensor has the same storage offset, so the same specialization."""
    target = tmp_path / "repro.py"
    code, out, err = cli(
        "repro", kernel_path("misaligned.py"), "--launch", "1", "-o", target, "--check"
    )
    assert code == 0, err
    assert all(r.startswith("byte-identical") for r in _stages(out).values()), out
    assert "_tensor([4095], [1], 1, 4096, torch.float32)" in target.read_text()


def test_the_check_fails_when_the_script_names_another_file(cli, tmp_path):
    """The same source text under another file name: Triton's cache key is the same (it leaves the name out),
    but every location differs; the check compiles afresh and says so."""
    from irscope.commands.repro import render, round_trip
    from irscope.engine.session import open_file

    ws = open_file(kernel_path("add.py"), compile_ahead=False)
    (comp,) = ws.compile_all()
    text = render(comp, "add_kernel", "add.py").replace(kernel_path("add.py"), "/elsewhere/add.py")
    target = tmp_path / "moved.py"
    target.write_text(text)
    before = linecache.getlines(kernel_path("add.py"))
    knob = vars(triton.knobs.cache).get("dir", "unset")
    said = dict(line.split(": ", 1) for line in round_trip(comp, str(target)))
    # Triton's cache folder as it was: set by hand it would hide TRITON_CACHE_DIR from every later compile
    assert vars(triton.knobs.cache).get("dir", "unset") == knob
    assert said["ttir"].startswith("DIFFERS"), said
    assert said["ptx"].startswith("DIFFERS"), said
    # the first line that differs, from both sides: here the file each location names
    assert (
        "add.py" in said["ttir"] and "/elsewhere/add.py" in said["ttir"].split("reproducer", 1)[1]
    ), said
    # the script's pieces of source are gone again: a second reproducer of this file reads all of it
    assert linecache.getlines(kernel_path("add.py")) == before


def test_a_gluon_kernel_round_trips_with_its_layouts(cli, tmp_path):
    target = tmp_path / "repro.py"
    code, out, err = cli("repro", kernel_path("gluon_copy.py"), "-o", target, "--check")
    assert code == 0, err
    said = _stages(out)
    assert "ttgir" in said and all(r.startswith("byte-identical") for r in said.values()), out
    assert "BlockedLayout(" in target.read_text()


def test_an_argument_it_cannot_write_is_one_line():
    from irscope.commands.repro import _argument

    with pytest.raises(IrscopeError) as err:
        _argument(object(), "table", set())
    assert str(err.value).startswith("repro: the argument table is a object")
    assert "\n" not in str(err.value)


def test_bad_output_folder_is_one_line(cli, tmp_path):
    code, out, err = cli("repro", kernel_path("add.py"), "-o", tmp_path / "no" / "r.py")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "does not exist" in err


@pytest.mark.parametrize(
    "text",
    [
        "def k(x):\n    return x\n",
        "s = '''x'''\n",
        "path = 'C:\\\\'",
        "end with a quote'",
        "tab\tand \\n\r\n",
    ],
)
def test_each_source_piece_is_written_as_a_literal_that_reads_back_the_same(text):
    from irscope.commands.repro import _string_block

    assert eval(_string_block(text)) == text  # noqa: S307 - the literal irscope writes, read back


def test_helpers_in_an_indented_block_and_under_another_name_round_trip(cli, tmp_path):
    """fla's helpers: `scale` is defined inside an else block (its text indented, another def after it) and
    called as `twice`: each is put back where the kernel looks it up, its block ending where the file's did."""
    from conftest import fixture_path

    target = tmp_path / "repro.py"
    code, out, err = cli("repro", fixture_path("repro_helpers.py"), "-o", target, "--check")
    assert code == 0, err
    assert all(r.startswith("byte-identical") for r in _stages(out).values()), out
    assert "('__main__', 'twice')" in target.read_text()


DESCRIPTOR_KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def copy_tiles(x_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK, BLOCK])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK, BLOCK])
    row = tl.program_id(0) * BLOCK
    y_desc.store([row, 0], x_desc.load([row, 0]))


if __name__ == "__main__":
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    x = torch.randn(64, 32, device="cuda")
    y = torch.empty_like(x)
    copy_tiles[(2,)](x, y, 64, 32, BLOCK=32)
"""


def test_a_kernel_that_makes_tensor_descriptors_gets_scratch_memory_in_its_reproducer(
    cli, tmp_path
):
    """A descriptor made in the kernel needs global scratch at launch, which Triton asks the allocator the file
    set for: on an H200, the reproducers of tutorial 09's and 08's such kernels compiled to the original's cubin
    and then stopped at "no allocator was set". The script sets one before its launch."""
    source = tmp_path / "descriptors.py"
    source.write_text(DESCRIPTOR_KERNEL)
    target = tmp_path / "repro.py"
    code, out, err = cli("repro", source, "-o", target, "--check", "--target", "sm_90")
    assert code == 0, err
    assert all(r.startswith("byte-identical") for r in _stages(out).values()), out
    text = target.read_text()
    assert text.index("    triton.set_allocator(_scratch)") < text.index("    kernel[(2, 1, 1)]")
    assert "def _scratch(size, alignment, stream):" in text


DEFAULT_FROM_A_GLOBAL = """import torch
import triton
import triton.language as tl

FILL = -1.0e6


@triton.jit
def masked_fill(x_ptr, n, BLOCK: tl.constexpr, FILL: tl.constexpr = FILL):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=FILL)
    tl.store(x_ptr + offsets, tl.where(x > 0, x, FILL), mask=offsets < n)


if __name__ == "__main__":
    x = torch.randn(100, device="cuda")
    masked_fill[(1,)](x, 100, BLOCK=128)
"""


def test_a_parameter_whose_default_reads_a_global_of_its_own_name_round_trips(cli, tmp_path):
    """`FILL: tl.constexpr = FILL` reads the module's FILL where the function is defined (jvp-flash-attention's
    MASK_CONST): on an H200 its reproducer stopped at `NameError: name 'MASK_CONST' is not defined`."""
    source = tmp_path / "defaults.py"
    source.write_text(DEFAULT_FROM_A_GLOBAL)
    target = tmp_path / "repro.py"
    code, out, err = cli("repro", source, "-o", target, "--check")
    assert code == 0, err
    assert all(r.startswith("byte-identical") for r in _stages(out).values()), out
    assert "_namespace('__main__')['FILL'] = -1000000.0" in target.read_text()


def test_an_integer_view_keeps_its_whole_storage_where_cpu_copies_only_the_view():
    """On a GPU `.cpu()` of a slice copies the slice alone; the reproducer needs the values of the whole storage
    (the same size and offset, so the same alignment). Liger's fused linear cross entropy passes its kernel a
    slice of its targets, and its reproducer failed to write on an H200. The virtual GPU's `.cpu()` copies as a
    GPU's does."""
    import torch

    from irscope.commands.repro import _tensor_expression
    from irscope.engine.triton_compat import Target
    from irscope.engine.virtual_gpu.device import virtual_gpu

    with virtual_gpu(Target("sm_90")):
        targets = torch.tensor([7, 3, 250, 12], device="cuda")
        written = _tensor_expression(targets[2:])
    assert written == "_tensor([2], [1], 2, 4, torch.int64, values=[7, 3, 250, 12])"


def test_an_inductor_kernels_reproducer_compiles_with_inductors_own_options(tmp_path):
    """Inductor compiles with options of its own (no overflow check, debug where its asserts need it); a JIT
    launch takes the defaults unless given them. Every stage was the same either way, but on an H200 the
    reproducers of torch.compile's kernels built other cubins: the options now travel with the launch."""
    from irscope.commands.repro import render
    from irscope.engine.session import open_file

    options = ("num_warps", "num_stages", "debug", "sanitize_overflow", "enable_fp_fusion")
    original = open_file(kernel_path("compiled_block.py"), target="sm_90").compile_all()[0]
    assert (
        original.launch.kernel.inductor is not None
        and original.metadata["sanitize_overflow"] is False
    )
    script = tmp_path / "repro.py"
    script.write_text(render(original, "the first kernel", "compiled_block.py"))
    (again,) = open_file(str(script), target="sm_90").compile_all()
    assert {k: again.metadata[k] for k in options} == {k: original.metadata[k] for k in options}
    # and with Inductor's ptxas: on an H200 the PTX differed in `.version` alone (9.0 against 8.7)
    text = script.read_text()
    assert text.index("    _inductors_ptxas()\n") < text.index("    kernel[")


def test_the_reproducers_ptxas_rule_is_inductors(tmp_path, monkeypatch):
    """`_inductors_ptxas` as the script defines it: torch's bin/ptxas when it can be run and nobody named one;
    a TRITON_PTXAS_PATH already set stays. Only an Inductor launch's script calls it."""
    import types

    from irscope.commands.repro import _SCRIPT_HELPERS

    start = _SCRIPT_HELPERS.index("def _inductors_ptxas")
    code = _SCRIPT_HELPERS[start : _SCRIPT_HELPERS.index("def _scratch")]
    ptxas = tmp_path / "torch" / "bin" / "ptxas"
    ptxas.parent.mkdir(parents=True)
    ptxas.write_text("#!/bin/sh\n")
    fake_torch = types.SimpleNamespace(__file__=str(tmp_path / "torch" / "__init__.py"))
    namespace = {"os": __import__("os"), "torch": fake_torch}
    exec(code, namespace)
    # recorded first, so that what the function sets is undone after the test too
    monkeypatch.setenv("TRITON_PTXAS_PATH", "unset below")
    monkeypatch.delenv("TRITON_PTXAS_PATH")
    namespace["_inductors_ptxas"]()
    assert "TRITON_PTXAS_PATH" not in __import__("os").environ  # not executable: not used
    ptxas.chmod(0o755)
    namespace["_inductors_ptxas"]()
    assert __import__("os").environ["TRITON_PTXAS_PATH"] == str(ptxas)
    monkeypatch.setenv("TRITON_PTXAS_PATH", "/opt/cuda/bin/ptxas")
    namespace["_inductors_ptxas"]()
    assert __import__("os").environ["TRITON_PTXAS_PATH"] == "/opt/cuda/bin/ptxas"


@pytest.mark.parametrize("launch", ["0", "1", "2"])
def test_an_aggregate_class_given_as_a_constexpr_and_a_module_read_by_name_round_trip(
    cli, tmp_path, launch
):
    """Gluon tutorials 07 and 13 give their matmuls an aggregate class (`MMAImpl`), whose methods read a
    tutorial imported by file name (`t5.pick_wgmma_layout`): refused before, "the argument MMAImpl is a type";
    the class is now written whole and the module made again with what the kernel reads of it. A class made
    inside a function (tutorial 07's grouped scheduler) is made again inside a function of that name, given
    the constexpr its method holds from it (refused before: "made inside a function")."""
    from conftest import fixture_path

    target = tmp_path / "repro.py"
    path = fixture_path("repro_aggregate/scale.py")
    code, out, err = cli("repro", path, "--launch", launch, "-o", target, "--check")
    assert code == 0, err
    said = _stages(out)
    assert "ttgir" in said and all(r.startswith("byte-identical") for r in said.values()), out
    text = target.read_text()
    assert ("_define_class('__main__'" in text) == (launch != "2")
    assert ("_define_local_class('__main__'" in text) == (launch == "2")
    # Doubler reads the helper module, Tripler does not
    assert ("_module('tile-helpers')" in text) == (launch == "0")


TYPED_POINTER_KERNEL = """import torch
import triton
import triton.language as tl


class Buffer:
    '''A tensor read from an offset, as FlagGems' StridedBuffer: what the JIT takes is data_ptr() and dtype.'''

    def __init__(self, base, offset):
        self._base, self.dtype = base, base.dtype
        self._address = base.data_ptr() + offset * base.element_size()

    def data_ptr(self):
        return self._address


@triton.jit
def copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(dst + offsets, tl.load(src + offsets, mask=offsets < n), mask=offsets < n)


if __name__ == "__main__":
    x = torch.arange(64, dtype=torch.float32, device="cuda")
    y = torch.empty(32, device="cuda")
    copy[(1,)](Buffer(x, 3), y, 32, BLOCK=32)
"""


def test_a_librarys_buffer_object_is_written_as_a_pointer_at_its_offset(cli, tmp_path):
    """FlagGems' generated kernels take StridedBuffer objects (a tensor read from an offset or with other
    strides): refused before as "a StridedBuffer"; written now as a pointer at the same byte offset into its
    tensor, so that its alignment (here 12 bytes past a 16-byte boundary) is the same."""
    path = tmp_path / "buffer.py"
    path.write_text(TYPED_POINTER_KERNEL)
    target = tmp_path / "repro.py"
    code, out, err = cli("repro", path, "-o", target, "--check")
    assert code == 0, err
    assert all(r.startswith("byte-identical") for r in _stages(out).values()), out
    text = target.read_text()
    assert "_Pointer(_tensor([64], [1], 0, 64, torch.float32), 12, torch.float32)" in text
    # its __main__ prints the checksum of the tensor a pointer points into, as of any tensor argument
    assert "value = value.tensor if isinstance(value, _Pointer) else value" in text
