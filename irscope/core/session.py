"""The headless entry point: open a kernel file, learn its launches, compile what the user asks for."""

from __future__ import annotations

import ast
import os
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from . import ahead
from .capture import run_user_file
from .compile import Compilation, compile_launch
from .discover import UserFile, find_kernels, kernel_file_text, kernels_of_launches, read_user_file
from .errors import IrscopeError, UserCodeError
from .inductor.kernels import inductor_kernel_of
from .kernel_params import pointer_params
from .model import DEFAULT_TARGET, Kernel, Launch
from .names import target_name
from .retarget import device_suffix, run_on_other_targets
from .triton_compat import (RawLaunch, Target, bind_arguments, check_caches, config_kwargs, constexpr_param_names,
                            local_gpu_target, param_defaults, warm_triton_key)


def resolve_target(name: str | None) -> Target:
    """`--target`, or the local GPU, or sm_90."""
    if name is None:
        return local_gpu_target() or Target(DEFAULT_TARGET)
    try:
        return Target(target_name(name))
    except ValueError as err:
        raise IrscopeError(str(err)) from None


@dataclass
class Overrides:
    """What the command line says about arguments: `-D NAME=VALUE` and `--arg NAME=TYPE`."""

    defines: dict[str, Any] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, defines: list[str] | None, args: list[str] | None) -> "Overrides":
        return cls({k: _literal(v) for k, v in map(_split_assignment("-D"), defines or [])},
                   dict(map(_split_assignment("--arg"), args or [])))

    def __bool__(self) -> bool:
        return bool(self.defines or self.args)

    def describe(self) -> str:
        """As typed on the command line: `-D BLOCK=64 --arg n=i32` ("" for none)."""
        return " ".join([f"-D {k}={v}" for k, v in self.defines.items()]
                        + [f"--arg {k}={v}" for k, v in self.args.items()])


def _split_assignment(flag: str):
    def split(text: str) -> tuple[str, str]:
        name, sep, value = text.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise IrscopeError(f"{flag} {text!r} is not NAME=VALUE; write it like {flag} "
                               f"{'BLOCK_SIZE=1024' if flag == '-D' else 'x_ptr=*fp16'}")
        return name.strip(), value.strip()
    return split


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


_TORCH_DTYPES = {
    "fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64,
    "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8,
    "i1": torch.bool, "u1": torch.bool, "fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2,
}
# A scalar of each type whose value the JIT cannot specialize on (not 1, not a multiple of 16).
_SCALAR_STANDINS = {"i32": 3, "i64": 2**33 + 3, "u64": 2**63 + 3, "fp32": 1.5, "fp64": 1.5, "u1": False, "i1": False}


def _value_for_type(name: str, kind: str) -> Any:
    """A stand-in argument the JIT specializes the way the type says: pointers are small CPU tensors
    (16-byte aligned, as every allocator gives), scalars are values with no special divisibility."""
    if kind.startswith("*"):
        dtype = _TORCH_DTYPES.get(kind[1:])
        if dtype is None:
            raise IrscopeError(f"--arg {name}={kind}: unknown pointer type; use one of "
                               f"{', '.join('*' + t for t in _TORCH_DTYPES)}")
        return torch.empty(64, dtype=dtype)
    if kind in _SCALAR_STANDINS:
        return _SCALAR_STANDINS[kind]
    value = _literal(kind)
    if isinstance(value, (int, float, bool)):
        return value  # a concrete value: the JIT specializes on it exactly as on a real launch
    raise IrscopeError(f"--arg {name}={kind}: give a type (*fp32, *fp16, i32, i64, fp32) or a number")


def _annotated_type(annotation: Any) -> str | None:
    """A parameter's annotation as a type irscope can stand in for (`*fp16`, `i32`), if it is one."""
    text = str(annotation or "").replace("tl.", "").replace("triton.language.", "")
    if text.startswith("*") and text[1:] in _TORCH_DTYPES:
        return text
    names = {"int32": "i32", "int64": "i64", "float32": "fp32", "float64": "fp64", "uint64": "u64"}
    text = names.get(text, text)
    return text if text in _SCALAR_STANDINS else None


