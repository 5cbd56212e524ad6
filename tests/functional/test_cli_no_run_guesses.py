"""`--no-run` never guesses silently: what irscope fills in is listed, an analysis resting on it says so,
pointers are known by how the kernel uses them, and a module that raises after defining its kernels still
opens."""

import importlib.util
import json
import sys

from conftest import fixture_path, kernel_path

from irscope.engine.capture.kernel_params import pointer_params
from irscope.engine.triton_compat import unwrap_kernel


def _kernels(path):
    spec = importlib.util.spec_from_file_location(f"irscope_test_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return {
        name: u.jit
        for name, value in vars(module).items()
        if (u := unwrap_kernel(value)) is not None and u.jit.fn.__module__ == spec.name
    }


def test_pointers_are_found_by_use_in_every_example_kernel():
    expected = {
        ("add.py", "add_kernel"): {"x_ptr", "y_ptr", "out_ptr"},
        ("matmul.py", "matmul_kernel"): {"a_ptr", "b_ptr", "c_ptr"},
        ("layernorm.py", "layernorm_kernel"): {"x_ptr", "w_ptr", "b_ptr", "out_ptr"},
        ("softmax.py", "softmax_kernel"): {"in_ptr", "out_ptr"},
        # K and V reach memory only through the @triton.jit helper they are passed to
        ("attention.py", "attention_fwd_kernel"): {"Q", "K", "V", "Out"},
    }
    for (file, name), pointers in expected.items():
        assert pointer_params(_kernels(kernel_path(file))[name].fn) == pointers, (file, name)


def test_no_run_lists_each_guess_and_the_analysis_that_rests_on_one_says_so(cli):
    code, out, err = cli(
        "report", fixture_path("plain_names.py"), "--no-run", "-D", "BLOCK=256", "--json"
    )
    assert code == 0, err
    (kernel,) = json.loads(out)["kernels"]
    assert kernel["signature"]["src"] == "*fp32" and kernel["signature"]["dst"] == "*fp32"
    assert kernel["signature"]["ptr_offset"] == "i32"  # named like a pointer, used as an offset
    assert kernel["guesses"] == {
        "src": "a *fp32 tensor, 16-byte aligned",
        "dst": "a *fp32 tensor, 16-byte aligned",
        "count": "3 (i32)",
        "ptr_offset": "3 (i32)",
    }
    reasons = [r["why"] for d in kernel["vectorization"] for r in d["reasons"]]
    assert reasons and all("is a guess)" in why for why in reasons), reasons
    assert any("count = 3 (i32) is a guess" in why for why in reasons)
    # the top level raised after the kernel was defined: said, not fatal
    assert "raised ModuleNotFoundError" in err and "after its kernels were defined" in err


def test_values_given_on_the_command_line_are_not_guesses(cli):
    code, out, err = cli(
        "report",
        fixture_path("plain_names.py"),
        "--no-run",
        "-D",
        "BLOCK=256",
        "--arg",
        "count=4096",
        "--arg",
        "ptr_offset=0",
        "--json",
    )
    assert code == 0, err
    (kernel,) = json.loads(out)["kernels"]
    assert set(kernel["guesses"]) == {"src", "dst"}


def test_a_captured_launch_has_no_guesses(cli):
    code, out, err = cli("report", kernel_path("add.py"), "--json")
    assert code == 0, err
    assert all(k["guesses"] == {} for k in json.loads(out)["kernels"])
