"""torch.compile's kernels (core/inductor): Inductor kernel modules, output_code.py wrappers and
torch.compile scripts open on this CPU machine with every kernel, every config and every stage, compiled
with Inductor's own specialization; the fused ATen ops come from what Inductor wrote.

Fixtures (tests/fixtures/inductor): gpu_sm86_* were written by Inductor on an sm_86 GPU (a public
repository; origin in each header); cpu_t213_* by torch 2.13's Triton CPU backend here (generate_cpu.py)."""

import json
import os
import re

import pytest
from conftest import fixture_path, kernel_path
from tui_helpers import source_line_of

from irscope.base.names import NVIDIA_STAGES


def _inductor(name):
    return fixture_path(os.path.join("inductor", name))


def _report(cli, path, *extra):
    code, out, err = cli("report", path, "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def _decorator_meta(path):
    """What the file's decorator wrote, read straight from its text: signature and divisible arguments."""
    text = open(path, encoding="utf-8").read()
    # a dict literal Inductor wrote
    signature = eval(re.search(r"'signature': (\{[^}]*\})", text).group(1))
    divisible = sorted(
        int(i) for i in re.findall(r"\((\d+),\): \[\['tt.divisibility', 16\]\]", text)
    )
    return signature, divisible


@pytest.mark.parametrize(
    "name, kind",
    [
        ("gpu_sm86_red.py", "reduction"),
        ("gpu_sm86_per.py", "persistent_reduction"),
        ("gpu_sm86_poi.py", "pointwise"),
    ],
)
def test_a_gpu_written_kernel_module_compiles_each_inductor_config_with_its_triton_meta(
    cli, name, kind
):
    path = _inductor(name)
    doc = _report(cli, path)
    kernels = doc["kernels"]
    signature, divisible = _decorator_meta(path)
    configs = kernels[0]["autotune"]["configs"]
    assert len(kernels) == len(configs) >= 2  # each config of the decorator's list is a compilation
    params = list(signature)
    for index, k in enumerate(kernels):
        info = k["inductor"]
        assert info["kernel_kind"] == kind and info["config"]["index"] == index
        assert info["aten_ops"] and info["ops_from"] == "kernel name"
        assert info["generated_for"] == "cuda" and info["note"] is None
        assert k["error"] is None and list(k["stages"]) == list(NVIDIA_STAGES)
        assert all(k["stages"][s]["lines"] > 0 for s in NVIDIA_STAGES) and k["registers"] > 0
        # the config's block sizes and warps are what was compiled
        for const, value in info["config"]["kwargs"].items():
            assert k["constexprs"][const] == value
        assert k["num_warps"] == info["config"]["num_warps"]
        # divisibility exactly as triton_meta says, no more (Inductor's, not the JIT's guess from tensors)
        marked = sorted(
            params.index(n) for n, letters in k["specialization"].items() if "D" in letters
        )
        assert marked == divisible
    assert "sm_86" in " ".join(doc["notes"])  # written for a GPU irscope has no target for: said


def test_a_gpu_written_wrapper_opens_on_a_cpu_machine_with_its_launches_and_fused_ops(cli):
    path = _inductor("gpu_sm86_output_code.py")
    text = open(path, encoding="utf-8").read()
    names = re.findall(r"^(\w+) = async_compile\.triton\(", text, re.MULTILINE)
    doc = _report(cli, path)
    found = {k["name"] for k in doc["kernels"]}
    assert found == set(names) and len(names) == 3
    for k in doc["kernels"]:
        assert k["launch"] == "captured"  # from the wrapper's own call() on the virtual GPU
        assert k["error"] is None and all(k["stages"][s]["lines"] > 0 for s in NVIDIA_STAGES)
        info = k["inductor"]
        assert info["ops_from"] == "wrapper"
        # the comment Inductor wrote above this kernel names exactly these ops and nodes
        block = text[: text.index(f"{k['name']} = async_compile.triton(")].rsplit("\n\n", 1)[-1]
        comment = re.search(r"Source Nodes: \[(.*)\], Original ATen: \[(.*)\]", block)
        assert info["aten_ops"] == [op.strip() for op in comment.group(2).split(",")]
        assert info["source_nodes"] == [n.strip() for n in comment.group(1).split(",")]


def test_a_cpu_backend_wrapper_labels_every_kernel_as_generated_for_cpu(cli):
    doc = _report(cli, _inductor("cpu_t213_output_code.py"))
    assert {k["name"] for k in doc["kernels"]} == {
        "triton_per_fused_native_layer_norm_0",
        "triton_per_fused_gelu_sum_1",
    }
    for k in doc["kernels"]:
        assert k["inductor"]["generated_for"] == "cpu"
        assert "a GPU run may choose other block sizes" in k["inductor"]["note"]
    gelu = next(k for k in doc["kernels"] if k["name"] == "triton_per_fused_gelu_sum_1")
    assert gelu["inductor"]["aten_ops"] == ["aten.gelu", "aten.sum"]
    assert gelu["inductor"]["node_map"][
        "gelu"
    ]  # the source node's ATen nodes, as the wrapper maps them


def test_the_text_report_names_the_fused_ops_and_the_cpu_label(cli):
    code, out, err = cli("report", _inductor("cpu_t213_per_fused_native_layer_norm.py"))
    assert code == 0, err
    assert (
        "persistent_reduction kernel fusing aten.native_layer_norm (read from the kernel's name)"
        in out
    )
    assert "generated for CPU" in out


def test_a_torch_compile_script_gets_inductors_gpu_path_kernels_for_the_virtual_gpu(
    cli, monkeypatch, tmp_path
):
    from irscope.base.target import Target

    # a fresh Inductor cache, as irscope's worker has (its FX graph cache would give back an earlier run's code)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    from irscope.engine.virtual_gpu.device import device_properties

    doc = _report(cli, kernel_path("compiled_block.py"))
    names = {k["name"] for k in doc["kernels"]}
    assert any("layer_norm" in n for n in names) and any("gelu" in n for n in names)
    h100 = device_properties(Target("sm_90"))
    for k in doc["kernels"]:
        info = k["inductor"]
        assert (
            info["generated_for"] == "cuda" and info["note"] is None and k["launch"] == "captured"
        )
        # Inductor asked the virtual device for its properties, as it asks a real one
        assert (
            info["device"]["cc"] == 90
            and info["device"]["multi_processor_count"] == h100.multi_processor_count
        )
        assert k["error"] is None and k["stages"]["sass"]["lines"] > 0
    assert any("for the virtual GPU (its GPU path" in note for note in doc["notes"])
    # from the model line to the kernel: the nodes are the model's (as a GPU run names them), with its lines
    forward = source_line_of(kernel_path("compiled_block.py"), "return torch.nn.functional.gelu(")
    norm = next(k for k in doc["kernels"] if "layer_norm" in k["name"])["inductor"]
    assert norm["source_nodes"] == ["layer_norm"]
    assert [(os.path.basename(m["file"]), m["line"]) for m in norm["model_lines"]] == [
        ("compiled_block.py", forward)
    ]


def test_a_tutorials_user_defined_triton_kernels_under_torch_compile_take_the_gpu_path(
    cli, tmp_path
):
    """PyTorch's own tutorial (tests/corpus/snippets/pytorch-tutorials): Inductor wraps the user's kernels
    (user_autotune) and generates one of its own (zeros_like)."""
    import shutil

    from conftest import ROOT

    source = os.path.join(
        ROOT,
        "tests",
        "corpus",
        "snippets",
        "pytorch-tutorials",
        "torch_compile_user_defined_triton_kernel_tutorial.py",
    )
    path = tmp_path / "tutorial.py"
    shutil.copyfile(source, path)
    doc = _report(cli, path)
    kinds = {k["inductor"]["kernel_kind"] for k in doc["kernels"] if k.get("inductor")}
    assert "user_autotune" in kinds and "pointwise" in kinds
    assert all(
        k["inductor"]["generated_for"] == "cuda" for k in doc["kernels"] if k.get("inductor")
    )
    assert all(k["error"] is None for k in doc["kernels"])


def test_a_compiled_training_step_takes_the_cpu_backend_and_says_so_for_each_kernel(
    cli, monkeypatch, tmp_path
):
    """Autograd cannot record a fake CUDA tensor on a CPU-only torch: the forward and backward graphs go
    through Inductor's Triton CPU backend, and every kernel says it was generated for CPU."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    doc = _report(cli, _inductor("compiled_train_step.py"))
    assert any("needs gradients" in note and "Triton CPU backend" in note for note in doc["notes"])
    names = {k["name"] for k in doc["kernels"]}
    assert any("backward" in n for n in names) and any("mean" in n for n in names)  # both graphs
    for k in doc["kernels"]:
        assert (
            k["inductor"]["generated_for"] == "cpu" and "other block sizes" in k["inductor"]["note"]
        )
        assert k["error"] is None and k["stages"]["sass"]["lines"] > 0


def test_inductor_kernels_are_compiled_with_inductors_own_options():
    """The options come from the installed torch's CachingAutotuner, applied to the file's triton_meta."""
    from irscope.base.target import Target
    from irscope.engine.inductor.kernels import InductorKernel, inductor_capture
    from irscope.engine.inductor.specialize import compile_parts

    path = _inductor("gpu_sm86_red.py")
    namespace = {"__file__": path, "__name__": "irscope_test_inductor_red"}
    with inductor_capture(lambda launch: None, None):
        exec(compile(open(path, encoding="utf-8").read(), path, "exec"), namespace)
    (kernel,) = [v for v in namespace.values() if isinstance(v, InductorKernel)]
    for index, config in enumerate(kernel.configs):
        signature, constants, attrs, options = compile_parts(kernel, index, Target("sm_80"))
        assert (
            signature == kernel.triton_meta["signature"]
            and attrs == kernel.triton_meta["configs"][0]
        )
        assert (
            options["num_warps"] == config.num_warps and options["num_stages"] == config.num_stages
        )
        assert options["debug"] is True  # assert_indirect_indexing in inductor_meta
        assert options["sanitize_overflow"] is False
        assert all(constants[name] == value for name, value in config.kwargs.items())


def test_fused_ops_are_read_back_from_a_kernel_name_only_when_every_piece_is_an_aten_op():
    from irscope.engine.inductor.provenance import ops_from_name

    assert ops_from_name("triton_poi_fused__to_copy_t_0") == ["aten._to_copy", "aten.t"]
    assert ops_from_name("triton_per_fused_native_layer_norm_0") == ["aten.native_layer_norm"]
    assert ops_from_name("triton_poi_fused_notanop_zzz_0") == []
    assert ops_from_name("my_kernel") == []


def test_the_tui_names_the_fused_ops_in_the_header_the_picker_and_info():
    from tui_helpers import run_async, wait_until_shown

    from irscope.tui.app import IrscopeApp
    from irscope.tui.screens import PickerScreen

    @run_async
    async def check():
        app = IrscopeApp(_inductor("cpu_t213_output_code.py"), target="sm_90")
        async with app.run_test(size=(200, 50)) as pilot:
            await wait_until_shown(app, pilot)
            # two kernels, three configs each: the picker first
            assert isinstance(app.screen, PickerScreen)
            names = " ".join(str(row["name"]) for row in app.screen.rows)
            assert "aten.gelu, aten.sum" in names and "(CPU-generated)" in names
            await pilot.press("enter")
            await wait_until_shown(app, pilot)
            header = str(app.query_one("#header").render())
            assert "persistent_reduction: aten." in header
            assert "generated for CPU" in header

    check()


def test_a_kernel_module_from_pytorch_before_2_6_is_one_line_naming_the_fix(cli):
    code, out, err = cli("report", _inductor("pre26_attrs_descriptor.py"))
    assert code != 0
    assert (
        "written by PyTorch before 2.6" in err and "regenerate it with PyTorch 2.6 or later" in err
    )
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_value_the_user_gives_replaces_inductors_for_that_constexpr(cli):
    doc = _report(cli, _inductor("gpu_sm86_per.py"), "-D", "XBLOCK=64", "--config", "1")
    (k,) = doc["kernels"]
    assert k["constexprs"]["XBLOCK"] == 64 and k["inductor"]["config"]["kwargs"]["XBLOCK"] != 64
    code, out, err = cli("report", _inductor("gpu_sm86_per.py"), "-D", "NOPE=1")
    assert code != 0 and "has no constexpr of that name" in err


def test_a_wrappers_launch_has_inductors_grid_and_real_addresses(cli):
    """The grid is Inductor's own (its GridExpr on the launch's sizes and the config's blocks), and the
    launch's tensors come from the wrapper's benchmark inputs, so the coalescing analysis has addresses."""
    path = _inductor("gpu_sm86_output_code.py")
    text = open(path, encoding="utf-8").read()
    numel = int(re.search(r"triton_poi_fused__to_copy_0\.run\(\w+, \w+, (\d+),", text).group(1))
    doc = _report(cli, path)
    copies = [k for k in doc["kernels"] if k["name"] == "triton_poi_fused__to_copy_0"]
    assert copies
    for k in copies:
        block = k["constexprs"]["XBLOCK"]
        assert k["grid"] == [-(-numel // block), 1, 1]
        totals = k["coalescing_totals"]
        assert (
            totals["error"] is None and totals["programs"] > 0 and totals["loads"]["requests"] > 0
        )


def test_each_virtual_gpu_gets_inductors_kernels_for_its_own_capability_in_one_process(
    cli, monkeypatch, tmp_path
):
    """Inductor asks the device what it is once a process (DeviceProperties.create and the system info of
    its FX graph cache are cached, and a CPU-only torch names no device in that cache's key): compiled_block.py
    opened for sm_80 and then for sm_90 in one process got sm_80's kernels both times (cc 80), and this file's
    virtual-GPU test failed after any earlier test had run Inductor for another target."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    for target, cc in (("sm_80", 80), ("sm_90", 90), ("sm_80", 80)):
        doc = _report(cli, kernel_path("compiled_block.py"), "--target", target)
        assert {k["inductor"]["device"]["cc"] for k in doc["kernels"]} == {cc}, target
