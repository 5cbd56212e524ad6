"""The virtual GPU: with no GPU, a file sees one device of the target (real torch, real Triton interpreter)."""

import json
import math
import os

import pytest
import torch
import triton
import triton.testing
from conftest import fixture_path
from triton.runtime import driver

from irscope.analysis.occupancy import AMD_LIMITS, NVIDIA_LIMITS
from irscope.base.names import TARGETS
from irscope.engine.capture.discover import read_user_file
from irscope.engine.capture.run import run_user_file
from irscope.engine.session import open_file
from irscope.engine.triton_compat import Target
from irscope.engine.virtual_gpu.device import describe_virtual_device, virtual_gpu

NVIDIA_KEYS = {
    "max_shared_mem",
    "max_num_regs",
    "multiprocessor_count",
    "warpSize",
    "sm_clock_rate",
    "mem_clock_rate",
    "mem_bus_width",
}
HIP_KEYS = NVIDIA_KEYS | {"arch", "max_threads_per_sm", "cooperativeLaunch"}


def limits(name):
    return NVIDIA_LIMITS.get(name) or AMD_LIMITS[name]


@pytest.mark.parametrize("name", TARGETS)
def test_device_queries_answer_from_the_targets_table(name):
    lim = limits(name)
    with virtual_gpu(Target(name)):
        assert (
            torch.cuda.is_available()
            and torch.cuda.device_count() == 1
            and torch.cuda.current_device() == 0
        )
        props = torch.cuda.get_device_properties()
        for device in (0, "cuda", "cuda:0", torch.device("cuda")):
            assert torch.cuda.get_device_properties(device) == props
        assert props.multi_processor_count == lim.chip.units and props.name == lim.chip.name
        assert torch.cuda.get_device_name() == lim.chip.name
        assert (
            props.L2_cache_size == lim.chip.l2_bytes and props.total_memory == lim.chip.memory_bytes
        )
        assert torch.cuda.get_device_capability() == (props.major, props.minor)
        triton_props = driver.active.utils.get_device_properties(0)
        target = driver.active.get_current_target()
        if name.startswith("sm_"):
            assert torch.cuda.get_device_capability() == divmod(int(name[3:]), 10)
            assert (
                set(triton_props) == NVIDIA_KEYS
                and props.warp_size == triton_props["warpSize"] == 32
            )
            assert (
                triton_props["max_shared_mem"]
                == props.shared_memory_per_block_optin
                == lim.max_shared_per_block
            )
            assert props.max_threads_per_multi_processor == lim.max_warps_per_sm * 32
            assert (
                torch.version.hip is None
                and target.backend == "cuda"
                and target.arch == int(name[3:])
            )
        else:
            assert (
                set(triton_props) == HIP_KEYS and props.warp_size == triton_props["warpSize"] == 64
            )
            assert triton_props["max_shared_mem"] == props.shared_memory_per_block == lim.lds_per_cu
            assert props.gcnArchName.split(":")[0] == triton_props["arch"].split(":")[0] == name
            assert torch.version.hip is not None and target.backend == "hip" and target.arch == name
        assert triton_props["multiprocessor_count"] == props.multi_processor_count
        # Triton's own bandwidth formula gives the datasheet's number from these clocks
        gbps = triton.testing.get_dram_gbps()
        assert gbps == lim.chip.memory_clock_khz * lim.chip.memory_bus_bits * 2 / 1e6 / 8 > 250


def test_the_virtual_gpu_records_what_the_file_asks_about_the_device():
    """What a file asked decides whether it is run again for another target (engine/capture/retarget.py)."""
    asked = set()
    with virtual_gpu(Target("sm_90"), asked):
        assert (
            torch.cuda.is_available()
            and torch.cuda.device_count() == 1
            and torch.empty(2, device="cuda").is_cuda
        )
        assert driver.active.get_current_target().backend == "cuda"
        assert not asked, (
            "whether there is a device, and its backend, are no questions about what it is"
        )
        torch.cuda.get_device_capability()
        torch.cuda.get_device_name(0)
        driver.active.utils.get_device_properties(0)
    assert asked == {
        "torch.cuda.get_device_capability",
        "torch.cuda.get_device_name",
        "driver.active.utils.get_device_properties",
    }


def test_a_library_that_asks_torch_version_cuda_sees_an_nvidia_gpu():
    """Libraries tell CUDA from ROCm by `torch.version.cuda` / `torch.version.hip` (jvp-flash-attention's
    is_cuda(), which picks its TMA forward and num_stages 5 on an sm_90); a CPU build of torch says None to
    both. On an NVIDIA target the virtual GPU names the CUDA release of the ptxas Triton compiles with, on an
    AMD target none; both are put back after."""
    import re

    from triton.backends.nvidia.compiler import get_ptxas_version

    before = (torch.version.cuda, torch.version.hip)
    with virtual_gpu(Target("sm_90")):
        release = torch.version.cuda
        assert release is not None and torch.version.hip is None
        assert f"release {release}," in get_ptxas_version(90)
    with virtual_gpu(Target("gfx942")):
        assert torch.version.hip is not None and torch.version.cuda == before[0]
    assert (torch.version.cuda, torch.version.hip) == before
    assert re.fullmatch(r"\d+\.\d+", release)


def test_targets_are_different_devices():
    names = {Target(t): describe_virtual_device(Target(t)) for t in TARGETS}
    assert len(set(names.values())) == len(TARGETS)
    line = names[Target("sm_90")]
    assert "virtual" in line and "H100" in line and "sm_90" in line and "interpreter" in line