@dataclass
class Workspace:
    """A kernel file, opened: its kernels, the launches its own code made, and their compilations."""

    user_file: UserFile
    kernels: list[Kernel]
    launches: list[Launch]
    target: Target
    overrides: Overrides
    run_warning: str | None = None
    notes: list[str] = field(default_factory=list)  # what the run skipped or cut short, one line each
    device: str = ""  # the GPU the file saw: this machine's, or irscope's virtual one (said so)
    last_output: str = ""  # the last line the file printed (why it launched nothing, often)

    # ---- kernels and launches

    def kernel(self, name: str | None) -> Kernel:
        if name is None:
            launched = {id(launch.kernel): launch.kernel for launch in self.launches}
            if len(launched) == 1:
                return next(iter(launched.values()))
            if len(self.kernels) == 1:
                return self.kernels[0]
            names = ", ".join(self.kernel_label(k) for k in self.kernels)
            raise IrscopeError(f"{self.user_file.shown} has several kernels ({names}); pick one with --kernel NAME")
        found = [k for k in self.kernels if name in (k.name, k.qualified_name)]
        if len(found) == 1:
            return found[0]
        if found:
            names = ", ".join(k.qualified_name for k in found)
            raise IrscopeError(f"several kernels are named '{name}' ({names}); pick one with --kernel MODULE:NAME")
        names = ", ".join(self.kernel_label(k) for k in self.kernels)
        raise IrscopeError(f"no kernel named '{name}' in {self.user_file.shown}; the kernels there are: {names}")

    def kernel_label(self, kernel: Kernel) -> str:
        """A kernel's name, with its module when the opened file does not define it."""
        return kernel.name if kernel.file == self.user_file.path else kernel.qualified_name

    def shown_path(self, path: str | None) -> str | None:
        """A path as the user would write it: the opened file as typed, others relative when shorter."""
        if path is None or path == self.user_file.path:
            return self.user_file.shown if path else path
        relative = os.path.relpath(path)
        return relative if not relative.startswith("../..") else path

    def source_text(self, kernel: Kernel) -> str:
        """The text of the file that defines the kernel: the source pane and the source map read it."""
        return self.user_file.text if kernel.file == self.user_file.path else kernel_file_text(kernel.file)

    def compilation_at(self, kernel: Kernel, config: int | None, launch: int):
        """The compilation of the kernel's `launch`-th distinct specialization (`--launch`), or one line
        naming the choices."""
        comps = self.compile(kernel, config=config)
        if not 0 <= launch < len(comps):
            raise IrscopeError(f"--launch {launch}: {kernel.name} has {len(comps)} distinct "
                               f"specialization(s); choose 0 to {len(comps) - 1}")
        return comps[launch]

    def launches_of(self, kernel: Kernel, config: int | None = None) -> list[Launch]:
        """Launches of a kernel, narrowed to one autotune config (default: the first)."""
        if kernel.is_autotuned:
            count = len(kernel.autotune_configs or [])
            index = 0 if config is None else config
            if not 0 <= index < count:
                raise IrscopeError(f"--config {config}: {kernel.name} has {count} autotune configs; "
                                   f"choose 0 to {count - 1}")
        elif config not in (None, 0):
            raise IrscopeError(f"--config {config}: {kernel.name} is not autotuned; leave --config out")
        captured = [launch for launch in self.launches if launch.kernel is kernel]
        if not captured and kernel.inductor is not None:  # its specialization is in triton_meta, not in arguments
            index = config or 0
            return [Launch(kernel, (), dict(self.overrides.defines), None, "given", index if kernel.is_autotuned else None,
                           len(kernel.autotune_configs or []) or None, autotune_first=index == 0)]
        if not captured:
            return [self._launch_from_overrides(kernel, config)]
        found = [launch for launch in captured if _with_config(launch, config)]
        if not found:  # never make up arguments for a kernel the file did launch
            raise IrscopeError(f"{self.user_file.shown} launched {kernel.name}, but not with autotune config "
                               f"{config or 0}; its autotuner's pruning left that config out, or its run stopped "
                               f"early (see the warning above)")
        return found

    def _launch_from_overrides(self, kernel: Kernel, config: int | None) -> Launch:
        jit = kernel.jit
        defaults = param_defaults(jit)
        constexpr_names = set(constexpr_param_names(jit))
        kwargs: dict[str, Any] = {}
        guesses: dict[str, str] = {}
        pointers = pointer_params(jit.fn)
        for param in jit.params:
            name = param.name
            if name in self.overrides.defines:
                kwargs[name] = self.overrides.defines[name]
            elif name in self.overrides.args:
                kwargs[name] = _value_for_type(name, self.overrides.args[name])
                if self.overrides.args[name].startswith("*"):
                    guesses[name] = f"a {self.overrides.args[name]} tensor, 16-byte aligned"
            elif name in defaults:
                kwargs[name] = defaults[name]
            elif name in constexpr_names:
                continue
            else:
                kind = _annotated_type(param.annotation) or ("*fp32" if name in pointers else "i32")
                kwargs[name] = _value_for_type(name, kind)
                guesses[name] = (f"a {kind} tensor, 16-byte aligned" if kind.startswith("*")
                                 else f"{kwargs[name]!r} ({kind})")
        if kernel.is_autotuned:
            kwargs.update(_config_kwargs(kernel, config or 0))
        missing = [n for n in constexpr_param_names(jit) if n not in kwargs]
        if missing:
            how = " ".join(f"-D {n}=VALUE" for n in missing)
            raise IrscopeError(f"{kernel.name} was not launched by {self.user_file.shown}, and its constexpr "
                               f"{'parameter' if len(missing) == 1 else 'parameters'} {', '.join(missing)} "
                               f"{'has' if len(missing) == 1 else 'have'} no value; pass {how}")
        for name, value in self.overrides.defines.items():
            kwargs.setdefault(name, value)  # launch options: num_warps, num_stages, ...
        return Launch(kernel, (), kwargs, None, "given", config if kernel.is_autotuned else None,
                      len(kernel.autotune_configs) if kernel.is_autotuned else None, guesses=guesses)

    # ---- compiling

    def compile(self, kernel: Kernel, target: Target | None = None, config: int | None = None) -> list[Compilation]:
        """Every distinct compilation of a kernel's launches, for one target."""
        target = target or self.target
        seen: dict[str, Compilation] = {}
        if kernel.inductor is not None and config is None and kernel.is_autotuned:
            # each config of Inductor's list is a compilation: CachingAutotuner precompiles them all
            out = []
            for index in range(len(kernel.autotune_configs or [])):
                out.extend(c for c in self.compile(kernel, target, index) if all(c is not o for o in out))
            return out
        # A warmup's grid is not what the kernel runs with (tutorial 02 warms up with grid=(1,), then launches
        # the compiled kernel on every SM): a real launch of the same binary, compiled first, stands for it.
        for launch in sorted(self.launches_of(kernel, config), key=lambda la: la.warmup):
            comp = compile_launch(launch, target, self.source_text(kernel), given=self.overrides.describe())
            seen.setdefault(comp.spec.cache_key(), comp)
        return list(seen.values())

    def compile_all(self, target: Target | None = None, kernel_name: str | None = None,
                    config: int | None = None) -> list[Compilation]:
        if kernel_name is not None:
            return self.compile(self.kernel(kernel_name), target, config)
        launched = [k for k in self.kernels if any(launch.kernel is k for launch in self.launches)]
        if not launched and any(k.inductor is not None for k in self.kernels):
            launched = [k for k in self.kernels if k.inductor is not None]  # a kernel module: each as Inductor compiles it
        if not launched:
            if self.overrides and len(self.kernels) == 1:
                launched = self.kernels
            else:
                names = ", ".join(k.name for k in self.kernels)
                said = f" (the last thing it printed: {self.last_output!r})" if self.last_output else ""
                raise IrscopeError(f"{self.user_file.shown} launches no kernel from its __main__ code{said}; pick one "
                                   f"with --kernel NAME (kernels: {names}) and give its arguments with -D/--arg")
        out: list[Compilation] = []
        for kernel in launched:
            out.extend(self.compile(kernel, target, config))
        return out

    def not_launched(self) -> list[Kernel]:
        """The file's own kernels that it did not launch (a library's unlaunched kernels are not listed)."""
        return [k for k in self.kernels if k.file == self.user_file.path and k.inductor is None
                and not any(launch.kernel is k for launch in self.launches)]


