"""A kernel file, opened (`Workspace`): its kernels, the launches its own code made, and what compiling
them gives, one compilation per distinct specialization. `session.open_file` makes one.

The specializations only irscope's exploration of a benchmark sweep reached, and the launches whose autotune
config only a GPU's timing picks, are named (`Named`), not compiled until asked for (`named`,
`compile_named`, `compilation_at`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from irscope.base.errors import IrscopeError
from irscope.base.missing import Missing
from irscope.base.model import Kernel, Launch
from irscope.engine.capture.discover import UserFile, kernel_file_text
from irscope.engine.capture.kernel_params import pointer_params
from irscope.engine.compile.compilation import (
    Compilation,
    check_launch,
    compile_launch,
    specialization_letters,
)
from irscope.engine.overrides import Overrides, annotated_type, value_for_type
from irscope.engine.triton_compat import (
    Specialized,
    Target,
    config_kwargs,
    constexpr_param_names,
    constexprs_by_param,
    param_defaults,
)

# a pytest test function at the top level of a file: its kernels may be launched by its tests alone
_TEST_FUNCTION = re.compile(r"^def test_\w*\(", re.MULTILINE)


@dataclass
class Named:
    """A specialization listed, not compiled when the file opens, compiled when asked for: one that only
    irscope's exploration of a benchmark sweep reached (the launches of a `perf_report`'s later x values,
    triton_compat/benchmark_sweep.py; each compile costs seconds, and tutorial 06's sweeps reach dozens), or
    an autotuned launch whose config only a GPU's timing picks (Launch.choice_by_timing): showing the first
    config for it would show a compilation a GPU may never make.

    `number` is its `--launch N`: a kernel's specializations are numbered compiled ones first (as the
    file's own run made them), then the named ones."""

    launch: Launch
    spec: Specialized
    number: int

    @property
    def kernel(self) -> Kernel:
        return self.launch.kernel

    @property
    def signature(self) -> dict[str, str]:
        return dict(self.spec.signature)

    @property
    def constexprs(self) -> dict[str, Any]:
        return constexprs_by_param(self.kernel.jit, self.spec.constexprs)

    @property
    def specialization(self) -> dict[str, str]:
        return specialization_letters(self.kernel.jit, self.spec)

    @property
    def num_warps(self) -> int:
        return self.spec.options.num_warps

    @property
    def num_stages(self) -> int:
        return self.spec.options.num_stages


