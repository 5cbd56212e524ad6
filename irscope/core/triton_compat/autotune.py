"""Which configs an autotuned launch would try on a GPU: Triton's own pruning, before any benchmark.

`@triton.autotune(..., prune_configs_by={"early_config_prune": f, "perf_model": m, "top_k": k})` narrows the
configs per launch before the autotuner benchmarks them, and a config it drops is never compiled: Triton's
tutorial 09 drops EPILOGUE_SUBTILE configs when FLATTEN is false, a combination that does not compile on
Triton 3.6. irscope records and compiles only the configs the GPU's autotuner would try, and runs the first.
"""

from __future__ import annotations

from typing import Any

from triton.runtime.autotuner import Autotuner


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
    indices = []
    for config in pruned:
        index = next((i for i, c in enumerate(tuner.configs) if c is config), None)
        if index is None:
            index = next((i for i, c in enumerate(tuner.configs) if c == config), None)
        if index is None:  # the pruning made configs of its own, which no --config index names: keep them all
            return every
        indices.append(index)
    return indices