def _with_config(launch, config: int | None) -> bool:
    """A launch (or a RawLaunch) of autotune config `config`; with None, of the first config its autotuner
    would try (not always config 0: pruning may leave that out). A launch of a kernel not autotuned: True."""
    if launch.autotune_index is None:
        return True
    return launch.autotune_first if config is None else launch.autotune_index == config


def _config_kwargs(kernel: Kernel, index: int) -> dict:
    return config_kwargs((kernel.autotune_configs or [])[index])


def open_file(path: str, *, target: str | None = None, run_main: bool = True,
              overrides: Overrides | None = None, compile_ahead: bool = True, ahead_sass: bool = True,
              kernel_name: str | None = None, config: int | None = None, budget=None,
              on_launch: Callable[[RawLaunch], None] | None = None) -> Workspace:
    """Load a kernel file, run its `__main__` to capture launches, and get ready to compile.

    With no GPU, each launch starts compiling in a child process as soon as it is captured (core/ahead.py),
    and then disassembled unless `ahead_sass` is false (SASS will not be asked for); none starts if
    `compile_ahead` is false (nothing will be compiled), or for a launch not of `kernel_name` or not with
    autotune `config` (when the caller will compile only those). `on_launch` hears of each launch as it is
    captured."""
    user_file = read_user_file(path)
    resolved = resolve_target(target)
    local = local_gpu_target()
    overrides = overrides or Overrides()
    cache_warning = check_caches()  # a read-only or full cache: compile without one, and say so
    if compile_ahead and not cache_warning:
        warm_triton_key()  # the install's hash, while the file runs (the first compile needs it)

    def run(on: Target):
        hooks = [on_launch] if on_launch is not None else []
        if compile_ahead and local is None:
            hooks.append(_compiler_ahead(on, overrides, kernel_name, config, ahead_sass, user_file.text,
                                         user_file.path))
        return run_user_file(user_file, run_main=run_main, use_interpreter=local is None, target=on,
                             on_launch=(lambda raw: [hook(raw) for hook in hooks]) if hooks else None,
                             budget=budget)

    ahead.forget_waiting()
    result, first, retarget_note = run(resolved), resolved, None
    if target is None and local is None and run_main:  # launched nothing on the default virtual GPU? (retarget.py)
        resolved, result, retarget_note = run_on_other_targets(user_file.shown, resolved, result, run)
    ahead.start_waiting()  # the file's core is free now: a launch that found none free gets its child
    kernels = find_kernels(result.namespace, user_file)
    kernels += kernels_of_launches([(raw.jit, raw.autotune_configs) for raw in result.launches], kernels)
    if not kernels:
        if result.error is not None:
            _no_virtual_compile(user_file, result, local)
            raise UserCodeError(_user_error_line(user_file, result), result.user_traceback)
        raise IrscopeError(f"{user_file.shown} defines no @triton.jit kernel and launched none while it ran"
                           f"; open a file that defines or launches one, e.g. kernels/add.py")
    if target is None and local is None:  # Inductor's kernels are compiled for the GPU they were generated for
        resolved, written_for = _inductor_target(kernels, resolved)
        if written_for:
            result.notes.append(written_for)
    result.notes.extend(_ptxas_notes(kernels, resolved))
    by_jit = {id(k.jit): k for k in kernels}
    _check_arg_names(overrides, kernels, user_file)
    launches = [_launch(raw, by_jit, overrides) for raw in result.launches if id(raw.jit) in by_jit]
    warning = None
    if result.error is not None:
        site = f"{_exception_line(result.error)}{_raise_site(result, user_file)}"
        if launches:
            warning = (f"{user_file.shown} raised {site} after its kernels launched; showing the {len(launches)} "
                       f"launch(es) captured before that")
        elif not run_main:  # --no-run: the kernels are defined, and their arguments come from -D/--arg anyway
            warning = f"{user_file.shown} raised {site} after its kernels were defined; going on without the rest"
        else:
            _no_virtual_compile(user_file, result, local)
            raise UserCodeError(_user_error_line(user_file, result), result.user_traceback)
    warning = "; ".join(w for w in (cache_warning, warning) if w) or None
    notes = ([retarget_note] if retarget_note else []) + list(result.notes)
    if result.stopped:
        notes.append(f"{user_file.shown}: {result.stopped} (IRSCOPE_CAPTURE_QUIET / IRSCOPE_CAPTURE_LIMIT "
                     f"give it longer)")
    printed = [line.strip() for line in result.output.splitlines() if line.strip()]
    device = _device_line(resolved, local) + (device_suffix(first, resolved) if resolved is not first else "")
    return Workspace(user_file, kernels, launches, resolved, overrides, warning, notes, device,
                     printed[-1][:200] if printed else "")


