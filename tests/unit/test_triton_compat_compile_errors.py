"""A compile failure names its real cause where Triton's own message does not (triton_compat/compile_errors.py):
real files, the real compiler."""

import os

import triton
from conftest import fixture_path
from triton.compiler import compiler as compiler_module

from irscope.engine.session import open_file
from irscope.engine.triton_compat.caches import check_caches, new_cache_warning
from irscope.engine.triton_compat.driver import gpu_target_of


def _only_compilation(name):
    ws = open_file(fixture_path(name), compile_ahead=False)
    (comp,) = ws.compile_all()
    return comp


def test_a_missing_extern_lib_is_named_with_the_installed_one():
    comp = _only_compilation("extern_lib_missing.py")
    missing = os.path.normpath(
        os.path.join(
            os.path.dirname(fixture_path("x")),
            "..",
            "third_party",
            "nvidia",
            "backend",
            "lib",
            "libdevice.10.bc",
        )
    )
    bundled = dict(
        compiler_module.make_backend(gpu_target_of(comp.target)).parse_options({}).extern_libs
    )["libdevice"]
    message = comp.failure.message
    assert message.startswith("the launch's extern_libs gives libdevice as ") and os.path.exists(
        bundled
    )
    assert os.path.normpath(message.split(" as ", 1)[1].split(", which")[0]) == missing
    assert (
        "which does not exist (a path in Triton's source tree: the file expects to run inside a checkout of "
        f"Triton); the installed Triton's libdevice is {bundled}"
    ) in message
    # Triton opens the library while computing its cache key: not a cache that cannot be written
    assert new_cache_warning() is None and check_caches() is None


def test_a_removed_builtin_is_named_with_the_installed_release():
    comp = _only_compilation("block_pointer.py")
    if "removed" not in (triton.language.make_block_ptr.__doc__ or ""):  # Triton 3.6: still there
        assert comp.ok
        return
    assert comp.failure.message == (
        f"Block pointers have been removed in favor of the tensor descriptor API "
        f"(tl.make_block_ptr raises this in the installed Triton {triton.__version__})"
    )
    assert comp.failure.source_line.startswith("src = tl.make_block_ptr(")


def test_a_static_assert_without_a_message_names_its_statement_and_values():
    comp = _only_compilation("static_assert_bare.py")
    assert (
        comp.failure.message
        == "tl.static_assert(BLOCK >= 1024) is false for this launch (BLOCK = 256)"
    )
    assert comp.failure.line == 11 and comp.failure.source_line == "tl.static_assert(BLOCK >= 1024)"
