"""Inductor's kernels while a file runs: the decorators record instead of compiling for a device.

Every `triton_heuristics` decorator (pointwise, reduction, persistent_reduction, template, user_autotune,
foreach, split_scan, ...) ends in `cached_autotune(size_hints, configs, triton_meta, heuristic_type, ...)`,
which would build a `CachingAutotuner` and, on first use, compile each config for the device at hand. Under
irscope it returns an `InductorKernel` that keeps what it was given: the configs Inductor's own heuristics
chose for the `size_hints` and device properties written in the module. A wrapper's `kernel.run(...)`
records the launch once per config (as an autotuner would compile each) and runs nothing: the outputs of
Inductor's kernels are left unwritten, which the report says. The ptxas they are compiled with is the one
Inductor would use (ptxas.py).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch

from irscope.engine.inductor.ptxas import use_inductors_ptxas
from irscope.engine.patching import Patches
from irscope.engine.triton_compat import JITFunction, RawLaunch
from irscope.engine.triton_compat.capture import exploring_now

# The kernel objects made in this process, by their JITFunction: discovery and compile read them.
_by_jit: dict[int, "InductorKernel"] = {}
# A real CachingAutotuner's description, beside it rather than in it: Inductor pickles its autotuners into
# its on-disk caches, and a description stored on one came back in the next run with a function it no longer
# had (a GPU run with a warm cache ended in an internal error)
_descriptions: "weakref.WeakKeyDictionary[Any, InductorKernel]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()
_recorders: list[Callable[[RawLaunch], None]] = []  # the capture in progress, innermost last


@dataclass
class InductorKernel:
    """One Inductor kernel as its decorator described it (see the module's docstring)."""

    fn: JITFunction
    configs: list[Any]  # triton.Config objects, in Inductor's order
    triton_meta: dict
    inductor_meta: dict
    heuristic_type: str  # "pointwise", "reduction", "persistent_reduction", "template", ...
    size_hints: Any
    device_str: str = ""  # from async_compile.triton(..., device_str=...), when a wrapper loaded it
    wrapper: str | None = None  # the wrapper file that held this kernel as a string
    # on a GPU: Inductor's autotune cache gave it the config an earlier run's timing chose, its only config
    cached_choice: bool = False

    @property
    def name(self) -> str:
        return self.fn.fn.__name__

    @property
    def generated_for(self) -> str:
        """The device type Inductor generated this kernel for ('cuda', 'hip', 'cpu', ...)."""
        device = self.triton_meta.get("device")
        kind = (
            getattr(device, "type", None) or self.triton_meta.get("device_type") or self.device_str
        )
        return str(kind or "")

    # What the wrapper's call() uses of a CachingAutotuner.
    def run(self, *args: Any, stream: Any = None, **kwargs: Any) -> None:
        self.record_launch(args, kwargs)
        return None

    def record_launch(self, args: tuple, kwargs: dict) -> None:
        # Into the capture in progress (a module Inductor's code cache kept from an earlier run included)
        record = _recorders[-1] if _recorders else None
        if record is None:
            return
        count = len(self.configs) or 1
        for index in range(count):
            grid = kwargs.get("grid") or self.grid(
                args, self.configs[index] if self.configs else None
            )
            record(
                RawLaunch(
                    self.fn,
                    tuple(args),
                    {},
                    grid,
                    index if self.configs else None,
                    count if self.configs else None,
                    list(self.configs) or None,
                    autotune_first=index == 0,
                    explored=exploring_now(),
                )
            )

    def grid(self, args: tuple, config: Any) -> tuple[int, int, int] | None:
        """The grid Inductor launches this config with: its grid_type (Grid1D, Grid2D, ...) evaluated on
        the launch's sizes and the config's blocks, by the installed torch's own GridExpr (None before
        PyTorch had one, or for a grid it cannot evaluate here)."""
        try:
            from torch._inductor.runtime.triton_heuristics import GridExpr, config_to_dict

            meta = {**dict(zip(self.fn.arg_names, args)), **config_to_dict(config)}
            expr = GridExpr.from_meta(self.inductor_meta, config)
            return tuple(int(g) for g in expr.eval_slow(meta))
        except Exception:  # noqa: BLE001 - shown as unknown, as for any grid irscope cannot evaluate
            return None

    def precompile(self, *args: Any, **kwargs: Any) -> None:
        return None

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        return self.run(*args, **kwargs)


def inductor_kernel_of(jit: Any) -> InductorKernel | None:
    """The Inductor kernel whose @triton.jit function this is, if Inductor's decorator made one."""
    return _by_jit.get(id(jit))


def inductor_kernel_in(value: Any) -> InductorKernel | None:
    """A module attribute that is an Inductor kernel object: as the decorators make them on the virtual GPU,
    or a real CachingAutotuner on a GPU (its description in `_descriptions`)."""
    if isinstance(value, InductorKernel):
        return value
    if not getattr(type(value), "_irscope_records", False):
        return None
    with contextlib.suppress(TypeError):  # an object no weak reference can point to
        return _descriptions.get(value)
    return None


_HEURISTIC_NAMES = {
    "POINTWISE": "pointwise",
    "REDUCTION": "reduction",
    "PERSISTENT_REDUCTION": "persistent_reduction",
    "TEMPLATE": "template",
    "USER_AUTOTUNE": "user_autotune",
    "SPLIT_SCAN": "split_scan",
    "FIXED": "fixed",
}


def _heuristic_name(kind: Any) -> str:
    name = getattr(kind, "name", None) or str(kind)
    return _HEURISTIC_NAMES.get(name, name.lower())


def _as_inductor_prunes(
    module, configs: list, size_hints: Any, heuristic_type: Any, inductor_meta: dict
) -> list:
    """The configs cached_autotune goes on with: a reduction's block minimums raised, duplicates dropped
    (Inductor's own functions, where the installed torch has them). Its autotune cache is not read: a
    config a past GPU run picked is no part of the file."""
    enforce = getattr(module, "_enforce_reduction_config_block_minimums", None)
    if (
        enforce is not None
        and size_hints is not None
        and _heuristic_name(heuristic_type) in ("reduction", "persistent_reduction")
    ):
        configs = enforce(configs, size_hints, inductor_meta)
    unique = getattr(module, "unique_configs", None)
    return list(unique(configs)) if unique is not None else configs


@contextlib.contextmanager
def inductor_capture(
    record: Callable[[RawLaunch], None],
    wrapper_path: str | None,
    virtual: bool = True,
    notes: list[str] | None = None,
) -> Iterator[None]:
    """While the block runs, Inductor's decorators make InductorKernels that report their launches to
    `record`, `async_compile.triton(...)` loads a kernel module without compiling it, and the CUDA-only
    helpers a GPU-written wrapper imports from torch._C have CPU stand-ins (the virtual GPU's tensors).
    On a GPU (`virtual` false) Inductor's own autotuners are described instead; `notes` hears of kernels
    whose config came from Inductor's autotune cache."""
    from torch._inductor.runtime import triton_helpers, triton_heuristics

    patches = Patches()

    def cached_autotune(
        size_hints,
        configs,
        triton_meta,
        heuristic_type,
        filename=None,
        inductor_meta=None,
        custom_kernel=False,
        **_ignored,
    ):
        inductor_meta = dict(inductor_meta or {})
        use_inductors_ptxas()  # as Inductor does before it compiles a kernel (ptxas.py)
        configs = _as_inductor_prunes(
            triton_heuristics, list(configs), size_hints, heuristic_type, inductor_meta
        )

        def decorator(fn):
            if not isinstance(fn, JITFunction):
                return fn
            # as Inductor does: no XBLOCK parameter, no XBLOCK in a config
            if "XBLOCK" not in fn.arg_names:
                for config in configs:
                    config.kwargs.pop("XBLOCK", None)
            kernel = InductorKernel(
                fn,
                configs,
                dict(triton_meta),
                inductor_meta,
                _heuristic_name(heuristic_type),
                size_hints,
            )
            with _lock:
                _by_jit[id(fn)] = kernel
            return kernel

        return decorator

    if virtual:
        patches.patch(triton_heuristics, "cached_autotune", cached_autotune)
        # The kernel module picks Triton's driver for the device it was written for; irscope's is already active.
        patches.patch(triton_helpers, "set_driver_to_gpu", lambda: None)
        patches.patch(triton_helpers, "set_driver_to_cpu", lambda: None)
        _patch_async_compile(patches, wrapper_path)
        _patch_cuda_only_helpers(patches)
    else:
        _record_real_autotuners(patches, triton_heuristics.CachingAutotuner)
    _recorders.append(record)
    with _lock:
        described_before = set(_by_jit)
    try:
        yield
    finally:
        _recorders.pop()
        patches.restore()
        with _lock:
            described = [kernel for key, kernel in _by_jit.items() if key not in described_before]
        said = _cached_choice_note(described)
        if said and notes is not None:
            notes.append(said)


def _cached_choice_note(kernels: list[InductorKernel]) -> str | None:
    """One line for the kernels whose config came from Inductor's autotune cache: a GPU run with that cache
    launches (and compiles) only the config an earlier run's timing chose, so irscope shows that one."""
    names = sorted({kernel.name for kernel in kernels if kernel.cached_choice})
    if not names:
        return None
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (
        f"torch.compile: Inductor's autotune cache held the config an earlier run's timing chose for "
        f"{len(names)} kernel{'s' if len(names) > 1 else ''} ({shown}); Inductor launches that config "
        "alone, and irscope shows it; to see every config Inductor would try, run with a fresh cache "
        "(TORCHINDUCTOR_CACHE_DIR set to an empty folder)"
    )


def _record_real_autotuners(patches: Patches, autotuner_class: type) -> None:
    """On a real GPU Inductor compiles and runs its kernels itself; each CachingAutotuner it makes is
    described (configs after its own pruning, triton_meta, inductor_meta) and each launch recorded before
    it runs. An autotuner a pool of compile workers made arrives here pickled, without its function and
    without passing `__init__` in this process: it is described at its first run (`_described`)."""
    original_init, original_run = autotuner_class.__init__, autotuner_class.run

    def __init__(self, fn, *args: Any, **kwargs: Any) -> None:
        original_init(self, fn, *args, **kwargs)
        if isinstance(getattr(self, "fn", None), JITFunction):
            _descriptions[self] = _description(self)

    def run(self, *args: Any, **kwargs: Any):
        kernel = _described(self)
        if kernel is not None:
            kernel.record_launch(args, kwargs)
        # Inductor's own compiles set this in the process that compiles: with a pool of compile workers, not
        # this one, where irscope compiles the kernel again (and where a lazy precompile happens just below)
        use_inductors_ptxas()
        return original_run(self, *args, **kwargs)

    patches.patch(autotuner_class, "__init__", __init__)
    patches.patch(autotuner_class, "run", run)
    patches.patch(autotuner_class, "_irscope_records", True)


def _description(autotuner: Any) -> InductorKernel:
    """An InductorKernel for a CachingAutotuner made in this process (its function intact)."""
    configs = getattr(autotuner, "configs", None) or []
    cache_info = getattr(autotuner, "autotune_cache_info", None) or {}
    kernel = InductorKernel(
        autotuner.fn,
        list(configs),
        dict(getattr(autotuner, "triton_meta", {}) or {}),
        dict(getattr(autotuner, "inductor_meta", {}) or {}),
        _heuristic_name(getattr(autotuner, "heuristic_type", "")),
        getattr(autotuner, "size_hints", None),
        cached_choice=cache_info.get("autotune_cache_state") == "hit",
    )
    with _lock:
        _by_jit[id(autotuner.fn)] = kernel
    return kernel


def _described(autotuner: Any) -> InductorKernel | None:
    """The autotuner's InductorKernel, made now for one a compile worker pickled back to this process.

    Inductor compiles in a pool of worker processes when the machine has cores to spare (a GPU host does;
    `compile_threads` > 1): the worker makes the CachingAutotuner, compiles it, drops its Python function
    (`prepare_for_pickle`) and sends it back, so `__init__` never ran here and `fn.fn` is None. Inductor
    keeps the way back to the function, `_reload_kernel` (it loads the kernel's module again in this
    process); the autotuner that load makes passes the patched `__init__` and is described as any other."""
    kernel = _descriptions.get(autotuner)
    if kernel is not None and kernel.fn.fn is not None:
        return kernel
    fn = getattr(autotuner, "fn", None)
    if isinstance(fn, JITFunction) and getattr(fn, "fn", None) is not None:
        kernel = _description(autotuner)
    else:
        reload = getattr(autotuner, "_reload_kernel", None)
        reloaded = reload() if callable(reload) else None
        kernel = _descriptions.get(reloaded) if reloaded is not None else None
    if kernel is not None:
        _descriptions[autotuner] = kernel
    return kernel


def _patch_async_compile(patches: Patches, wrapper_path: str | None) -> None:
    from torch._inductor.async_compile import AsyncCompile
    from torch._inductor.codecache import PyCodeCache

    def triton(self, kernel_name: str, source_code: str, device_str: str = "cuda"):
        # Inductor's own code cache writes and imports the module, as a GPU run would; the decorator inside
        # (patched above) records the kernel instead of compiling it.
        key, path = PyCodeCache.write(source_code)
        module = PyCodeCache.load_by_key_path(key, path)
        kernel = getattr(module, kernel_name, None)
        # older wrappers name the string's function 'triton_' and bind it to kernel_name
        if kernel is None:
            kernel = next((v for v in vars(module).values() if isinstance(v, InductorKernel)), None)
        if isinstance(kernel, InductorKernel):
            kernel.device_str = device_str
            # the module that asked: the opened wrapper, or the one Inductor generated for a torch.compile call
            caller = sys._getframe(1).f_globals.get("__file__")
            kernel.wrapper = os.path.abspath(caller) if isinstance(caller, str) else wrapper_path
        return kernel

    patches.patch(AsyncCompile, "triton", triton)
    patches.patch(AsyncCompile, "wait", lambda self, scope: None)


def _patch_cuda_only_helpers(patches: Patches) -> None:
    """On the virtual GPU, a wrapper written on a GPU machine calls CUDA helpers from torch._C that a
    CPU-only torch lacks (`_cuda_getCurrentRawStream`, `_cuda_synchronize`) or that need a visible device
    (`torch._C._dynamo.guards._empty_strided_cuda`, `torch.cuda._DeviceGuard`). Their stand-ins give what
    the virtual GPU gives for `device="cuda"` (a CPU tensor that says it is on cuda:0)."""
    patches.patch(torch._C, "_cuda_getCurrentRawStream", lambda device=None: 0)
    patches.patch(torch._C, "_cuda_synchronize", lambda: None)  # Inductor's print_performance
    # `with torch.cuda._DeviceGuard(0):` in call()
    patches.patch(torch.cuda, "_DeviceGuard", _DeviceGuard)

    def empty_strided_cuda(size, stride, dtype, *args, **kwargs):
        return torch.empty_strided(size, stride, dtype=dtype, device="cuda")

    patches.patch(torch._C._dynamo.guards, "_empty_strided_cuda", empty_strided_cuda)


class _DeviceGuard:
    """torch.cuda._DeviceGuard on the virtual GPU: there is one device, so there is nothing to switch."""

    def __init__(self, index: int = 0):
        self.idx = index

    def __enter__(self) -> "_DeviceGuard":
        return self

    def __exit__(self, *exc) -> bool:
        return False