def _no_virtual_compile(user_file: UserFile, result, local: Target | None) -> None:
    """torch.compile failed inside Inductor on the virtual GPU: one line that says what and what to do."""
    from .inductor.scripts import virtual_compile_failure
    line = virtual_compile_failure(result.error, user_file.shown) if local is None else None
    if line:
        raise IrscopeError(line)


def _ptxas_notes(kernels: list[Kernel], target: Target) -> list[str]:
    from .inductor.ptxas import ptxas_note
    note = ptxas_note(target) if any(k.inductor is not None for k in kernels) else None
    return [note] if note else []


def _inductor_target(kernels: list[Kernel], resolved: Target) -> tuple[Target, str | None]:
    from .inductor.scripts import generated_target
    from .names import TARGETS
    wanted = generated_target(kernels)
    if wanted is None or wanted == resolved.name:
        return resolved, None
    if wanted in TARGETS:
        return Target(wanted), (f"compiled for {wanted}, the GPU Inductor generated these kernels for (their "
                                f"triton_meta); --target picks another")
    return resolved, (f"Inductor generated these kernels for {wanted}, which irscope has no target for; compiled "
                      f"for {resolved.name} with Inductor's configs for {wanted} (--target picks another)")


def _device_line(target: Target, local: Target | None) -> str:
    if local is None:
        from .virtual_gpu import describe_virtual_device
        return describe_virtual_device(target)
    return f"this machine's GPU ({local.name}); launches ran on it, compiled for {target.name}"


