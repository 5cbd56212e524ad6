"""irscope on a GPU records the launches of Inductor's real CachingAutotuners (engine/inductor/kernels.py).

A GPU host has cores to spare, so Inductor compiles in a pool of worker processes: the worker makes the
autotuner, compiles it, drops its Python function and pickles it back; in irscope's process `__init__` never
ran. Run on an H200, irscope captured none of kernels/compiled_block.py's launches that way
(validation/data/h200_repro/repro5). Here the pickle trip is Inductor's own (`prepare_for_pickle`,
`restore_after_unpickle`, the `_reload_kernel` its precompile keeps); only the GPU launch is missing, so
Inductor's own run fails after irscope has recorded the launch."""

import pickle

import pytest
from conftest import fixture_path
from torch._inductor.codecache import PyCodeCache
from torch._inductor.runtime import triton_helpers

from irscope.engine.inductor.kernels import inductor_capture, inductor_kernel_in

NAME = "triton_per_fused_gelu_native_layer_norm_0"


@pytest.fixture
def kernel_source(monkeypatch):
    # the module asks for the GPU's Triton driver, which a machine without a GPU has not
    monkeypatch.setattr(triton_helpers, "set_driver_to_gpu", lambda: None)
    path = fixture_path("inductor/h100_t211_per_fused_gelu_native_layer_norm_0.py")
    yield open(path, encoding="utf-8").read()
    PyCodeCache.cache_clear()


def _load(source: str):
    return getattr(PyCodeCache.load(source), NAME)


def _run_on_no_gpu(autotuner) -> None:
    with pytest.raises(Exception):  # noqa: B017 - Inductor's own launch, after irscope's record
        autotuner.run(1, 2, 3, 4, stream=0)


def test_an_autotuner_a_compile_worker_pickled_back_is_recorded_at_its_first_run(kernel_source):
    worker_side = _load(kernel_source)  # made in the worker: no irscope there
    worker_side.prepare_for_pickle()
    sent = pickle.dumps(worker_side)
    PyCodeCache.cache_clear()  # the parent has not loaded the module
    records = []
    with inductor_capture(records.append, None, virtual=False):
        parent_side = pickle.loads(sent)
        parent_side.restore_after_unpickle(old_values=None)
        parent_side._reload_kernel = lambda: _load(kernel_source)  # as its precompile keeps it
        assert parent_side.fn.fn is None
        _run_on_no_gpu(parent_side)
        _run_on_no_gpu(parent_side)
        kernel = inductor_kernel_in(parent_side)  # what discovery reads from the wrapper module
    assert len(records) == 2
    assert {record.jit.fn.__name__ for record in records} == {NAME}
    assert records[0].jit is records[1].jit  # described once, at the first run
    assert records[0].args == (1, 2, 3, 4)
    assert kernel is not None and kernel.fn is records[0].jit


def test_an_autotuner_made_in_this_process_is_described_when_made(kernel_source):
    records = []
    with inductor_capture(records.append, None, virtual=False):
        autotuner = _load(kernel_source)
        kernel = inductor_kernel_in(autotuner)
        assert kernel is not None and kernel.name == NAME
        assert kernel.heuristic_type == "persistent_reduction"
        _run_on_no_gpu(autotuner)
    assert [record.jit for record in records] == [kernel.fn]


def test_an_autotuner_from_inductors_on_disk_cache_is_described_afresh(kernel_source):
    """Inductor pickles its autotuners into its caches on disk (the FX graph cache), with their functions
    dropped. A description irscope kept on the autotuner went into that pickle and came back in the next
    run with no function: a GPU run with a warm cache ended in an internal error (H200, 2026-11-29)."""
    first_run = []
    with inductor_capture(first_run.append, None, virtual=False):
        autotuner = _load(kernel_source)
        kept = autotuner.prepare_for_pickle()
        cached = pickle.dumps(autotuner)  # what the cache on disk holds
        autotuner.restore_after_unpickle(kept)
    PyCodeCache.cache_clear()
    next_run = []
    with inductor_capture(next_run.append, None, virtual=False):
        from_cache = pickle.loads(cached)
        from_cache.restore_after_unpickle(old_values=None)
        from_cache._reload_kernel = lambda: _load(kernel_source)
        _run_on_no_gpu(from_cache)
    (record,) = next_run
    assert record.jit.fn is not None and record.jit.fn.__name__ == NAME


def test_a_config_from_inductors_autotune_cache_is_said(monkeypatch, tmp_path):
    """With a warm cache Inductor hands its autotuner only the config an earlier run's timing chose, and a GPU
    run launches that one alone: on an H200 irscope showed 1 of compiled_block's 3 configs per kernel, as
    Inductor launched, and said nothing of the others (validation/data/h200_held_memory)."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(triton_helpers, "set_driver_to_gpu", lambda: None)
    source = open(
        fixture_path("inductor/h100_t211_per_fused_native_layer_norm_0.py"), encoding="utf-8"
    ).read()
    name = "triton_per_fused_native_layer_norm_0"
    notes: list[str] = []
    with inductor_capture(lambda launch: None, None, virtual=False, notes=notes):
        first = getattr(PyCodeCache.load(source), name)
        assert len(inductor_kernel_in(first).configs) == 3
        first.save_cache_hook(first.configs[2], 1.0)  # what Inductor writes after its timing
    assert notes == []
    PyCodeCache.cache_clear()
    with inductor_capture(lambda launch: None, None, virtual=False, notes=notes):
        warm = getattr(PyCodeCache.load(source), name)
        kernel = inductor_kernel_in(warm)
    PyCodeCache.cache_clear()
    assert [config.kwargs for config in kernel.configs] == [first.configs[2].kwargs]
    (said,) = notes
    assert "autotune cache" in said and name in said and "TORCHINDUCTOR_CACHE_DIR" in said
