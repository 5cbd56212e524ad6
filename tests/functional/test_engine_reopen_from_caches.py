"""What a reopen of a file (warm caches) reads back instead of computing again: the register and memory
numbers of `cuobjdump -res-usage`, cached beside the SASS text, keyed by the cubin. Real compiler output."""

import os

import pytest
from conftest import KERNELS

from irscope.engine import toolchain
from irscope.engine.session import open_file


@pytest.fixture
def compiled_add(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-cache"))
    ws = open_file(os.path.join(KERNELS, "add.py"), target="sm_90", compile_ahead=False)
    (comp,) = ws.compile(ws.kernels[0])
    assert comp.ok, comp.failure
    return comp


def test_resources_come_from_cuobjdump_once_and_then_from_the_cache(compiled_add):
    cubin = compiled_add.asm["cubin"]
    cached = toolchain._cache_path("res", cubin)
    assert not os.path.exists(cached)
    first = toolchain.cubin_resources(cubin, 0, 90)
    assert first.registers and first.registers > 0 and first.spills == 0
    with open(cached, encoding="utf-8") as f:
        text = f.read()
    assert f"REG:{first.registers} " in text  # cuobjdump's own output, as it printed it
    assert toolchain.cubin_resources(cubin, 0, 90) == first
    # The second reading is the file's: a count changed in it shows through (no cuobjdump ran again).
    with open(cached, "w", encoding="utf-8") as f:
        f.write(text.replace(f"REG:{first.registers} ", "REG:200 "))
    assert toolchain.cubin_resources(cubin, 0, 90).registers == 200
