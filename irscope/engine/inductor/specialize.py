"""An Inductor kernel's compilation for one config, as Inductor's `CachingAutotuner` builds it.

`CachingAutotuner._precompile_config(cfg)` calls `_create_compile_meta(cfg)` (a copy of `triton_meta` with
the config's constants, num_warps, num_stages, `debug` from `assert_indirect_indexing`, the device type and
capability) and `_create_compile_options(cfg, compile_meta)` (num_warps, num_stages, debug,
sanitize_overflow off, fp fusion, PDL / cooperative launch on CUDA), then
`triton.compile(ASTSource(fn, meta["signature"], meta["constants"], meta["configs"][0]), target, options)`.
Those two methods of the installed torch are called here on a stand-in for the autotuner (they read only
its triton_meta, inductor_meta, device_props and fn), so the specialization is Inductor's own, not a copy.

The device is irscope's target: for a module written for that GPU (type 'cuda', cc 90 on sm_90) it is the
device Inductor compiled for; for one written for another device (the CPU, or another GPU) the kernel's
code and configs are still what Inductor chose there, which the picker and report say.
"""

from __future__ import annotations

import copy
import types

from irscope.base.errors import IrscopeError
from irscope.base.target import Target
from irscope.engine.inductor.kernels import InductorKernel
from irscope.engine.triton_compat import Specialized
from irscope.engine.triton_compat.given_spec import specialization_from_parts


def _device_for(kernel: InductorKernel, target: Target):
    """The kernel's DeviceProperties with the target's device type and capability (nothing else changed)."""
    device = kernel.triton_meta.get("device")
    kind = "cuda" if target.is_nvidia else "hip"
    cc = int(target.name.removeprefix("sm_")) if target.is_nvidia else target.name
    if device is not None and hasattr(device, "_replace"):
        if device.type == kind and device.cc == cc:
            return device
        return device._replace(
            type=kind,
            cc=cc,
            index=0 if device.index is None else device.index,
            warp_size=32 if target.is_nvidia else 64,
        )
    from torch._inductor.runtime.hints import DeviceProperties

    return DeviceProperties(
        type=kind, index=0, multi_processor_count=1, cc=cc, warp_size=32 if target.is_nvidia else 64
    )


def compile_parts(
    kernel: InductorKernel, config_index: int, target: Target, given: dict | None = None
) -> tuple[dict, dict, dict, dict]:
    """(signature, constants, attrs, options) for `triton.compile`, from Inductor's own methods; `given`
    (the command line's -D) replaces a constexpr's value or num_warps / num_stages, after Inductor's."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    # never empty: every decorator gives cached_autotune one config at least
    configs = kernel.configs
    if not 0 <= config_index < len(configs):
        raise IrscopeError(
            f"--config {config_index}: {kernel.name} has {len(configs)} Inductor configs; "
            f"choose 0 to {len(configs) - 1}"
        )
    config = configs[config_index]
    triton_meta = copy.copy(kernel.triton_meta)
    triton_meta["device"] = _device_for(kernel, target)
    attrs = triton_meta.get("configs") or [{}]
    if not isinstance(attrs[0], dict):
        raise IrscopeError(
            f"{kernel.name}: its triton_meta holds {type(attrs[0]).__name__} configs, the form of "
            f"PyTorch before 2.6; regenerate the file with PyTorch 2.6 or later"
        )
    autotuner = types.SimpleNamespace(
        triton_meta=triton_meta,
        inductor_meta=dict(kernel.inductor_meta),
        device_props=triton_meta["device"],
        fn=kernel.fn,
        heuristic_type=kernel.heuristic_type,
    )
    meta = CachingAutotuner._create_compile_meta(autotuner, config)
    options = CachingAutotuner._create_compile_options(autotuner, config, meta)
    own = config.all_kwargs()
    for name, value in (given or {}).items():
        if name in own and own[name] == value:
            continue  # the launch's own copy of the config (engine/session.py), not a -D
        if meta["signature"].get(name) == "constexpr":
            meta["constants"][name] = value
        elif name in ("num_warps", "num_stages"):
            options[name] = value
        else:
            raise IrscopeError(
                f"-D {name}={value}: {kernel.name} has no constexpr of that name (its constexprs: "
                f"{', '.join(n for n, k in meta['signature'].items() if k == 'constexpr') or 'none'}; "
                f"num_warps and num_stages are options)"
            )
    return meta["signature"], meta["constants"], meta["configs"][0], options


def inductor_specialization(
    kernel: InductorKernel, config_index: int, target: Target, given: dict | None = None
) -> Specialized:
    signature, constants, attrs, options = compile_parts(kernel, config_index, target, given)
    return specialization_from_parts(kernel.fn, signature, constants, attrs, options, target)
