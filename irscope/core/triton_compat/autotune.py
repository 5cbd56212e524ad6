"""What an autotuned launch compiles on a GPU, config by config.

- Which configs: `@triton.autotune(..., prune_configs_by={"early_config_prune": f, "perf_model": m,
  "top_k": k})` narrows the configs per launch before the autotuner benchmarks them, and a config it drops
  is never compiled: Triton's tutorial 09 drops EPILOGUE_SUBTILE configs when FLATTEN is false, a
  combination that does not compile on Triton 3.6. irscope records only the configs the GPU's autotuner
  would try, and runs the first.
- With which arguments: before benchmarking a config, the autotuner runs its `pre_hook`, which may set the
  block shape of the launch's host tensor descriptors (tutorial 09's `matmul_tma_set_block_size_hook`;
  FlagGems' matmul). All configs share those descriptor objects, so a launch is recorded with copies of its
  descriptors as they are when it launches (`as_launched`), or every config would compile with the block
  shape the last hook left.
- Autotuners with a `run` of their own (FlagGems' LibTuner) benchmark each config through Triton's
  `Autotuner._bench`: there a config's launch is recorded as that config (its pre_hook applied), and on the
  virtual GPU neither run nor timed (`do_bench` would run it in the interpreter and return NaN), so a cold
  library tuning cache does not turn one launch into a hundred compilations.
"""

from __future__ import annotations

import copy
from typing import Any

from triton.runtime.autotuner import Autotuner

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


def configs_tried(tuner: Autotuner, args: tuple, kwargs: dict) -> list[int]:
    """The configs `tuner` would benchmark for this launch, as indices into `tuner.configs`, in the order
    its pruning leaves them (a perf_model's best first). `kwargs` as Autotuner.run gets them, grid and
    warmup included. Autotuner.run prunes only when it has more than one config, with `nargs` (the
    positional arguments by name) set for the pruning functions."""
    every = list(range(len(tuner.configs)))
    if len(tuner.configs) <= 1:
        return every
    saved = getattr(tuner, "nargs", None)
    tuner.nargs = dict(zip(tuner.arg_names, args))
    try:
        pruned = list(tuner.prune_configs(kwargs))
    finally:
        tuner.nargs = saved
    indices = [config_index(tuner.configs, config) for config in pruned]
    if None in indices:  # the pruning made configs of its own, which no --config index names: keep them all
        return every
    return indices


def config_index(configs: list[Any], config: Any) -> int | None:
    """Where `config` is in `configs`: the same object, else an equal one; None if neither."""
    index = next((i for i, c in enumerate(configs) if c is config), None)
    return index if index is not None else next((i for i, c in enumerate(configs) if c == config), None)