def _exception_line(exc: BaseException) -> str:
    """`Type: first line of its message`; a bare `assert` is named by its own statement, which is all the
    cause there is (`AssertionError (assert x.is_cuda)`)."""
    detail = str(exc).strip().splitlines()
    if detail:
        return f"{type(exc).__name__}: {detail[0]}"
    frames = traceback.extract_tb(exc.__traceback__)
    statement = (frames[-1].line or "").strip() if frames else ""
    return f"{type(exc).__name__} ({statement[:120]})" if statement.startswith("assert") else type(exc).__name__


def _raise_site(result, user_file: UserFile) -> str:
    """" at line N" of the opened file where the exception passed last, when it did."""
    tb = result.error.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == user_file.path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" at line {line}" if line else ""


def _compiler_ahead(target: Target, overrides: Overrides, kernel_name: str | None, config: int | None,
                    disassemble_too: bool, source_text: str, user_path: str):
    """What to do with each launch as it is captured: start compiling the ones that will be compiled."""
    def on_launch(raw: RawLaunch) -> None:
        if inductor_kernel_of(raw.jit) is not None:  # not the JIT's specialization: compiled by the parent
            return
        if not _with_config(raw, config) or kernel_name not in (
                None, raw.jit.__name__, f"{raw.jit.fn.__module__}:{raw.jit.__name__}"):
            return
        try:
            args, kwargs = _arguments(raw, overrides)
        except Exception:  # an odd -D/--arg: reported when the parent compiles, not inside the user's run
            return
        text = source_text if raw.jit.fn.__code__.co_filename == user_path else kernel_file_text(
            raw.jit.fn.__code__.co_filename)
        ahead.start(raw.jit, args, kwargs, target, text, disassemble_too=disassemble_too)
    return on_launch


def _check_arg_names(overrides: Overrides, kernels: list[Kernel], user_file: UserFile) -> None:
    """An --arg must name a kernel parameter (a typo would otherwise be ignored without a word)."""
    params = {p.name for k in kernels for p in k.jit.params}
    unknown = [name for name in overrides.args if name not in params]
    if unknown:
        raise IrscopeError(f"--arg {unknown[0]}: no kernel in {user_file.shown} has a parameter of that name; "
                           f"its parameters: {', '.join(sorted(params))}")


def _user_error_line(user_file: UserFile, result) -> str:
    what = _exception_line(result.error) + _raise_site(result, user_file)
    return (f"{user_file.shown} raised {what} while irscope ran it (your code's traceback follows); "
            f"fix it, or pass --no-run and give arguments with -D/--arg")


def _arguments(raw: RawLaunch, overrides: Overrides) -> tuple[tuple, dict]:
    """A captured launch's arguments, with the command line's -D/--arg applied."""
    if not overrides:
        return raw.args, raw.kwargs
    bound = bind_arguments(raw.jit, raw.args, raw.kwargs)
    for name, value in overrides.defines.items():
        bound[name] = value
    for name, kind in overrides.args.items():
        if name in bound:
            bound[name] = _value_for_type(name, kind)
    return (), bound


def _launch(raw: RawLaunch, by_jit: dict[int, Kernel], overrides: Overrides) -> Launch:
    kernel = by_jit[id(raw.jit)]
    if kernel.inductor is not None:  # the wrapper passes no constexprs: the config's, then -D's
        config = (raw.autotune_configs or [None])[raw.autotune_index or 0]
        args, kwargs = raw.args, {**(config_kwargs(config) if config is not None else {}), **overrides.defines}
    else:
        args, kwargs = _arguments(raw, overrides)
    return Launch(kernel, args, kwargs, _grid_of(raw), "captured", raw.autotune_index, raw.autotune_count,
                  raw.interp_error, autotune_first=raw.autotune_first, warmup=raw.warmup)


def _grid_of(raw: RawLaunch) -> tuple[int, ...] | None:
    grid = raw.grid
    try:
        if callable(grid):
            grid = grid(bind_arguments(raw.jit, raw.args, raw.kwargs))
        grid = tuple(int(g) for g in grid)
    except Exception:  # a grid irscope cannot evaluate is shown as unknown, not an error
        return None
    return grid + (1,) * (3 - len(grid))
