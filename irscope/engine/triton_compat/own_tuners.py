"""Autotuners with a `run` of their own: a library's subclass of Triton's Autotuner (FlagGems' LibTuner) that
keys, caches and chooses in its own way and benchmarks each config through `Autotuner._bench`.

Triton's own `Autotuner.run` is replaced while a file runs (capture.py), so irscope knows before the launch
which configs it will try; a subclass's `run` is its own code, and what it will try is known only once it
has tried it. So while a capture runs, each such `run` (of the subclasses defined before the capture and of
those the file defines while it runs) is wrapped: inside it, the configs its `_bench` calls benchmark are one
tuning (`OwnTuning`), whose numbers every launch recorded for it gets once the run returns (the first
benchmarked is the one shown, the others are named, as for `triton.autotune`); the launch the run then makes
with the config it chose is that config's (`config_launched`): not recorded again when the config was among
those benchmarked (on a GPU, the same compile), recorded as that config when it was not (the library's own
tuning cache already held a choice for the key, and the GPU compiles that config alone)."""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

from irscope.engine.triton_compat.autotune import inner_jit, known_configs
from irscope.engine.triton_compat.capture_state import capture_state

_WRAPPED = "__irscope_own_run__"  # on a wrapper: the run it wraps


@dataclass
class OwnTuning:
    """One call of an autotuner's own run: the configs it benchmarked (by number), and the launches recorded
    for it."""

    tuner: Any
    jit: JITFunction | None
    numbers: list[int] = field(default_factory=list)
    raws: list[Any] = field(default_factory=list)

    def chosen(self, kwargs: dict) -> tuple[int, Any] | None:
        """A launch of the tuner's JIT function made by its run: the number of the config it is of
        (`config_launched`) and the launch recorded when that config was benchmarked (None if it was not);
        None if it is of no known config."""
        number = config_launched(self, kwargs)
        if number is None:
            return None
        return number, next((r for r in self.raws if r.autotune_index == number), None)

    def adopt(self, raw: Any) -> None:
        """The run launched a config it did not benchmark (its own cache held the choice): the one config this
        launch compiles, so it is shown."""
        raw.autotune_configs = known_configs(self.tuner)
        raw.autotune_first = True
        if raw.autotune_index not in self.numbers:
            self.numbers.append(raw.autotune_index)
        self.raws.append(raw)

    def settle(self) -> None:
        """Every launch recorded for this tuning names every config it benchmarked, in its order."""
        tried = tuple(self.numbers)
        for raw in self.raws:
            raw.autotune_tried = tried


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - values that do not compare (tensors): not the config's
        return False


def config_launched(tuning: OwnTuning, kwargs: dict) -> int | None:
    """The number of the config a launch made inside the tuner's own run is of: the known config whose
    meta-parameters (and launch options, where the launch passes them) it passes; one benchmarked in this
    tuning first. None if it passes no config's."""
    known = known_configs(tuning.tuner)

    def fits(config) -> bool:
        if not all(k in kwargs and _same(kwargs[k], v) for k, v in config.kwargs.items()):
            return False
        options = ("num_warps", "num_stages", "num_ctas", "maxnreg")
        return all(
            _same(kwargs[o], getattr(config, o))
            for o in options
            if o in kwargs and getattr(config, o, None) is not None
        )

    fitting = [n for n, config in enumerate(known) if fits(config)]
    return next((n for n in fitting if n in tuning.numbers), fitting[0] if fitting else None)


def _wrap(run: Callable) -> Callable:
    @functools.wraps(run)
    def own_run(self, *args, **kwargs):
        outer = capture_state.tuning
        if outer is not None and outer.tuner is self:
            return run(self, *args, **kwargs)  # a subclass's run calling its parent's
        capture_state.tuning = OwnTuning(self, inner_jit(self))
        try:
            return run(self, *args, **kwargs)
        finally:
            capture_state.tuning.settle()
            capture_state.tuning = outer

    setattr(own_run, _WRAPPED, run)
    return own_run


def _subclasses() -> Iterator[type]:
    seen, stack = set(), list(Autotuner.__subclasses__())
    while stack:
        cls = stack.pop()
        if cls not in seen:
            seen.add(cls)
            stack.extend(cls.__subclasses__())
            yield cls


@contextlib.contextmanager
def own_runs_wrapped() -> Iterator[None]:
    """While the block runs, the `run` of every Autotuner subclass that has one of its own is wrapped (those
    defined inside the block too); each is put back after."""
    patched: list[tuple[type, Callable]] = []

    def wrap_class(cls: type) -> None:
        run = vars(cls).get("run")
        if callable(run) and not hasattr(run, _WRAPPED):
            patched.append((cls, run))
            cls.run = _wrap(run)

    parent_hook = vars(Autotuner).get("__init_subclass__")

    def init_subclass(cls, **kwargs):
        if parent_hook is not None:
            parent_hook.__get__(None, cls)(**kwargs)
        else:
            super(Autotuner, cls).__init_subclass__(**kwargs)
        wrap_class(cls)

    hook = classmethod(init_subclass)
    setattr(init_subclass, _WRAPPED, parent_hook)
    for cls in list(_subclasses()):
        wrap_class(cls)
    Autotuner.__init_subclass__ = hook
    try:
        yield
    finally:
        _put_back_hook()
        for cls, run in reversed(patched):
            cls.run = run


def _put_back_hook() -> None:
    """Autotuner's `__init_subclass__` as it was before own_runs_wrapped installed its own."""
    hook = vars(Autotuner).get("__init_subclass__")
    function = getattr(hook, "__func__", None)
    if function is None or not hasattr(function, _WRAPPED):
        return
    parent = getattr(function, _WRAPPED)
    if parent is None:
        del Autotuner.__init_subclass__
    else:
        Autotuner.__init_subclass__ = parent


def unwrap_own_runs() -> None:
    """Put back every own run a capture wrapped, for a process forked in the middle of one."""
    _put_back_hook()
    for cls in _subclasses():
        run = vars(cls).get("run")
        if hasattr(run, _WRAPPED):
            cls.run = getattr(run, _WRAPPED)
