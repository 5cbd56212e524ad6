"""Every use of Triton's internals lives in this package.

irscope compiles a kernel *exactly* as Triton's JIT would, which means borrowing pieces of Triton
that are not public API: the driver registry, ``JITFunction.run``'s argument binder, the autotuner's
config list, the interpreter. When a new Triton release moves one of them, this package is the only
code to change. Supported: Triton 3.6 through the newest (3.9 when this was written).

By concern: `driver` (targets, the local GPU, a CPU stand-in for Triton's driver), `jit` (kernels in a
user's module, binding a launch's arguments), `compiler` (specialization and compilation), `capture`
(recording launches while a file runs), `lang_patch` (triton.language patched for the interpreter, once
per launch), `interpreter` (one program in Triton's interpreter, with memory hooks), `layouts` (linear
layouts of TTGIR loads and stores), `gluon` (what sets a `@gluon.jit` kernel apart: its source class);
`autotune`, `caches`, `compile_errors`, `install_key`, `interp_patches`, `kernel_sources` (what a reproducer carries),
`debugger_calls`, `libdevice_*`, `virtual_device`, `given_spec`, `pass_dumps` for narrower matters. The names
below are re-exported so that the rest of irscope imports from the package alone.
"""

# isort: skip_file  (the order below matters: TRITON_INTERPRET is set before Triton loads, `originals` keeps
# Triton as it is before any patch of irscope's)
from __future__ import annotations

import os

# irscope runs the user's file with real JIT functions (we need them to compile), and runs their
# launches through the interpreter by hand when there is no GPU. Triton reads this at decoration time.
os.environ["TRITON_INTERPRET"] = "0"

from triton.compiler.errors import CompilationError  # noqa: E402,F401
from triton.runtime.jit import JITFunction  # noqa: E402,F401

from irscope.base.target import Target  # noqa: E402,F401
from irscope.engine.triton_compat import caches, interp_patches  # noqa: E402,F401
from irscope.engine.triton_compat.autotune import describe_config  # noqa: E402,F401
from irscope.engine.triton_compat.caches import (  # noqa: E402,F401
    check_caches,
    irscope_cache_dir,
    new_cache_warning,
    triton_cache_dir,
)
from irscope.engine.triton_compat.capture import (  # noqa: E402,F401
    RawLaunch,
    capture_patches,
    restore_unpatched_triton,
)
from irscope.engine.triton_compat.compiled import CompiledWhenUsed, compile_for_active_target  # noqa: E402,F401
from irscope.engine.triton_compat.compiler import (  # noqa: E402,F401
    Specialized,
    attrs_by_param,
    compilation_error_site,
    compile_specialized,
    compiled_asm,
    compiled_metadata,
    constexprs_by_param,
    find_tool,
    is_compilation_error,
    prepare_compiler,
    specialize,
)
from irscope.engine.triton_compat.debugger_calls import DebuggerCall, debugger_calls  # noqa: E402,F401
from irscope.engine.triton_compat.driver import (  # noqa: E402,F401
    CpuDriver,
    install_cpu_driver,
    interpreter_lock,
    local_gpu_target,
    target_from_gpu_target,
)
from irscope.engine.triton_compat.install_key import (
    hashing_process,
    remember_triton_key,
    triton_install_key,
    triton_key_known,
    warm_triton_key,
)
from irscope.engine.triton_compat.interpreter import (
    FlopHook,
    MemoryHook,
    interpreter_failure,
    interpreter_value,
    jit_code_ids,
    kernel_parameters,
    pointer_elem_bytes,
    reinterpreted_tensor,
    run_one_program,
)
from irscope.engine.triton_compat.jit import (  # noqa: E402,F401
    UnwrappedKernel,
    bind_arguments,
    config_kwargs,
    constexpr_param_names,
    descriptor_param_values,
    kernel_param_names,
    kernel_source,
    param_defaults,
    unwrap_kernel,
)
from irscope.engine.triton_compat.key_deferred import key_deferred  # noqa: E402,F401
from irscope.engine.triton_compat.layouts import ttgir_access_linear_layouts  # noqa: E402,F401
from irscope.engine.triton_compat.originals import TRITON_VERSION  # noqa: E402,F401  (imported first: Triton as it is before any patch)
from irscope.engine.triton_compat.program_budget import interpret_seconds  # noqa: E402,F401

__all__ = [
    "CpuDriver",
    "attrs_by_param",
    "bind_arguments",
    "caches",
    "capture_patches",
    "check_caches",
    "compilation_error_site",
    "CompilationError",
    "compile_for_active_target",
    "compile_specialized",
    "compiled_asm",
    "compiled_metadata",
    "CompiledWhenUsed",
    "config_kwargs",
    "constexpr_param_names",
    "constexprs_by_param",
    "debugger_calls",
    "DebuggerCall",
    "describe_config",
    "descriptor_param_values",
    "find_tool",
    "FlopHook",
    "hashing_process",
    "install_cpu_driver",
    "interp_patches",
    "interpret_seconds",
    "interpreter_failure",
    "interpreter_lock",
    "interpreter_value",
    "irscope_cache_dir",
    "is_compilation_error",
    "jit_code_ids",
    "JITFunction",
    "kernel_param_names",
    "kernel_parameters",
    "kernel_source",
    "key_deferred",
    "local_gpu_target",
    "MemoryHook",
    "new_cache_warning",
    "param_defaults",
    "pointer_elem_bytes",
    "prepare_compiler",
    "RawLaunch",
    "reinterpreted_tensor",
    "remember_triton_key",
    "restore_unpatched_triton",
    "run_one_program",
    "specialize",
    "Specialized",
    "Target",
    "target_from_gpu_target",
    "triton_cache_dir",
    "triton_install_key",
    "triton_key_known",
    "TRITON_VERSION",
    "ttgir_access_linear_layouts",
    "unwrap_kernel",
    "UnwrappedKernel",
    "warm_triton_key",
]