def test_factories_and_moves_give_cpu_tensors_on_the_virtual_device():
    with virtual_gpu(Target("sm_90")):
        DEVICE = driver.active.get_active_torch_device()
        made = [
            torch.empty(4, device="cuda"),
            torch.zeros(4, device="cuda:0"),
            torch.ones(4, device=DEVICE),
            torch.rand(4, device=0),
            torch.full((4,), 2.0, device=torch.device("cuda")),
            torch.arange(4, device=DEVICE),
            torch.tensor([1.0, 2.0], device="cuda"),
        ]
        for t in made:
            assert t.is_cuda and t.device == DEVICE and t.get_device() == 0 and not t.is_cpu
        host = torch.randn(4)
        assert not host.is_cuda and host.device == torch.device("cpu") and host.get_device() == -1
        moved = [
            host.cuda(),
            host.to("cuda"),
            host.to(DEVICE, torch.float16),
            host.to(made[0]),
            host.to(device="cuda:0"),
        ]
        for t in moved:
            assert t.is_cuda and t.device == DEVICE and t is not host
        assert moved[2].dtype == torch.float16 and torch.equal(moved[0], host)
        gpu = made[3]
        assert gpu.cuda() is gpu and gpu.to("cuda") is gpu
        back = gpu.cpu()
        assert back.device.type == "cpu" and back is not gpu
        back.fill_(7.0)
        assert not torch.equal(gpu, back), ".cpu() is a copy, as from a GPU"
        assert (
            gpu.to("cpu").device.type == "cpu"
            and gpu.to("cpu", torch.float64).dtype == torch.float64
        )
        # results and views follow their inputs
        assert (
            (gpu * 2).is_cuda
            and gpu[1:].is_cuda
            and torch.empty_like(gpu).is_cuda
            and gpu.view(2, 2).T.is_cuda
        )
        assert (
            not (host * 2).is_cuda and not host[1:].is_cuda and not torch.empty_like(host).is_cuda
        )
        assert (
            torch.empty(3, device=gpu.device).is_cuda
            and not torch.empty(3, device=host.device).is_cuda
        )
        with torch.device("cuda"):
            assert torch.zeros(3).is_cuda
        model = torch.nn.Linear(4, 4).cpu()
        assert not model.weight.is_cuda
        model.cuda()
        assert model.weight.is_cuda and model(gpu).is_cuda
        assert torch.empty(4, pin_memory=True).is_pinned() is False
        for t in made + moved:  # all of it is CPU memory underneath
            t.untyped_storage().data_ptr()


def test_a_module_moves_to_the_virtual_gpu_in_every_form_torch_accepts():
    """`Module.to` parses its arguments (a torch call the mode sees) and moves each parameter with
    `t.to(device, None, non_blocking)`; each form ends with the parameters on cuda:0, and back on the host."""
    with virtual_gpu(Target("sm_90")):
        DEVICE = driver.active.get_active_torch_device()
        half_gpu = torch.empty(2, device="cuda", dtype=torch.float16)
        moves = {
            "to('cuda')": (lambda m: m.to("cuda"), torch.float32),
            "to(device=, dtype=None)": (lambda m: m.to(device="cuda", dtype=None), torch.float32),
            "to('cuda', non_blocking=True)": (
                lambda m: m.to("cuda", non_blocking=True),
                torch.float32,
            ),
            "to(device, float16)": (
                lambda m: m.to(torch.device("cuda"), torch.float16),
                torch.float16,
            ),
            "to(gpu tensor)": (lambda m: m.to(half_gpu), torch.float16),
            "to(0)": (lambda m: m.to(0), torch.float32),
            "cuda()": (lambda m: m.cuda(), torch.float32),
            "half().cuda()": (lambda m: m.half().cuda(), torch.float16),
            "to(memory_format=)": (
                lambda m: m.to("cuda", memory_format=torch.channels_last),
                torch.float32,
            ),
        }
        for name, (move, dtype) in moves.items():
            model = move(torch.nn.Linear(4, 4).cpu())
            assert (
                model.weight.device == DEVICE and model.bias.is_cuda and model.weight.dtype == dtype
            ), name
            assert model(torch.ones(4, device="cuda", dtype=dtype)).is_cuda, name
            host = model.to("cpu")
            assert not host.weight.is_cuda and host.weight.device.type == "cpu", name
        model = torch.nn.Linear(4, 4).cuda()
        assert not model.to(torch.randn(2)).weight.is_cuda, "to(host tensor) moves to the host"
        x = torch.randn(4)
        moved = [
            x.to("cuda", None, False),
            x.to(DEVICE, None, False, True),
            x.to(device="cuda", dtype=None),
            x.to("cuda", copy=True),
            x.to(half_gpu, non_blocking=True),
            x.to(half_gpu, False, True),
        ]
        assert all(t.is_cuda and t is not x for t in moved) and moved[-1].dtype == torch.float16
        assert x.to(None) is x and x.to(None, torch.float16).dtype == torch.float16
        assert not x.to(dtype=torch.half).is_cuda
        assert torch.randn(4, device="cuda").to(None, None, False).is_cuda


def test_a_model_moved_to_the_gpu_then_a_kernel_on_its_output_opens(cli):
    code, out, err = cli("report", fixture_path("model_to_cuda.py"), "--json")
    assert code == 0, err
    (kernel,) = json.loads(out)["kernels"]
    assert kernel["name"] == "relu_kernel" and kernel["signature"]["x_ptr"] == "*fp32"