@dataclass
class Workspace:
    """A kernel file, opened: its kernels, the launches its own code made, and their compilations."""

    user_file: UserFile
    kernels: list[Kernel]
    launches: list[Launch]
    target: Target
    overrides: Overrides
    run_warning: str | None = None
    # what the run skipped or cut short, one line each
    notes: list[str] = field(default_factory=list)
    device: str = ""  # the GPU the file saw: this machine's, or irscope's virtual one (said so)
    last_output: str = ""  # the last line the file printed (why it launched nothing, often)
    # the file's kernels this run did not launch, and why
    missing: list[Missing] = field(default_factory=list)
    # (kernel, target, specialization key) -> how many captured launches that compilation stands for
    _launch_counts: dict[tuple, int] = field(default_factory=dict, repr=False)

    # ---- kernels and launches

    def kernel(self, name: str | None) -> Kernel:
        if name is None:
            launched = {id(launch.kernel): launch.kernel for launch in self.launches}
            if len(launched) == 1:
                return next(iter(launched.values()))
            if len(self.kernels) == 1:
                return self.kernels[0]
            names = ", ".join(self.kernel_label(k) for k in self.kernels)
            raise IrscopeError(
                f"{self.user_file.shown} has several kernels ({names}); pick one with --kernel NAME"
            )
        found = [k for k in self.kernels if name in (k.name, k.qualified_name)]
        if len(found) == 1:
            return found[0]
        if found:
            names = ", ".join(k.qualified_name for k in found)
            raise IrscopeError(
                f"several kernels are named '{name}' ({names}); pick one with --kernel MODULE:NAME"
            )
        names = ", ".join(self.kernel_label(k) for k in self.kernels)
        raise IrscopeError(
            f"no kernel named '{name}' in {self.user_file.shown}; the kernels there are: {names}"
        )

    def kernel_label(self, kernel: Kernel) -> str:
        """A kernel's name, with its module when the opened file does not define it."""
        return kernel.name if kernel.file == self.user_file.path else kernel.qualified_name

    def shown_path(self, path: str | None) -> str | None:
        """A path as the user would write it: the opened file as typed, others relative when shorter."""
        if path is None or path == self.user_file.path:
            return self.user_file.shown if path else path
        relative = os.path.relpath(path)
        return relative if not relative.startswith("../..") else path

    def cell(self, path: str | None, line: int | None) -> str | None:
        """Where a line of the opened notebook is in it, `cell 3, line 5`; None for any other file."""
        notebook = self.user_file.notebook
        if notebook is None or path != self.user_file.path or not line:
            return None
        return notebook.position(line)

    def cell_labels(self, path: str | None) -> tuple[str, ...]:
        """Each line of the opened notebook as `cell:line` (`3:5`), "" for a line of no cell's (the
        `# In[cell N]` line before each); empty for any other file."""
        notebook = self.user_file.notebook
        if notebook is None or path != self.user_file.path:
            return ()
        lines = len(self.user_file.text.splitlines())
        found = (notebook.cell_of(line) for line in range(1, lines + 1))
        return tuple(f"{at[0]}:{at[1]}" if at else "" for at in found)

    def source_text(self, kernel: Kernel) -> str:
        """The text of the file that defines the kernel: the source pane and the source map read it."""
        return (
            self.user_file.text
            if kernel.file == self.user_file.path
            else kernel_file_text(kernel.file)
        )

    def compilation_at(self, kernel: Kernel, config: int | None, launch: int):
        """The compilation of the kernel's `launch`-th distinct specialization (`--launch`), or one line
        naming the choices. Past the ones compiled when the file opened come those named, not compiled
        (Named): such a one is compiled now."""
        comps = self.compile(kernel, config=config)
        if 0 <= launch < len(comps):
            return comps[launch]
        named = self.named(kernel, config=config)
        if named and len(comps) <= launch < len(comps) + len(named):
            return self.compile_named(named[launch - len(comps)])
        total = len(comps) + len(named)
        more = (
            f" ({len(comps)} compiled when the file opened, {len(named)} more named, not compiled)"
            if named
            else ""
        )
        raise IrscopeError(
            f"--launch {launch}: {kernel.name} has {total} distinct specialization(s){more}; "
            f"choose 0 to {total - 1}"
        )

    def launches_of(self, kernel: Kernel, config: int | None = None) -> list[Launch]:
        """Launches of a kernel, narrowed to one autotune config (default: the first)."""
        if kernel.is_autotuned:
            count = len(kernel.autotune_configs or [])
            index = 0 if config is None else config
            if not 0 <= index < count:
                raise IrscopeError(
                    f"--config {config}: {kernel.name} has {count} autotune configs; "
                    f"choose 0 to {count - 1}"
                )
        elif config not in (None, 0):
            raise IrscopeError(
                f"--config {config}: {kernel.name} is not autotuned; leave --config out"
            )
        captured = [launch for launch in self.launches if launch.kernel is kernel]
        # its specialization is in triton_meta, not in arguments
        if not captured and kernel.inductor is not None:
            index = config or 0
            return [
                Launch(
                    kernel,
                    (),
                    dict(self.overrides.defines),
                    None,
                    "given",
                    index if kernel.is_autotuned else None,
                    len(kernel.autotune_configs or []) or None,
                    autotune_first=index == 0,
                )
            ]
        if not captured:
            return [self._launch_from_overrides(kernel, config)]
        found = [launch for launch in captured if with_config(launch, config)]
        if not found:  # never make up arguments for a kernel the file did launch
            tried = sorted({n for launch in captured for n in launch.autotune_tried})
            which = (
                f" (its launches try config{'s' * (len(tried) > 1)} {', '.join(map(str, tried))})"
                if tried
                else ""
            )
            raise IrscopeError(
                f"{self.user_file.shown} launched {kernel.name}, but not with autotune config "
                f"{config or 0}; its autotuner's pruning left that config out{which}, or its run "
                f"stopped early (see the warning above)"
            )
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
                kwargs[name] = value_for_type(name, self.overrides.args[name])
                if self.overrides.args[name].startswith("*"):
                    guesses[name] = f"a {self.overrides.args[name]} tensor, 16-byte aligned"
            elif name in defaults:
                kwargs[name] = defaults[name]
            elif name in constexpr_names:
                continue
            else:
                kind = annotated_type(param.annotation) or ("*fp32" if name in pointers else "i32")
                kwargs[name] = value_for_type(name, kind)
                guesses[name] = (
                    f"a {kind} tensor, 16-byte aligned"
                    if kind.startswith("*")
                    else f"{kwargs[name]!r} ({kind})"
                )
        if kernel.is_autotuned:
            kwargs.update(_config_kwargs(kernel, config or 0))
        missing = [n for n in constexpr_param_names(jit) if n not in kwargs]
        if missing:
            how = " ".join(f"-D {n}=VALUE" for n in missing)
            raise IrscopeError(
                f"{kernel.name} was not launched by {self.user_file.shown}, and its constexpr "
                f"{'parameter' if len(missing) == 1 else 'parameters'} {', '.join(missing)} "
                f"{'has' if len(missing) == 1 else 'have'} no value; pass {how}"
            )
        for name, value in self.overrides.defines.items():
            kwargs.setdefault(name, value)  # launch options: num_warps, num_stages, ...
        return Launch(
            kernel,
            (),
            kwargs,
            None,
            "given",
            config if kernel.is_autotuned else None,
            len(kernel.autotune_configs) if kernel.is_autotuned else None,
            guesses=guesses,
        )

    # ---- compiling

    def compile(
        self, kernel: Kernel, target: Target | None = None, config: int | None = None
    ) -> list[Compilation]:
        """Every distinct compilation of a kernel's launches, for one target."""
        target = target or self.target
        seen: dict[str, Compilation] = {}
        counts: dict[str, int] = {}
        grids: dict[str, dict[tuple[int, ...], int]] = {}  # each one's grids: launches with each
        firsts: dict[
            str, dict[tuple[int, ...], Launch]
        ] = {}  # each one's first launch with each grid
        if kernel.inductor is not None and config is None and kernel.is_autotuned:
            # each config of Inductor's list is a compilation: CachingAutotuner precompiles them all
            out = []
            for index in range(len(kernel.autotune_configs or [])):
                out.extend(
                    c for c in self.compile(kernel, target, index) if all(c is not o for o in out)
                )
            return out
        # A warmup's grid is not what the kernel runs with (tutorial 02 warms up with grid=(1,), then launches
        # the compiled kernel on every SM): a real launch of the same binary, compiled first, stands for it.
        # The launches of a benchmark sweep's exploration, and those whose config only a GPU's timing picks,
        # are named, not compiled (named()).
        for launch in sorted(
            (la for la in self.launches_of(kernel, config) if not la.named_only(config)),
            key=lambda la: la.warmup,
        ):
            comp = compile_launch(
                launch, target, self.source_text(kernel), given=self.overrides.describe()
            )
            key = comp.spec.cache_key()
            seen.setdefault(key, comp)
            counts[key] = counts.get(key, 0) + 1
            if not launch.warmup and launch.grid:
                of_key = grids.setdefault(key, {})
                of_key[tuple(launch.grid)] = of_key.get(tuple(launch.grid), 0) + 1
                firsts.setdefault(key, {}).setdefault(tuple(launch.grid), launch)
            # on a GPU, the later launches of its specialization, not kept: their grids and counts (their
            # arguments are gone, so no roofline of their own)
            for grid, times in launch.repeat_grids.items():
                of_key = grids.setdefault(key, {})
                of_key[grid] = of_key.get(grid, 0) + times
        for key, count in counts.items():
            self._launch_counts[(id(kernel), target.name, key)] = count
        for key, comp in seen.items():
            comp.grid_launches = grids.get(key, {})
            comp.first_launch_by_grid = firsts.get(key, {})
        return list(seen.values())

    def launch_count(self, comp: Compilation) -> int:
        """How many of the captured launches compile to `comp` (1 for one made from -D/--arg)."""
        key = (id(comp.launch.kernel), comp.target.name, comp.spec.cache_key())
        return self._launch_counts.get(key, 1)

    def compile_all(
        self,
        target: Target | None = None,
        kernel_name: str | None = None,
        config: int | None = None,
    ) -> list[Compilation]:
        if kernel_name is not None:
            return self.compile(self.kernel(kernel_name), target, config)
        launched = [k for k in self.kernels if any(launch.kernel is k for launch in self.launches)]
        if not launched and any(k.inductor is not None for k in self.kernels):
            launched = [
                k for k in self.kernels if k.inductor is not None
            ]  # a kernel module: each as Inductor compiles it
        if not launched:
            if self.overrides and len(self.kernels) == 1:
                launched = self.kernels
            else:
                names = ", ".join(k.name for k in self.kernels)
                said = (
                    f" (the last thing it printed: {self.last_output!r})"
                    if self.last_output
                    else ""
                )
                first = self.missing[0] if self.missing else None
                # the run did not get that far (missing.py)
                if first is not None and first.ended == "stopped":
                    how = first.how.replace(f"--kernel {first.kernel} ", "--kernel NAME ")
                    raise IrscopeError(
                        f"{self.user_file.shown} launched no kernel: {first.reason}{said}; {how} "
                        f"(kernels: {names})"
                    )
                tests = (
                    f"; its test functions launch them: irscope -m pytest {self.user_file.shown}"
                    if _TEST_FUNCTION.search(kernel_file_text(self.user_file.path))
                    else ""
                )
                raise IrscopeError(
                    f"{self.user_file.shown} launches no kernel from its __main__ code{said}; pick one "
                    f"with --kernel NAME (kernels: {names}) and give its arguments with -D/--arg{tests}"
                )
        out: list[Compilation] = []
        for kernel in launched:
            out.extend(self.compile(kernel, target, config))
        return out

    def named(
        self, kernel: Kernel, target: Target | None = None, config: int | None = None
    ) -> list[Named]:
        """The kernel's specializations named, not compiled (Named), each once and none that compile()
        compiles, in the order the file reached them. Each is specialized
        as the JIT would (a few milliseconds), not compiled; a launch the JIT rejects is left out (its
        error would only be seen on a GPU at that size)."""
        try:
            # as in compile(): a real launch of a specialization stands for a warmup of it (whose grid is not run)
            explored = sorted(
                (la for la in self.launches_of(kernel, config) if la.named_only(config)),
                key=lambda la: la.warmup,
            )
        except IrscopeError:  # not launched with that config: nothing explored either
            return []
        if not explored:
            return []
        target = target or self.target
        comps = self.compile(kernel, target, config)
        seen = {comp.spec.cache_key() for comp in comps}
        out: list[Named] = []
        for launch in explored:
            try:
                spec = check_launch(launch, target)
            except IrscopeError:
                continue
            if spec.cache_key() not in seen:
                seen.add(spec.cache_key())
                out.append(Named(launch, spec, len(comps) + len(out)))
        return out

    def compile_named(self, named: Named, target: Target | None = None) -> Compilation:
        """Compile a named specialization: exactly as a launch compiled when the file opened."""
        return compile_launch(
            named.launch,
            target or self.target,
            self.source_text(named.kernel),
            given=self.overrides.describe(),
        )

    def named_all(self, kernel_name: str | None = None, config: int | None = None) -> list[Named]:
        """named() for each kernel compile_all compiles (or for `kernel_name`), kernel by kernel."""
        if kernel_name is not None:
            return self.named(self.kernel(kernel_name), config=config)
        out: list[Named] = []
        for kernel in self.kernels:
            if any(
                launch.kernel is kernel and launch.named_only(config) for launch in self.launches
            ):
                out.extend(self.named(kernel, config=config))
        return out

    def not_launched(self) -> list[Kernel]:
        """The file's own kernels that it did not launch (a library's unlaunched kernels are not listed)."""
        return [
            k
            for k in self.kernels
            if k.file == self.user_file.path
            and k.inductor is None
            and not any(launch.kernel is k for launch in self.launches)
        ]


def with_config(launch, config: int | None) -> bool:
    """A launch (or a RawLaunch) of autotune config `config`; with None, of the first config its autotuner
    would try (not always config 0: pruning may leave that out). A launch of a kernel not autotuned: True."""
    if launch.autotune_index is None:
        return True
    return launch.autotune_first if config is None else launch.autotune_index == config


def _config_kwargs(kernel: Kernel, index: int) -> dict:
    return config_kwargs((kernel.autotune_configs or [])[index])
