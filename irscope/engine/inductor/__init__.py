"""torch.compile's kernels: what Inductor generates, opened offline.

Inductor writes each Triton kernel as a module whose `@triton.jit` function sits under one of its own
decorators (`@triton_heuristics.pointwise / reduction / persistent_reduction / template / ...`), and a
wrapper (`output_code.py`) that holds those modules as strings (`async_compile.triton(name, '''...''')`)
and launches them from `call()`. Here:

- `kernels.py`: while a file runs, Inductor's decorators record what they were given (the configs their
  heuristics chose, `triton_meta`, `inductor_meta`) instead of compiling for a device, and a launch from a
  wrapper's `call()` is recorded once per config;
- `specialize.py`: each config becomes a compilation the way Inductor's `CachingAutotuner` builds one
  (its own `_create_compile_meta` / `_create_compile_options`);
- `provenance.py`: the ATen ops and source nodes Inductor says each kernel fuses; `report.py` their part of
  `irscope report`;
- `scripts.py`: which files need all this, and what a `torch.compile` script gets with no GPU here;
  `virtual_compile.py`: Inductor's GPU path for the virtual GPU.
"""