def test_the_backward_pass_runs_on_the_virtual_gpu_too():
    # A kernel library's backward (an autograd.Function) asks where its tensors are and how many SMs the
    # GPU has (liger-kernel's norms: "sm_count = 1 unless x.device.type == 'cuda'"): it must get the
    # forward's answers, however the backward is started.
    seen = []

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            seen.append(
                (
                    grad.device.type,
                    torch.cuda.get_device_properties(grad.device).multi_processor_count,
                )
            )
            return grad * 2

    with virtual_gpu(Target("sm_90")):
        x = torch.randn(4, device="cuda", requires_grad=True)
        Scale.apply(x).sum().backward()
        torch.autograd.backward(Scale.apply(x).sum())
        (grad,) = torch.autograd.grad(Scale.apply(x).sum(), x)
        assert x.grad.is_cuda and grad.is_cuda
    sms = limits("sm_90").chip.units
    assert seen == [("cuda", sms)] * 3
    assert torch._C._len_torch_function_stack() == 0


def test_streams_events_seeds_and_memory_calls():
    with virtual_gpu(Target("sm_90")):
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            assert torch.cuda.current_stream() is s
        assert torch.cuda.current_stream() is torch.cuda.default_stream()
        torch.cuda.set_stream(s)
        s.wait_stream(torch.cuda.default_stream())
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        end.record(s)
        end.synchronize()
        torch.cuda.synchronize()
        assert end.query() and math.isnan(start.elapsed_time(end))
        with torch.cuda.device(0), torch.cuda.device(torch.device("cuda")):
            torch.cuda.set_device(0)
        torch.cuda.manual_seed(3)
        a = torch.randn(5, device="cuda")
        torch.cuda.manual_seed_all(3)
        assert torch.equal(a, torch.randn(5, device="cuda"))
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        assert torch.cuda.memory_allocated() == torch.cuda.max_memory_allocated() == 0
        free, total = torch.cuda.mem_get_info()
        assert free == total == torch.cuda.get_device_properties().total_memory
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            a.add_(1)
        g.replay()
        assert torch.cuda.is_bf16_supported() and torch.cuda.get_arch_list() == ["sm_90"]
        assert (
            torch.accelerator.is_available()
            and torch.accelerator.current_accelerator().type == "cuda"
        )


def test_torch_compile_traces_on_the_virtual_gpu():
    # Dynamo keeps one rule per torch object: every stand-in must be its own object (one shared no-op
    # function under several torch.cuda names made torch.compile refuse to start)
    from irscope.engine.virtual_gpu.cuda import (
        VirtualDeviceProperties,
        accelerator_namespace,
        cuda_namespace,
    )

    props = VirtualDeviceProperties("x", 9, 0, 1, 1, 32, 2048, 1024, 65536, 1, 1, 1, 1, 1, 1, 1)
    cuda = cuda_namespace(props, "sm_90")
    objects = list(cuda.values()) + list(accelerator_namespace(cuda).values())
    assert len({id(o) for o in objects}) == len(objects)
    with virtual_gpu(Target("sm_90")):
        f = torch.compile(lambda x: (x * 2).sum() + torch.cuda.device_count(), backend="eager")
        assert f(torch.ones(3, device="cuda")).item() == 7.0


@pytest.mark.parametrize(
    "kwargs,shape",
    [
        ({}, None),
        ({"quantiles": [0.5, 0.2, 0.8]}, 3),
        ({"quantiles": [0.5]}, None),
        ({"return_mode": "all"}, 1),
        ({"return_mode": "min", "warmup": 1, "rep": 5}, None),
    ],
)
def test_a_benchmark_runs_once_and_is_never_a_measurement(kwargs, shape):
    calls = []
    with virtual_gpu(Target("sm_90")):
        for bench in (
            triton.testing.do_bench,
            triton.testing.do_bench_cudagraph,
            driver.active.get_benchmarker(),
        ):
            calls.clear()
            result = bench(lambda: calls.append(1), **kwargs)
            assert calls == [1]
            values = result if shape is not None else [result]
            assert len(values) == (shape or 1) and all(
                isinstance(v, float) and math.isnan(v) for v in values
            )
        ms = triton.testing.do_bench(lambda: None)
        assert math.isnan(2 * 4096 * 4 * 1e-9 / (ms * 1e-3)), "arithmetic on it stays NaN"


def test_everything_is_restored_after_the_context():
    names = [
        "is_available",
        "device_count",
        "get_device_properties",
        "get_device_capability",
        "Event",
        "Stream",
        "synchronize",
        "manual_seed",
        "current_stream",
        "device",
        "mem_get_info",
    ]
    before = {n: torch.cuda.__dict__.get(n) for n in names}
    accel_before = torch.accelerator.__dict__.get("is_available")
    testing_before = (
        triton.testing.do_bench,
        triton.testing.do_bench_cudagraph,
        triton.testing.Mark.run,
    )
    from triton._C.libtriton import nvidia

    blas_before = nvidia.cublas.CublasLt
    driver_before, hip_before = driver._active, torch.version.hip
    depth = torch._C._len_torch_function_stack()
    with pytest.raises(RuntimeError, match="boom"):
        with virtual_gpu(Target("gfx942")):
            x = torch.ones(3, device="cuda")
            torch.set_default_device("cuda")  # the file leaves a default device behind
            assert torch.version.hip is not None and nvidia.cublas.CublasLt is not blas_before
            raise RuntimeError("boom")
    assert {n: torch.cuda.__dict__.get(n) for n in names} == before
    assert torch.accelerator.__dict__.get("is_available") is accel_before
    assert (
        triton.testing.do_bench,
        triton.testing.do_bench_cudagraph,
        triton.testing.Mark.run,
    ) == testing_before
    assert nvidia.cublas.CublasLt is blas_before and driver._active is driver_before
    assert torch.version.hip == hip_before and torch._C._len_torch_function_stack() == depth
    assert not torch.cuda.is_available()
    assert x.device.type == "cpu" and not x.is_cuda, "outside, its tensors are plain CPU tensors"
    assert torch.zeros(2).device.type == "cpu", "the file's default device is gone"


