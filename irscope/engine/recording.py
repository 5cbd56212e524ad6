"""Record one program of a captured launch in Triton's interpreter: every line it executes (kernel
and @triton.jit helpers, loop iterations included) with its locals, and every load and store with the
element offsets it touches.

Recording leaves the user's results as the file left them. It runs on copies of the launch's tensors
(`Recording.tensors` holds them afterwards: what this program wrote, on top of the inputs), except in a
forked copy of the worker (forked_map.py), where nothing else reads them: there the program runs on the
launch's own memory, and every byte its stores and atomics overwrote is put back when it ends. Copying a
library's tensors for each program recorded took most of a report's time (efficient-cross-entropy's
projection weights); putting back what one program wrote costs what it wrote.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from collections import Counter
from typing import Any, Iterator

import numpy as np
import torch

from irscope.analysis.recording.trace import (
    FrameRef,
    MemoryAccess,
    OutOfBoundsAccess,
    Recording,
    Step,
    launch_grid,
    normalize_program_id,
)
from irscope.analysis.recording.values import (
    AddressMap,
    Region,
    Value,
    as_numbers,
    byte_offsets,
    describe_constant,
)
from irscope.base.errors import IrscopeError
from irscope.base.model import Launch
from irscope.base.names import unrecordable
from irscope.engine.forked_map import throwaway
from irscope.engine.triton_compat import (
    FlopHook,
    MemoryHook,
    constexpr_param_names,
    interpreter_value,
    jit_code_ids,
    kernel_parameters,
    pointer_elem_bytes,
    reinterpreted_tensor,
    run_one_program,
)


class _Recorder:
    def __init__(
        self,
        code_ids: set[tuple[str, str]],
        addresses: AddressMap,
        with_locals: bool,
        max_steps: int,
        constexprs: set[str] = frozenset(),
        budget_bytes: int = 1 << 30,
    ):
        self.code_ids = code_ids
        self.constexprs = constexprs
        self.addresses = addresses
        self.with_locals = with_locals
        self.max_steps = max_steps
        self.steps: list[Step] = []
        self.accesses: list[MemoryAccess] = []
        self.frames: list[Any] = []  # traced frames, outermost first
        self.frame_step: dict[int, int] = {}  # id(frame) -> its latest step
        self.unwinding: set[int] = set()  # frames an exception is passing through
        self.cache: dict[int, tuple[Any, Value]] = {}
        self.constants: dict[tuple, Value] = {}
        self.kept_bytes = 0  # numbers copied into Values so far
        self.budget_bytes = budget_bytes  # past it, blocks keep only their summary
        self.debugger_steps: list[int] = []  # the steps that called breakpoint() / pdb.set_trace()
        self.arithmetic: Counter = Counter()  # (dtype, kind, elements, flops) -> ops run (FlopHook)
        # set when the program runs on the launch's own memory (in a forked copy)
        self.overwritten: _Overwritten | None = None

    # ---- values

    def snapshot(self, f_locals: dict) -> dict[str, Value]:
        out = {}
        for name, value in f_locals.items():
            if name.startswith("__"):
                continue
            if name in self.constexprs and isinstance(value, (bool, int, float, type(None), str)):
                key = ("constexpr", name, type(value), value)
                if key not in self.constants:  # one Value per constant: unchanged between steps
                    self.constants[key] = describe_constant(value)
                out[name] = self.constants[key]
                continue
            cached = self.cache.get(id(value))
            if cached is None or cached[0] is not value:
                described = describe(value, self.addresses, self.kept_bytes < self.budget_bytes)
                if described.data is not None:
                    self.kept_bytes += described.data.nbytes
                cached = (value, described)
                self.cache[id(value)] = cached  # keeps `value` alive, so its id is not reused
            out[name] = cached[1]
        return out

    def stack(self) -> tuple[FrameRef, ...]:
        return tuple(FrameRef(f.f_code.co_name, f.f_lineno) for f in self.frames)

    def add_step(
        self, frame, event: str, extra: dict[str, Value] | None = None, message: str = ""
    ) -> None:
        if len(self.steps) >= self.max_steps:
            raise RuntimeError(
                f"the program ran more than {self.max_steps} lines; irscope stopped recording"
            )
        values = self.snapshot(frame.f_locals)
        if extra:
            values.update(extra)
        step = Step(
            len(self.steps),
            frame.f_code.co_name,
            frame.f_lineno,
            event,
            self.stack(),
            values,
            message=message,
        )
        self.steps.append(step)
        self.frame_step[id(frame)] = step.index

    # ---- sys.settrace

    def is_traced(self, code) -> bool:
        return (code.co_filename, code.co_name) in self.code_ids

    def global_trace(self, frame, event, arg):
        if event == "call" and self.is_traced(frame.f_code):
            self.frames.append(frame)
            return self.local_trace
        return None

    def local_trace(self, frame, event, arg):
        if event == "line":
            self.unwinding.discard(id(frame))
            self.add_step(frame, "line")
        elif event == "exception":
            self.unwinding.add(id(frame))
        elif event == "return":
            if id(frame) not in self.unwinding:
                extra = None
                if len(self.frames) > 1 and arg is not None:
                    extra = {"(return)": describe(arg, self.addresses)}
                self.add_step(frame, "return", extra)
            if self.frames and self.frames[-1] is frame:
                self.frames.pop()
        return self.local_trace

    # ---- memory

    def innermost_frame(self):
        frame = sys._getframe(1)
        while frame is not None and not self.is_traced(frame.f_code):
            frame = frame.f_back
        return frame

    def on_debugger_call(self, *_args, **_kwargs) -> None:
        """breakpoint() or pdb.set_trace() in the kernel: no debugger starts (its tracer would replace the
        recorder's, and no one may be at a terminal); the step that called it is where a stepper stops."""
        frame = self.innermost_frame()
        step = self.frame_step.get(id(frame)) if frame is not None else None
        if step is not None and step not in self.debugger_steps:
            self.debugger_steps.append(step)

    def on_flops(self, hook: FlopHook) -> None:
        self.arithmetic[(hook.dtype, hook.kind, hook.elements, hook.flops)] += 1

    def on_access(self, hook: MemoryHook) -> None:
        addresses = np.asarray(hook.addresses)
        mask = (
            None
            if hook.mask is None
            else np.broadcast_to(np.asarray(hook.mask, dtype=bool), addresses.shape)
        )
        region = self.addresses.region_of(addresses, mask)
        frame = self.innermost_frame()
        line = frame.f_lineno if frame is not None else 0
        step = self.frame_step.get(id(frame)) if (self.with_locals and frame is not None) else None
        offsets_b = byte_offsets(addresses, region)
        access = MemoryAccess(
            line,
            hook.kind,
            region.param if region else None,
            offsets_b // hook.elem_bytes,
            offsets_b,
            None if mask is None else mask.copy(),
            hook.elem_bytes,
            hook.dtype,
            frame.f_code.co_name if frame is not None else "",
            step,
            _last_line(frame, line),
        )
        self.accesses.append(access)
        if step is not None:
            self.steps[step].accesses.append(len(self.accesses) - 1)
        bad = self.addresses.outside(addresses, hook.elem_bytes, mask)
        if bad.any():
            raise OutOfBoundsAccess(_out_of_bounds_text(access, bad, region))
        if self.overwritten is not None and hook.kind != "load":
            self.overwritten.save(addresses, hook.elem_bytes, mask)


def _last_line(frame, line: int) -> int:
    """The last line of the expression the frame is executing: a `tl.load(` written over several lines is
    recorded at its first line (f_lineno), while Triton may locate the op at a later one (Liger's cross
    entropy: the load at line 153, its pointer and TTGIR op at line 154)."""
    if frame is None or not hasattr(frame.f_code, "co_positions"):  # Python 3.10
        return line
    positions = _positions(frame.f_code)
    index = frame.f_lasti // 2
    if index >= len(positions):
        return line
    start, end = positions[index]
    return max(line, end or line) if start == line else line


@functools.lru_cache(maxsize=256)
def _positions(code) -> tuple:
    """(first line, last line) of each instruction of a code object: read once per kernel, not per access."""
    return tuple((start, end) for start, end, _col, _end_col in code.co_positions())


def _out_of_bounds_text(access: MemoryAccess, bad: np.ndarray, region: Region | None) -> str:
    lanes = np.argwhere(bad)
    first = tuple(int(i) for i in lanes[0])
    offset = int(access.offsets[first]) if access.offsets.ndim else int(access.offsets)
    lane = first[0] if len(first) == 1 else first
    what = "reads" if access.kind == "load" else "writes"
    if region is None:
        return f"{access.kind} {what} an address outside every argument tensor (lane {lane})"
    return (
        f"{access.kind} {what} {region.param}[{offset}] (lane {lane}, {len(lanes)} lane(s) in all), "
        f"outside {region.param}, which has {region.numel} elements; mask those lanes off"
    )


def _copy_arguments(
    arguments: dict[str, Any], in_place: bool = False
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """Copies of the tensors (storage by storage, so views that share memory still share it): a program of a
    kernel that reads what another program writes (a lock, a count) must see the memory as the run left it,
    not as an earlier recording did. `in_place`: tensors whose memory is the host's are used as they are
    (the caller puts back what the program overwrites: _Overwritten); memory on a real GPU is still copied."""
    storages: dict[tuple, Any] = {}
    copied: dict[str, Any] = {}
    tensors: dict[str, torch.Tensor] = {}
    for name, value in arguments.items():
        wrapped = reinterpreted_tensor(value)
        # reinterpret(t, dtype), a tensor descriptor: copy t, wrap the copy alike
        if wrapped is not None:
            inner_copied, inner_tensors = _copy_arguments({name: wrapped[0]}, in_place)
            copied[name], tensors[name] = wrapped[1](inner_copied[name]), inner_tensors[name]
            continue
        if isinstance(value, torch.Tensor):
            storage = value.untyped_storage()
            if in_place and storage.device.type == "cpu":
                copied[name] = tensors[name] = value
                continue
            key = (storage.data_ptr(), str(value.device))
            if key not in storages:
                storages[key] = storage.cpu() if value.device.type != "cpu" else storage.clone()
            copy = torch.empty(0, dtype=value.dtype).set_(
                storages[key], value.storage_offset(), value.size(), value.stride()
            )
            copied[name] = tensors[name] = copy
        else:
            copied[name] = value
    return copied, tensors


class _Overwritten:
    """What the stores and atomics of a program run on the launch's own memory overwrote, put back by
    `restore` in the reverse order (the oldest bytes last, so an element written twice gets its first)."""

    def __init__(self, regions: list[Region]):
        spans = sorted({(r.start, r.end) for r in regions if r.end > r.start})
        self._memory = [(start, end, _host_bytes(start, end - start)) for start, end in spans]
        # (the memory written, the byte indexes in it, the bytes they held), in the order written
        self._saved: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def save(self, addresses: np.ndarray, elem_bytes: int, mask: np.ndarray | None) -> None:
        written = np.asarray(addresses).astype(np.uint64).reshape(-1)
        if mask is not None:
            written = written[np.asarray(mask, dtype=bool).reshape(-1)]
        for start, end, memory in self._memory:
            inside = written[(written >= start) & (written + np.uint64(elem_bytes) <= end)]
            if inside.size:
                index = (inside - np.uint64(start)).astype(np.int64)[:, None] + np.arange(
                    elem_bytes
                )
                self._saved.append((memory, index, memory[index]))

    def restore(self) -> None:
        for memory, index, old in reversed(self._saved):
            memory[index] = old
        self._saved.clear()


def _host_bytes(address: int, size: int) -> np.ndarray:
    """The `size` bytes of host memory at `address` as a writable uint8 array (no copy)."""
    import ctypes

    return np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(address))


def _regions(tensors: dict[str, torch.Tensor]) -> dict[str, Region]:
    out = {}
    for name, t in tensors.items():
        storage = t.untyped_storage()
        out[name] = Region(
            name,
            t.data_ptr(),
            storage.data_ptr(),
            storage.data_ptr() + storage.nbytes(),
            t.element_size(),
            t.numel(),
            tuple(t.shape),
            _dtype_name(t.dtype),
            None if t.is_contiguous() else tuple(t.stride()),
        )
    return out


_DTYPE_NAMES = {
    torch.float16: "fp16",
    torch.bfloat16: "bf16",
    torch.float32: "fp32",
    torch.float64: "fp64",
    torch.int8: "int8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.uint8: "uint8",
    torch.bool: "int1",
}


def _dtype_name(dtype: torch.dtype) -> str:
    return _DTYPE_NAMES.get(dtype, str(dtype).removeprefix("torch."))


def record_program(
    launch: Launch,
    program_id: int | tuple[int, ...] = 0,
    *,
    with_locals: bool = True,
    max_steps: int = 500_000,
    budget_bytes: int = 1 << 30,
) -> Recording:
    """Run one program of `launch` in the interpreter and record it.

    with_locals=False records only the memory accesses (no line tracing: fast, for analyses that run
    many programs). Past `budget_bytes` of copied numbers (long loops over big tiles), later tensors
    keep their summary and statistics but not their elements. An exception in the kernel ends the
    recording with an "exception" step and `Recording.error`; it is not raised. Bad program ids raise
    IrscopeError, and so does a kernel the interpreter cannot run at all (a Gluon kernel).
    """
    kernel = launch.kernel
    not_recordable = unrecordable(kernel.language)
    if not_recordable is not None:
        raise IrscopeError(f"{kernel.name}: {not_recordable}")
    grid = launch_grid(launch)
    pid = normalize_program_id(program_id, grid)
    # in a forked copy nothing else reads the launch's tensors: the program runs on them, then they are put back
    in_place = throwaway()
    arguments, tensors = _copy_arguments(
        kernel_parameters(kernel.jit, launch.args, launch.kwargs), in_place
    )
    regions = _regions(tensors)
    addresses = AddressMap(list(regions.values()))
    recorder = _Recorder(
        jit_code_ids(kernel.jit),
        addresses,
        with_locals,
        max_steps,
        set(constexpr_param_names(kernel.jit)),
        budget_bytes,
    )
    if in_place:
        recorder.overwritten = _Overwritten(list(regions.values()))
    error = error_line = None
    start = time.perf_counter()
    try:
        # a GPU computes NaN and infinity without a word: NumPy's warnings would reach the user's terminal
        with _debugger_calls_noted(recorder), np.errstate(all="ignore"):
            run_one_program(
                kernel.jit,
                arguments,
                grid,
                pid,
                recorder.on_access,
                recorder.global_trace if with_locals else None,
                recorder.on_flops,
            )
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the kernel's own failure becomes the last step
        error, error_line = _record_exception(recorder, exc)
    finally:
        if recorder.overwritten is not None:
            recorder.overwritten.restore()
    if in_place:
        tensors = {}  # the launch's own, as they were: not what the program wrote
    seconds = time.perf_counter() - start
    return Recording(
        kernel.name,
        kernel.file,
        pid,
        grid,
        recorder.steps,
        recorder.accesses,
        regions,
        tensors,
        error,
        error_line,
        seconds,
        recorder.debugger_steps,
        dict(recorder.arithmetic),
    )


@contextlib.contextmanager
def _debugger_calls_noted(recorder: _Recorder) -> Iterator[None]:
    """While the program runs, `breakpoint()` (through sys.breakpointhook) and `pdb.set_trace()` call the
    recorder instead of starting pdb."""
    import pdb

    saved = sys.breakpointhook, pdb.set_trace
    sys.breakpointhook = pdb.set_trace = recorder.on_debugger_call
    try:
        yield
    finally:
        sys.breakpointhook, pdb.set_trace = saved


def _record_exception(recorder: _Recorder, exc: BaseException) -> tuple[str, int | None]:
    message = _exception_text(exc)
    traced = []
    tb = exc.__traceback__
    while tb is not None:
        if recorder.is_traced(tb.tb_frame.f_code):
            traced.append(tb)
        tb = tb.tb_next
    if not traced:
        return message, None
    inner = traced[-1]
    frame = inner.tb_frame
    values = recorder.snapshot(frame.f_locals) if recorder.with_locals else {}
    stack = tuple(FrameRef(t.tb_frame.f_code.co_name, t.tb_lineno) for t in traced)
    step = Step(
        len(recorder.steps),
        frame.f_code.co_name,
        inner.tb_lineno,
        "exception",
        stack,
        values,
        message=message,
    )
    if recorder.with_locals:
        # the failing line's accesses (the out-of-bounds one included) are shown with this step too
        line_step = recorder.frame_step.get(id(frame))
        step.accesses = [
            i
            for i, a in enumerate(recorder.accesses)
            if a.step == line_step and a.line == inner.tb_lineno
        ]
    recorder.steps.append(step)
    return message, inner.tb_lineno


def _exception_text(exc: BaseException) -> str:
    if isinstance(exc, OutOfBoundsAccess):
        return f"out-of-bounds access: {exc}"
    detail = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {detail[0]}" if detail else type(exc).__name__


def describe(value: Any, addresses: AddressMap, keep_numbers: bool = True) -> Value:
    """Any local of a kernel frame, as a Value (numbers are copied: later steps cannot change them).

    With keep_numbers=False (a recording over its memory budget) a block keeps its summary and
    statistics but not its elements."""
    parts = interpreter_value(value)
    if parts is not None:
        data, dtype, is_pointer, is_block = parts
        data = np.asarray(data)
        shape = tuple(int(s) for s in data.shape) if is_block else ()
        if is_pointer:
            region = addresses.region_of(data)
            elem = (
                region.elem_bytes
                if region is not None and region.dtype == dtype
                else pointer_elem_bytes(dtype)
            )
            offsets = byte_offsets(data, region) // elem
            return Value(
                "pointer",
                dtype,
                shape,
                offsets if is_block else offsets.reshape(-1)[:1],
                region.param if region else None,
            )
        if is_block and not keep_numbers:
            summary = Value("tensor", dtype, shape, as_numbers(data, dtype))
            return Value(
                "tensor",
                dtype,
                shape,
                None,
                text=summary.summary() + " (elements not kept)",
                _stats=summary.stats(),
            )
        numbers = np.array(as_numbers(data, dtype), copy=True)
        return Value(
            "tensor" if is_block else "scalar",
            dtype,
            shape,
            numbers if is_block else numbers.reshape(-1)[:1],
        )
    if type(value).__name__ == "constexpr":
        return describe_constant(getattr(value, "value", None))
    if isinstance(value, (bool, int, float)):  # a Python number: a loop index, a folded constant
        return Value("scalar", type(value).__name__, (), np.array([value]), text=repr(value))
    text = repr(value)
    return Value("other", type(value).__name__, text=text if len(text) <= 80 else text[:77] + "...")
