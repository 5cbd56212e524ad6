"""Inductor files written on an NVIDIA H100 (tests/fixtures/inductor/h100_t211_*: PyTorch 2.11.0+cu130,
Triton 3.6.0, by validation/gpu_inductor.py), opened here with no GPU, against what that GPU compiled
(h100_t211_driver.json: every triton.compile Inductor made there, with the driver's register counts).

The transformer block's wrapper calls `aten._scaled_dot_product_efficient_attention`, which torch has only for
CUDA: its kernels after that call are captured through the virtual GPU's stand-in (engine/virtual_gpu/aten.py).
Inductor compiles with torch's own ptxas where the torch wheel has one (engine/inductor/ptxas.py); where it
has none, the report says that its PTX and SASS may differ."""

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, fixture_path, kernel_path, run_irscope

from irscope.base.names import NVIDIA_STAGES
from irscope.engine.triton_compat import TRITON_VERSION

DRIVER = json.load(open(fixture_path("inductor/h100_t211_driver.json"), encoding="utf-8"))[
    "compilations"
]


def _h100(name):
    return fixture_path(os.path.join("inductor", name))


def _key(name, constexprs, warps, stages):
    return name, tuple(sorted((k, str(v)) for k, v in constexprs.items())), warps, stages


@pytest.mark.parametrize(
    "wrapper", ["h100_t211_block_output_code.py", "h100_t211_layernorm_gelu_output_code.py"]
)
def test_an_h100_wrapper_gives_every_compilation_inductor_made_there(wrapper, tmp_path):
    """Run as a user runs it (the front end and its worker, from another folder)."""
    done = run_irscope("report", _h100(wrapper), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    doc = json.loads(done.stdout)
    assert "warning" not in doc
    real = {
        _key(r["name"], r["constexprs"], r["num_warps"], r["num_stages"]): r
        for r in DRIVER
        if r["wrapper"] == wrapper
    }
    seen = {}
    for k in doc["kernels"]:
        assert k["launch"] == "captured" and k["error"] is None, k["name"]
        assert all(k["stages"][s]["lines"] > 0 for s in NVIDIA_STAGES)
        config = k["inductor"]["config"]
        seen[_key(k["name"], config["kwargs"], k["num_warps"], k["num_stages"])] = k
        # the kernel's module, where the report points, is still there after the run
        assert os.path.isfile(os.path.join(tmp_path, k["file"])), k["file"]
    # the block: 4 kernels, 10 configs, 3 of them after the attention call
    assert set(seen) == set(real)
    if TRITON_VERSION.startswith("3.6"):  # the H100's Triton: the same code, so the same registers
        assert {key: k["registers"] for key, k in seen.items()} == {
            key: r["n_regs"] for key, r in real.items()
        }


def test_the_attention_call_is_the_one_the_wrapper_makes_before_its_last_three_kernels():
    text = open(_h100("h100_t211_block_output_code.py"), encoding="utf-8").read()
    call = text.index("torch.ops.aten._scaled_dot_product_efficient_attention.default(")
    after = set(re.findall(r"(triton_\w+)\.run\(", text[call:]))
    assert after == {
        "triton_per_fused_add_addmm_native_layer_norm_view_1",
        "triton_poi_fused_addmm_gelu_view_2",
        "triton_poi_fused_add_addmm_view_3",
    }


def test_the_h100s_ptxas_wrote_ptx_9_0():
    """What the note below is about: torch 2.11+cu130's ptxas (CUDA 13.0) made Triton 3.6 write PTX 9.0, where
    Triton 3.6's own ptxas (CUDA 12.8) writes 8.7."""
    assert {r["ptx_version"] for r in DRIVER} == {"9.0"}


def test_the_report_says_when_its_ptxas_is_not_the_one_inductor_would_use(cli):
    from irscope.base.target import Target
    from irscope.engine.inductor.ptxas import NOTE, torch_ptxas
    from irscope.worker.serve import inductor_view

    wrapper = _h100("h100_t211_layernorm_gelu_output_code.py")
    cpu_torch = torch_ptxas() is None and not os.environ.get("TRITON_PTXAS_PATH")
    # Triton 3.6 and 3.9 both read TRITON_PTXAS_PATH for sm_80 and another variable for sm_100
    for target, reads in (("sm_80", True), ("sm_100", False)):
        code, out, err = cli("report", wrapper, "--json", "--target", target)
        assert code == 0, err
        doc = json.loads(out)
        expected = NOTE if cpu_torch and reads else None
        assert [k["inductor"]["ptxas_note"] for k in doc["kernels"]] == [expected]
        assert (NOTE in doc["notes"]) == (expected is not None)
        # the TUI's info row
        assert inductor_view({"aten_ops": []}, Target(target))["ptxas_note"] == expected


def test_a_ptxas_path_set_after_a_compile_is_what_the_next_compile_uses(tmp_path):
    """The ptxas version Triton memoized is part of its cache key: a path set later must not get the earlier
    ptxas' compile back from the cache (triton_compat/ptxas.py)."""
    other = os.path.join(
        os.path.dirname(__import__("triton").__file__),
        "backends",
        "nvidia",
        "bin",
        "ptxas-blackwell",
    )
    script = f"""
import os, re
from irscope.engine.session import open_file
from irscope.engine.triton_compat import ptxas

def version():
    comp = open_file({kernel_path("add.py")!r}, target="sm_80").compile_all()[0]
    return re.search(r"^\\.version (\\S+)", comp.stage("ptx"), re.M).group(1)

first = version()
os.environ["TRITON_PTXAS_PATH"] = {other!r}
ptxas.path_changed()
print(first, version())
"""
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": ROOT}
    env.pop("TRITON_PTXAS_PATH", None)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.split()
    release = re.search(
        r"release (\d+)\.(\d+)",
        subprocess.run([other, "--version"], capture_output=True, text=True).stdout,
    ).groups()
    # Triton's rule: CUDA 12.x writes PTX 8.(x-1) from 12.6 on
    major, minor = (
        int(release[0]),
        int(release[1]),
    )
    assert second == (f"9.{minor}" if major == 13 else f"8.{minor - 1}") and first != second