def run(name, target="sm_90", use_interpreter=True):
    return run_user_file(
        read_user_file(fixture_path(name)),
        run_main=True,
        use_interpreter=use_interpreter,
        target=Target(target),
    )


@pytest.mark.parametrize("target", ["sm_90", "sm_80", "gfx942"])
def test_a_tutorial_style_file_runs_unchanged(target):
    result = run("virtual_gpu_tour.py", target)
    assert result.error is None, result.user_traceback
    seen = result.namespace["SEEN"]
    sms = limits(target).chip.units
    assert seen["available"] and seen["torch_sms"] == sms and seen["correct"]
    assert seen["hopper"] == (target == "sm_90")
    assert all(math.isnan(t) for t in seen["timings"]) and len(seen["timings"]) == 2
    # the sweep ran each line at its first x value, then the line that launches a kernel at every later one
    calls = seen["bench_calls"]
    # then the range's end
    assert calls[:2] == [(1024, "triton"), (1024, "torch")] and calls[2] == (
        2**15,
        "triton",
    )
    assert sorted(calls[2:]) == [(2**i, "triton") for i in range(11, 16)]
    assert "'scale' ran at 6 of its 6 points, its kernel lines (triton) at each" in result.output
    assert "nothing timed" in result.output
    grids = [launch.grid for launch in result.launches]
    assert grids[0] == (min(sms, 196),)  # the persistent grid follows the SM count
    # each point of the sweep makes a specialization of its own (NUM_PROGRAMS = its grid), as on a GPU
    assert {(min(sms, 2**i // 256),) for i in range(10, 16)} <= set(grids), grids


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
def test_warmup_compiles_and_the_compiled_kernel_launches(target):
    from irscope.engine.toolchain import amdgcn_resources, cubin_resources
    from irscope.engine.triton_compat import compile_specialized, specialize

    result = run("virtual_gpu_warmup.py", target)
    assert result.error is None, result.user_traceback
    seen = result.namespace["SEEN"]
    assert seen["correct"] and seen["n_regs"] > 0 and seen["n_spills"] == 0
    warm, launched = result.launches
    assert warm.warmup and not launched.warmup
    assert launched.grid == (seen["programs"], 1, 1)
    assert launched.kwargs["PROGRAMS"] == 1, (
        "the compiled constexpr (PROGRAMS=1), not the one passed, as on a GPU"
    )
    # the launch compiles exactly as the warmup did, num_stages (a parameter and an option) included
    specs = [specialize(r.jit, r.args, r.kwargs, Target(target)) for r in (warm, launched)]
    assert specs[0].cache_key() == specs[1].cache_key() and specs[0].options.num_stages == 2
    # the same numbers from an independent compile of the captured launch (AMD: from the assembly text)
    compiled = compile_specialized(
        warm.jit, specialize(warm.jit, warm.args, warm.kwargs, Target(target)), Target(target)
    )
    resources = (
        cubin_resources(compiled.asm["cubin"], 0, 90)
        if target == "sm_90"
        else amdgcn_resources(compiled.asm["amdgcn"], 0)
    )
    assert resources.registers == seen["n_regs"] and compiled.metadata.shared == seen["shared"]


def test_a_kernel_warmed_up_then_launched_by_hand_is_shown_with_the_grid_it_ran_with():
    """The warmup's grid=(1,) compiles the binary; the launch by hand runs it on every SM: the compilation
    (what the analyses and measured mode take) stands for the launch, not the warmup."""
    from irscope.engine.session import open_file

    ws = open_file(
        fixture_path("virtual_gpu_warmup.py"), target="sm_90", run_main=True, compile_ahead=False
    )
    (comp,) = ws.compile(ws.kernels[0])
    launched = [la for la in ws.launches if not la.warmup]
    assert len(ws.launches) == 2 and len(launched) == 1
    assert comp.launch is launched[0] and comp.launch.grid[0] > 1


def test_with_a_gpu_nothing_is_faked(tmp_path):
    # use_interpreter=False is the GPU path: the file sees this machine's real torch
    path = tmp_path / "probe.py"
    path.write_text(
        "import torch\nAVAILABLE = torch.cuda.is_available()\ntry:\n"
        "    DEVICE = torch.zeros(1, device='cuda').device.type\nexcept Exception:\n    DEVICE = None\n"
    )
    result = run_user_file(
        read_user_file(str(path)), run_main=True, use_interpreter=False, target=Target("sm_90")
    )
    assert result.error is None, result.user_traceback
    real = torch.cuda.is_available()
    assert result.namespace["AVAILABLE"] == real and result.namespace["DEVICE"] == (
        "cuda" if real else None
    )


def test_with_a_gpu_a_files_benchmarks_capture_and_never_time(tmp_path):
    """On the GPU path too, do_bench runs its function once and returns NaN, and a perf_report's sweep runs as
    on the virtual GPU (its first point, then an exploration of the rest): timed for real, a report used the
    capture budget's quiet time, and the H100 run of tutorial 06 stopped inside its first benchmark with 140
    compilations not seen. (Here, with no GPU, Triton's own do_bench fails outright.)"""
    path = tmp_path / "report.py"
    path.write_text(
        "import triton.testing\n"
        "CALLS, RESULTS = [], []\n"
        "@triton.testing.perf_report(triton.testing.Benchmark(x_names=['n'], x_vals=[2 ** i for i in "
        "range(4, 12)], line_arg='p', line_vals=['a'], line_names=['a'], ylabel='ms', plot_name='r', "
        "args={}))\n"
        "def bench(n, p):\n"
        "    CALLS.append(n)\n"
        "    return triton.testing.do_bench(lambda: sum(range(n)))\n"
        "bench.run(print_data=True)\n"
        "RESULTS.append(triton.testing.do_bench(lambda: None, quantiles=[0.5, 0.2]))\n"
    )
    result = run_user_file(
        read_user_file(str(path)), run_main=True, use_interpreter=False, target=Target("sm_90")
    )
    assert result.error is None, result.user_traceback
    (pair,) = result.namespace["RESULTS"]
    assert len(pair) == 2 and all(math.isnan(v) for v in pair)
    # run_sweep's first point; the rest is explored only for lines that launched a kernel (none here)
    assert result.namespace["CALLS"] == [16]


def test_an_operator_a_library_registers_for_cuda_runs_its_triton_kernel_on_the_virtual_gpu(cli):
    """With a GPU, torch.neg on a CUDA tensor runs the library's registration; on the virtual GPU too
    (one launch, the CUDA tensor's), while a host tensor keeps torch's CPU kernel (no second launch)."""
    code, out, err = cli("report", fixture_path("cuda_operator.py"), "--json")
    assert code == 0, err
    (kernel,) = json.loads(out)["kernels"]
    assert kernel["name"] == "neg_kernel" and kernel["grid"] == [4, 1, 1]


def test_only_the_cuda_kernels_the_file_registers_are_routed_while_their_library_lives(tmp_path):
    """A CUDA build of torch has CUDA kernels of its own for every operator (they cannot run on CPU
    memory): only the registrations made by the file's libraries are routed, and only while the library
    that made them lives (flag-gems' use_gems() takes its registrations back on exit)."""
    torch_own = []
    # stands for a CUDA build's own kernel of aten::sin
    outside = torch.library.Library("aten", "IMPL")
    outside.impl("sin", lambda x: torch_own.append(x) or x, "CUDA")
    path = tmp_path / "registers.py"
    path.write_text(
        "import torch\n"
        "calls = []\n"
        "scoped = torch.library.Library('aten', 'IMPL')\n"
        "scoped.impl('abs', lambda x: calls.append('abs') or x.clone(), 'CUDA')\n"
        "x = torch.full((4,), -2.0, device='cuda')\n"
        "first = torch.abs(x)\n"
        "scoped._destroy()\n"
        "second = torch.abs(x)\n"
        "sine = torch.sin(x)\n"
    )
    try:
        result = run_user_file(
            read_user_file(str(path)), run_main=True, use_interpreter=True, target=Target("sm_90")
        )
    finally:
        outside._destroy()
    assert result.error is None, result.user_traceback
    ns = result.namespace
    # the library's kernel, once
    assert ns["calls"] == ["abs"] and torch.equal(ns["first"], ns["x"])
    assert torch.equal(ns["second"], torch.full((4,), 2.0))  # after the library is gone: torch's
    assert torch_own == [] and torch.allclose(ns["sine"], torch.sin(torch.full((4,), -2.0)))


def test_a_composite_operator_a_library_registers_for_cuda_is_routed_whole(tmp_path):
    """aten::rms_norm is a composite: on CPU tensors torch takes it apart before any dispatch mode sees it,
    while on a GPU the library's CUDA kernel replaces it (flag-gems' only_enable(["rms_norm"]))."""
    path = tmp_path / "composite.py"
    path.write_text(
        "import torch\n"
        "calls = []\n"
        "lib = torch.library.Library('aten', 'IMPL')\n"
        "lib.impl('rms_norm', lambda x, shape, w=None, eps=None: calls.append('rms_norm') or x * 2, 'CUDA')\n"
        "x = torch.ones(2, 8, device='cuda')\n"
        "gpu = torch.nn.functional.rms_norm(x, (8,))\n"
        "host = torch.nn.functional.rms_norm(torch.ones(2, 8), (8,))\n"
    )
    result = run_user_file(
        read_user_file(str(path)), run_main=True, use_interpreter=True, target=Target("sm_90")
    )
    assert result.error is None, result.user_traceback
    ns = result.namespace
    assert ns["calls"] == ["rms_norm"] and torch.equal(ns["gpu"], torch.full((2, 8), 2.0))
    assert torch.allclose(ns["host"], torch.ones(2, 8))  # torch's own, taken apart as usual
    ns["lib"]._destroy()
    # after the run: torch's autograd of rms_norm, untouched
    x = torch.ones(2, 8, requires_grad=True)
    torch.nn.functional.rms_norm(x, (8,)).sum().backward()
    assert x.grad is not None and ns["calls"] == ["rms_norm"]


def test_a_product_a_library_implements_for_cuda_gets_the_files_half_precision(tmp_path):
    """The virtual GPU computes a half-precision product in float32 (fast on a CPU); but where the file's
    library implements the product's operator for CUDA (FlagGems' mm), its Triton kernels on a GPU get the
    file's bf16 tensors and compile for them: so they do here, and a product it does not implement keeps
    the float32 route."""
    path = tmp_path / "library_mm.py"
    path.write_text(
        "import torch\n"
        "seen = []\n"
        "lib = torch.library.Library('aten', 'IMPL')\n"
        "lib.impl('mm', lambda a, b: seen.append((a.dtype, b.dtype)) or (a.float() @ b.float()).to(a.dtype), 'CUDA')\n"
        "a = torch.ones(4, 8, device='cuda', dtype=torch.bfloat16)\n"
        "b = torch.ones(8, 2, device='cuda', dtype=torch.bfloat16)\n"
        "out = torch.mm(a, b)\n"
        "batched = torch.bmm(a[None], b[None])\n"
        "lib._destroy()\n"
        "after = torch.mm(a, b)\n"
    )
    result = run_user_file(
        read_user_file(str(path)), run_main=True, use_interpreter=True, target=Target("sm_90")
    )
    assert result.error is None, result.user_traceback
    ns = result.namespace
    assert ns["seen"] == [(torch.bfloat16, torch.bfloat16)], (
        "the library's mm, with the file's dtype"
    )
    assert ns["out"].dtype == ns["batched"].dtype == ns["after"].dtype == torch.bfloat16
    assert torch.equal(ns["batched"][0].float(), torch.full((4, 2), 8.0))


def test_a_benchmarks_flush_runs_the_zero_kernel_a_library_implements_for_cuda():
    """On a GPU an autotuner's benchmark zeroes Triton's 256 MB buffer (to flush L2) with Tensor.zero_; where
    the file's library implements zero_ for CUDA (FlagGems under use_gems()), its kernel compiles for that
    buffer: captured here too (recorded, not interpreted), once, as no config of the autotuned kernel."""
    ws = open_file(fixture_path("benchmark_flush.py"), target="sm_90", compile_ahead=False)
    assert ws.run_warning is None, ws.run_warning
    zeroes = [la for la in ws.launches if la.kernel.name == "zero_kernel"]
    assert len(zeroes) == 1 and zeroes[0].autotune_index is None
    assert zeroes[0].grid == (256 * 1024 * 1024 // 4 // 1024, 1, 1)
    (comp,) = ws.compile(zeroes[0].kernel)
    assert comp.ok and comp.signature["out_ptr"] == "*i32"
    assert sorted(la.autotune_index for la in ws.launches if la.kernel.name == "double") == [0, 1]


def test_a_file_that_registers_no_cuda_operator_pays_nothing_for_the_route():
    """A torch dispatch mode makes torch import TorchDynamo (over a second); the route to a library's
    CUDA operators is pushed only when the file registers one."""
    import subprocess
    import sys

    from conftest import ROOT, kernel_path

    code = (
        "import sys; from irscope.engine.session import open_file; "
        f"open_file({kernel_path('add.py')!r}, target='sm_90', compile_ahead=False); "
        "print('torch._dynamo' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stderr[-2000:]


def test_a_compiled_kernel_launched_again_directly_runs_and_adds_no_compilation():
    # FlagGems keeps the kernel a launch returned and launches it with kernel[grid](*args): on a GPU the same
    # binary runs again, so irscope runs it in the interpreter (the file's check of its result passes) and
    # shows no second compilation.
    ws = open_file(fixture_path("relaunch_compiled.py"), target="sm_90", compile_ahead=False)
    assert ws.run_warning is None and ws.last_output == "relaunched", (
        ws.run_warning,
        ws.last_output,
    )
    assert len(ws.launches) == 1


def test_half_precision_products_on_the_virtual_gpu_are_computed_in_float32():
    # A file's fp16 reference (a @ b, F.linear, attention) took minutes in torch's CPU kernels; on the virtual
    # GPU it is computed in float32 and rounded back, as a GPU's matrix units accumulate. Host tensors are
    # computed as the file asked.
    import torch

    from irscope.engine.triton_compat import Target
    from irscope.engine.virtual_gpu.device import virtual_gpu
    from irscope.engine.virtual_gpu.tensors import _mark_host, _product_in_float32

    torch.manual_seed(0)
    a_host, b_host = (
        torch.randn(64, 96, dtype=torch.float16),
        torch.randn(96, 32, dtype=torch.float16),
    )
    seen = []

    def product(*args, **kwargs):
        seen.append(tuple(t.dtype for t in args))
        return torch.matmul(*args, **kwargs)

    assert _product_in_float32(product, (a_host, b_host), {}).dtype == torch.float16
    assert seen == [(torch.float32, torch.float32)]
    _mark_host(a_host), _mark_host(b_host)
    # tensors the file keeps on the host: as it asked
    _product_in_float32(product, (a_host, b_host), {})
    assert seen[-1] == (torch.float16, torch.float16)

    expected = (a_host.float() @ b_host.float()).half()
    with virtual_gpu(Target("sm_90")):
        a, b = a_host.cuda(), b_host.cuda()
        for result in (a @ b, torch.matmul(a, b), torch.nn.functional.linear(a, b.T), a.mm(b)):
            assert result.dtype == torch.float16 and result.is_cuda
            assert torch.allclose(result.cpu().float(), expected.float(), rtol=1e-3, atol=1e-2)
        out = torch.empty(64, 32, dtype=torch.float16, device="cuda")
        torch.matmul(a, b, out=out)  # into the file's own tensor: as torch computes it
    assert torch.allclose(out.float(), expected.float(), rtol=1e-3, atol=1e-2)


def test_a_sweep_reaches_every_power_of_two_of_its_range_early():
    # Tutorial 02's softmax sweeps N = 256 .. 12672 in steps of 128 and compiles one kernel per power of two of N
    # (its block size): a sweep cut short after 10 of its 98 points has still reached all seven.
    from irscope.engine.triton_compat.benchmark_sweep import sweep_order

    values = [128 * i for i in range(2, 100)]
    order = sweep_order(len(values), values)
    assert sorted(order) == list(range(len(values))) and order[:2] == [0, len(values) - 1]
    blocks = {1 << (values[i] - 1).bit_length() for i in order[:10]}
    assert blocks == {256, 512, 1024, 2048, 4096, 8192, 16384}, blocks
    assert sorted(sweep_order(5, ["a", "b", "c", "d", "e"])) == [
        0,
        1,
        2,
        3,
        4,
    ]  # not numbers: by position


def test_a_librarys_tuning_cache_is_the_runs_own_while_the_virtual_gpu_runs(monkeypatch, tmp_path):
    """FlagGems keeps the configs its tuner chose under FLAGGEMS_CACHE_DIR, keyed by the GPU's name: choices
    made from the virtual device's timings must not reach a later run on a real GPU of that name."""
    mine = tmp_path / "my-flaggems-cache"
    monkeypatch.setenv("FLAGGEMS_CACHE_DIR", str(mine))
    with virtual_gpu(Target("sm_90")):
        during = os.environ["FLAGGEMS_CACHE_DIR"]
        assert during != str(mine) and not during.startswith(str(tmp_path))
        os.makedirs(os.path.join(during, "config_cache"))  # as the library's tuner does
    assert os.environ["FLAGGEMS_CACHE_DIR"] == str(mine)
    assert not os.path.exists(during) and not mine.exists()


def test_a_sweeps_random_float_inputs_are_zeros_and_everything_else_is_real():
    """A benchmark sweep records its launches and runs none, so the random floats it makes are never read:
    zeros there (seconds a point on the CPU), real random numbers outside it, integer fills real in both."""
    seen = []

    def made():
        return {
            "randn": torch.randn(64, 64, device="cuda", generator=None),
            "rand_like": torch.rand_like(torch.ones(8, device="cuda")),
            "normal_": torch.empty(16, device="cuda").normal_(),
            "uniform_": torch.empty(16, device="cuda").uniform_(-1, 1),
            "randint": torch.randint(1, 100, (64,), device="cuda"),
        }

    @triton.testing.perf_report(
        triton.testing.Benchmark(
            x_names=["n"],
            x_vals=[64],
            line_arg="provider",
            line_vals=["torch"],
            line_names=["torch"],
            ylabel="ms",
            plot_name="fills",
            args={},
        )
    )
    def bench(n, provider):
        seen.append(made())
        return triton.testing.do_bench(lambda: None)

    with virtual_gpu(Target("sm_90")):
        outside = made()
        bench.run(print_data=False)
    assert len(seen) == 1
    for name in ("randn", "rand_like", "normal_", "uniform_"):
        assert seen[0][name].count_nonzero() == 0, name
        assert outside[name].count_nonzero() > 0, name
    assert seen[0]["randint"].min() >= 1 and outside["randint"].min() >= 1
    assert seen[0]["randn"].shape == (64, 64) and seen[0]["randn"].device.type == "cpu"


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_gpu_sized_random_fill_is_fresh_memory_said_in_one_note_and_a_small_one_is_torchs_own():
    """Gluon tutorial 02 fills five 8 GB inputs with `torch.randn` for its bandwidth sweep: half a minute and
    8 GB each on this CPU, where the launches need none of the values. From 2^26 elements a fill is fresh
    memory: zeros, held only where written; smaller fills draw the same numbers as torch does without irscope."""
    notes: list[str] = []
    torch.manual_seed(0)
    expected = torch.randn(4, 5)
    with virtual_gpu(Target("sm_90"), notes=notes):
        torch.manual_seed(0)
        small = torch.randn(4, 5, device="cuda")
        before = _resident_bytes()
        big = torch.randn(1 << 28, device="cuda")  # 1 GiB of float32
        like = torch.rand_like(big[:1000], dtype=torch.float16)  # filled
        half = torch.randn(1 << 26, dtype=torch.float16, device="cuda")  # 128 MiB, 2^26 elements
        host = torch.randn(1 << 26, dtype=torch.float16)  # the file's own CPU work: filled
        big.normal_()  # in place: left as it is
        held = _resident_bytes() - before
        assert big.is_cuda and big.shape == (1 << 28,) and big.dtype == torch.float32
        assert big[:: 1 << 20].count_nonzero() == 0 and big[-1] == 0
        assert like.count_nonzero() > 0 and half[:: 1 << 20].count_nonzero() == 0
        assert host[:: 1 << 20].count_nonzero() > 0
    assert torch.equal(small, expected)
    assert held < (128 + 64) << 20  # the host's 128 MiB; a filled gigabyte would be held whole
    assert notes == [
        "the virtual GPU left 3 random fills of 2^26 elements or more unfilled (2.1 GiB in all): on this CPU they "
        "take longer and more memory than the launches need; their values read as zeros, in the "
        "interpreter and in the file's own checks"
    ]


def test_a_vendor_blas_product_is_computed_unless_a_benchmark_times_it():
    """A cuBLAS baseline is computed on the CPU (a file may check its kernel against it), except inside a
    benchmark, which discards what it writes: Gluon tutorial 07's baselines over K up to 16384 took the CPU
    long enough for the capture to stop before its later launches."""
    from triton._C.libtriton import nvidia

    notes: list[str] = []
    with virtual_gpu(Target("sm_90"), notes=notes):
        blas = nvidia.cublas.CublasLt(torch.empty(1024, dtype=torch.uint8, device="cuda"))
        a, b = torch.ones(4, 8, device="cuda"), torch.ones(2, 8, device="cuda")
        checked, timed = torch.zeros(4, 2, device="cuda"), torch.zeros(4, 2, device="cuda")
        blas.matmul(a, b, checked)
        assert math.isnan(triton.testing.do_bench(lambda: blas.matmul(a, b, timed)))
    assert torch.equal(checked, torch.full((4, 2), 8.0)) and timed.count_nonzero() == 0
    assert notes == [
        "1 vendor-BLAS product(s) (cuBLAS / hipBLASLt) timed by a benchmark were not computed on the "
        "virtual GPU: the benchmark discards what they write, and their outputs were left as they were"
    ]


def test_a_gpu_sized_matrix_product_is_left_uncomputed_with_its_shape_gradients_and_one_note():
    """Tutorial 10 computes its reference as an 8192^3 float32 product (25 s here); a cross-entropy
    benchmark's projections of 8192 x 2048 x 65536, forward and backward, took its whole minute before its first
    launch. From 2^36 operations a product on the virtual GPU is fresh memory of its result's shape and dtype;
    a smaller one, or one of host tensors, is computed."""
    notes: list[str] = []
    with virtual_gpu(Target("sm_90"), notes=notes):
        a = torch.ones(4096, 2048, device="cuda")
        w = torch.ones(
            4096, 2048, device="cuda", requires_grad=True
        )  # 2 x 4096 x 4096 x 2048 = 2^36
        before = _resident_bytes()
        big = torch.nn.functional.linear(a, w)
        big.sum().backward()
        held = _resident_bytes() - before
        assert big.shape == (4096, 4096) and big.dtype == torch.float32 and big.is_cuda
        assert big.requires_grad and big[::512, ::512].count_nonzero() == 0
        assert w.grad.shape == w.shape and w.grad[::512].count_nonzero() == 0
        halves = torch.ones(2, 4096, 4096, dtype=torch.float16, device="cuda")
        assert (
            torch.bmm(halves, halves).dtype == torch.float16
        )  # 2^38: uncomputed, the file's dtype
        small = torch.ones(64, 2048, device="cuda") @ torch.ones(2048, 4096, device="cuda")  # 2^30
        assert torch.equal(small, torch.full((64, 4096), 2048.0))
        host = torch.ones(4096, 2048) @ torch.ones(
            2048, 4096
        )  # 2^36 in host memory: the file's own
        assert host[0, 0] == 2048.0
    assert (
        held < 100 << 20
    )  # a computed 64 MiB result, its gradient and the product's buffers would be held
    assert notes == [
        "the virtual GPU left 2 matrix products of 2^36 floating-point operations or more uncomputed (0.3 TFLOP "
        "in all; this CPU takes seconds for each, a GPU milliseconds): their results read as zeros, and the "
        "file's result comparisons after them pass without comparing"
    ]


def test_a_files_check_after_an_uncomputed_product_passes_and_the_run_goes_on(tmp_path):
    """A reference left uncomputed differs from the kernel's result: the comparison is passed, as after a
    launch cut short, so that the launches after it are still reached."""
    path = tmp_path / "reference_first.py"
    path.write_text(
        "import torch, triton, triton.language as tl\n"
        "@triton.jit\n"
        "def fill(x, v, B: tl.constexpr):\n"
        "    tl.store(x + tl.arange(0, B), v)\n"
        "a = torch.ones(8192, 8192, device='cuda')\n"
        "reference = a @ a\n"
        "out = torch.empty(16, device='cuda')\n"
        "fill[(1,)](out, 1.0, B=16)\n"
        "torch.testing.assert_close(reference[0, :16], out)\n"
        "fill[(1,)](out, 2.0, B=16)\n"
    )
    result = run_user_file(
        read_user_file(str(path)), run_main=True, use_interpreter=True, target=Target("sm_90")
    )
    assert result.error is None and len(result.launches) == 2
    assert any("1 result comparison(s)" in note for note in result.notes)


def test_torch_work_on_gpu_sized_tensors_runs_outside_the_capture_quiet_time():
    """What the capture budget's `quiet_not_counted` is given: operations on a tensor of 2^24 elements or more
    on the virtual GPU, not smaller ones, nor host tensors."""
    import contextlib

    entered: list[int] = []

    @contextlib.contextmanager
    def untimed():
        entered.append(1)
        yield

    with virtual_gpu(Target("sm_90"), untimed=untimed):
        big = torch.zeros(1 << 24, device="cuda")
        small = torch.zeros(1 << 10, device="cuda")
        host = torch.zeros(1 << 24)
        entered.clear()
        assert float((big + 1).sum()) == 1 << 24  # the add: the sum's input is big too
        assert len(entered) == 2
        small * 2
        host * 2
        assert len(entered) == 2


def test_code_a_library_generates_in_its_cache_stays_readable_after_the_run():
    """FlagGems writes its pointwise kernels' code under its cache folder, which the run gets a temporary one
    of (tuning_caches.py): removed at the end of the run, and irscope's reproducer of such a kernel ended in
    an internal error ("could not get source code")."""
    import importlib.util
    import inspect

    from irscope.engine.virtual_gpu.tuning_caches import tuning_caches_aside

    with tuning_caches_aside():
        folder = os.path.join(os.environ["FLAGGEMS_CACHE_DIR"], "code_cache")
        os.makedirs(folder)
        path = os.path.join(folder, "generated_kernel.py")
        with open(path, "w") as f:
            f.write("def generated(x):\n    return x + 1\n")
        spec = importlib.util.spec_from_file_location("generated_kernel", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    assert not os.path.exists(path)
    assert inspect.getsource(module.generated) == "def generated(x):\n    return x + 1\n"
