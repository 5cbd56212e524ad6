"""What an autotuned launch compiles on a GPU, config by config.

- Which configs: `@triton.autotune(..., prune_configs_by={"early_config_prune": f, "perf_model": m,
  "top_k": k})` narrows the configs per launch before the autotuner benchmarks them, and a config it drops
  is never compiled: Triton's tutorial 09 drops EPILOGUE_SUBTILE configs when FLATTEN is false, a
  combination that does not compile on Triton 3.6. irscope asks the installed Triton's own
  `Autotuner.prune_configs` (3.6 takes a float top_k of all the declared configs, 3.9 of those the early
  pruning left, and at least one), records only the configs it returns, and runs the first.
- Configs the pruning makes: an early_config_prune may return new `triton.Config` objects (one library's
  adds BLOCK_N, a meta-parameter the declared configs lack). The GPU compiles those, never the declared
  ones, so each is numbered after the declared configs (`known_configs`): `--config N` picks it and the
  report names it by its kwargs, warps and stages.
- Once per key: Autotuner.run benchmarks the configs for a tuning key once, then runs the config it chose
  for every later launch with that key (new specializations of it included), so those launches compile
  that one config only. irscope stands the first config tried in for the choice (`tuning_key`). Where the
  key leaves out a constexpr whose value differs from the key's first launch (`left_out_of_key`), that later
  launch compiles the chosen config anew, and which config that is only timing knows: every config the
  first launch tried is named for it, and the run says so.
- With which arguments: before benchmarking a config, the autotuner runs its `pre_hook`, which may set the
  block shape of the launch's host tensor descriptors (tutorial 09's `matmul_tma_set_block_size_hook`;
  FlagGems' matmul). All configs share those descriptor objects, so a launch is recorded with copies of its
  descriptors as they are when it launches (`as_launched`), or every config would compile with the block
  shape the last hook left.
- Autotuners with a `run` of their own (FlagGems' LibTuner) benchmark each config through Triton's
  `Autotuner._bench`: there a config's launch is recorded as that config (its pre_hook applied), and on the
  virtual GPU neither run nor timed (`do_bench` would run it in the interpreter and return NaN), so a cold
  library tuning cache does not turn one launch into a hundred compilations. Which configs such a run tries
  is known only once it has tried them: own_tuners.py numbers them on every launch recorded for it.
"""

from __future__ import annotations

import copy
from typing import Any

from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

try:
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # pragma: no cover - every supported Triton has it
    TensorDescriptor = None


def as_launched(value: Any) -> Any:
    """An argument as it is at its launch: a host tensor descriptor is copied (a later hook may change the
    one object), anything else is itself."""
    if TensorDescriptor is not None and isinstance(value, TensorDescriptor):
        out = copy.copy(value)
        out.block_shape = list(value.block_shape)
        return out
    return value


def known_configs(tuner: Autotuner) -> list[Any]:
    """The configs an autotuner has been seen to try, numbered as `--config` numbers them: its declared
    configs first, then each one its pruning made, in the order first seen (`config_number`). One list per
    autotuner, kept on it, so that every launch and the kernel number a config alike."""
    known = vars(tuner).get("_irscope_known_configs")
    if known is None:
        known = list(tuner.configs)
        tuner._irscope_known_configs = known
    return known


def config_number(tuner: Autotuner, config: Any) -> int:
    """`config`'s number among the autotuner's known configs; a config its pruning made is added to them."""
    known = known_configs(tuner)
    index = config_index(known, config)
    if index is None:
        known.append(config)
        index = len(known) - 1
    return index


def configs_tried(tuner: Autotuner, args: tuple, kwargs: dict) -> list[Any]:
    """The configs `tuner` would benchmark for this launch (triton.Config objects, new ones its pruning made
    included), in the order its pruning leaves them (a perf_model's best first). `kwargs` as Autotuner.run
    gets them, grid and warmup included. Autotuner.run prunes only when it has more than one config, with
    `nargs` (the positional arguments by name) set for the pruning functions."""
    if len(tuner.configs) <= 1:
        return list(tuner.configs[:1])
    saved = getattr(tuner, "nargs", None)
    tuner.nargs = dict(zip(tuner.arg_names, args))
    try:
        return list(tuner.prune_configs(kwargs))
    finally:
        tuner.nargs = saved


def tuning_key(tuner: Autotuner, args: tuple, kwargs: dict) -> tuple | None:
    """The key Autotuner.run keeps its choice under (alike in Triton 3.6 to 3.9): the values of the `key`
    arguments, then the dtype of each argument that has one. None if it cannot key a dict."""
    named = {
        name: value
        for name, value in {**dict(zip(tuner.arg_names, args)), **kwargs}.items()
        if name in tuner.arg_names
    }
    key = tuple(
        [named[name] for name in tuner.keys if name in named]
        + [str(value.dtype) for value in named.values() if hasattr(value, "dtype")]
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def inner_jit(tuner: Any) -> JITFunction | None:
    """The JIT function under an autotuner (through heuristics and other wrappers)."""
    fn, seen = tuner, 0
    while fn is not None and not isinstance(fn, JITFunction) and seen < 16:
        fn, seen = getattr(fn, "fn", None), seen + 1
    return fn if isinstance(fn, JITFunction) else None


def left_out_of_key(tuner: Autotuner, args: tuple, kwargs: dict) -> dict[str, str]:
    """The constexpr arguments a launch passes that the autotuner's key leaves out, by name, as text: a later
    launch with the same key and another value of one compiles anew, with the config the autotuner chose for
    the key's first launch (tutorial 06's STAGE: the causal run tunes, the non-causal one reuses)."""
    jit = inner_jit(tuner)
    if jit is None:
        return {}
    named = {**dict(zip(tuner.arg_names, args)), **kwargs}
    return {
        p.name: repr(named[p.name])
        for p in jit.params
        if p.is_constexpr and p.name in named and p.name not in tuner.keys
    }


def config_index(configs: list[Any], config: Any) -> int | None:
    """Where `config` is in `configs`: the same object, else an equal one; None if neither."""
    index = next((i for i, c in enumerate(configs) if c is config), None)
    return (
        index
        if index is not None
        else next((i for i, c in enumerate(configs) if c == config), None)
    )


def describe_config(config: Any) -> dict[str, Any]:
    """A triton.Config as plain data: its meta-parameters and launch options, as the report's JSON names it."""
    return {
        "kwargs": dict(config.kwargs),
        "num_warps": config.num_warps,
        "num_stages": config.num_stages,
        "num_ctas": getattr(config, "num_ctas", None),
        "maxnreg": getattr(config, "maxnreg", None),
    }
