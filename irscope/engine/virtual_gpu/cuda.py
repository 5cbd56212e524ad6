"""`torch.cuda` (and `torch.accelerator`) for the virtual GPU: one device, the target's.

Each stand-in does what the real call means for a device whose memory is host memory and whose
kernels run, synchronously, in the interpreter: synchronizing, streams and events are no-ops (work is
done when the call returns), seeding seeds the CPU generator (that is where "cuda" random tensors come
from), memory statistics are zero. Timing is the one thing that cannot be answered: `Event.elapsed_time`
returns NaN, never a number that could pass for a measurement.
"""

from __future__ import annotations

import contextlib
import math
import types
from dataclasses import dataclass
from typing import Any

import torch

from irscope.engine.virtual_gpu.tensors import VIRTUAL_DEVICE


@dataclass(frozen=True)
class VirtualDeviceProperties:
    """What `torch.cuda.get_device_properties` answers: the attributes of torch's `_CudaDeviceProperties`."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int
    warp_size: int
    max_threads_per_multi_processor: int
    max_threads_per_block: int
    regs_per_multiprocessor: int
    shared_memory_per_block: int
    shared_memory_per_block_optin: int
    shared_memory_per_multiprocessor: int
    L2_cache_size: int
    clock_rate: int  # kHz
    memory_clock_rate: int  # kHz
    memory_bus_width: int  # bits
    gcnArchName: str = ""
    is_integrated: int = 0
    is_multi_gpu_board: int = 0
    uuid: str = "00000000-0000-0000-0000-000000000000"
    pci_bus_id: int = 0
    pci_device_id: int = 0
    pci_domain_id: int = 0

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // 2**20}MB, multi_processor_count={self.multi_processor_count}, "
            f"L2_cache_size={self.L2_cache_size // 2**20}MB) [virtual: no GPU here]"
        )


class Event:
    """A `torch.cuda.Event`. Work is finished when its call returns, so an event is always complete."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ):
        self.enable_timing = enable_timing
        self.device = VIRTUAL_DEVICE

    def record(self, stream=None) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end_event: "Event") -> float:
        """NaN: there is no GPU, so nothing was timed (any arithmetic on it stays NaN)."""
        return math.nan

    def ipc_handle(self):
        raise RuntimeError("irscope: a virtual GPU's events cannot be shared between processes")


class Stream:
    """A `torch.cuda.Stream`: the virtual device runs everything in order, on one stream."""

    def __init__(self, device=None, priority: int = 0, **_ignored):
        self.device = VIRTUAL_DEVICE
        self.priority = priority
        self.cuda_stream = 0
        self.stream_id = 0
        self.device_index = 0
        self.device_type = 1  # torch's DeviceType for CUDA

    def wait_event(self, event) -> None:
        pass

    def wait_stream(self, stream) -> None:
        pass

    def record_event(self, event=None) -> Event:
        return event if event is not None else Event()

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream)

    def __hash__(self) -> int:
        return 0


class CUDAGraph:
    """A `torch.cuda.CUDAGraph`: the captured code runs once while it is captured; a replay does nothing."""

    def capture_begin(self, *args, **kwargs) -> None:
        pass

    def capture_end(self) -> None:
        pass

    def replay(self) -> None:
        pass

    def reset(self) -> None:
        pass

    def pool(self):
        return (0, 0)


class _Nothing(contextlib.AbstractContextManager):
    """A context manager that changes nothing (device, stream and graph scopes of the one virtual device)."""

    def __init__(self, *args, **kwargs):
        self.idx = 0
        self.stream = args[0] if args else None

    def __exit__(self, *exc) -> None:
        return None


def _none(*args, **kwargs) -> None:
    return None


def _zero(*args, **kwargs) -> int:
    return 0


def _seed(seed) -> None:
    torch.default_generator.manual_seed(int(seed))


def _distinct(namespace: dict[str, Any]) -> dict[str, Any]:
    """Each name its own object: torch.compile (Dynamo) keeps one tracing rule per torch object, and refuses an
    object it finds under two names with different rules. A function is copied; a helper class subclassed."""
    out = {}
    for name, value in namespace.items():
        if isinstance(value, types.FunctionType):
            value = types.FunctionType(
                value.__code__, value.__globals__, name, value.__defaults__, value.__closure__
            )
            value.__qualname__ = name
        elif value is _Nothing:
            value = type(name, (_Nothing,), {})
        out[name] = value
    return out


# The questions about what the device is (not whether there is one): a file that asked one and then launched
# nothing may be written for another GPU (engine/capture/retarget.py).
DEVICE_QUESTIONS = (
    "get_device_properties",
    "get_device_capability",
    "get_device_name",
    "get_arch_list",
)


def cuda_namespace(
    props: VirtualDeviceProperties, arch: str, asked: set[str] | None = None
) -> dict[str, Any]:
    """Every `torch.cuda` name the virtual GPU replaces, and its stand-in. Each of DEVICE_QUESTIONS the
    file asks is added to `asked` (as `torch.cuda.NAME`)."""
    default_stream = Stream()
    current = {"stream": default_stream}

    def set_stream(stream) -> None:
        current["stream"] = stream if stream is not None else default_stream

    @contextlib.contextmanager
    def stream(s):
        previous = current["stream"]
        set_stream(s)
        try:
            yield s
        finally:
            current["stream"] = previous

    answers = {
        "get_device_properties": lambda device=None: props,
        "get_device_capability": lambda device=None: (props.major, props.minor),
        "get_device_name": lambda device=None: props.name,
        "get_arch_list": lambda: [arch],
    }
    if asked is not None:
        answers = {
            name: _recorded(answer, f"torch.cuda.{name}", asked) for name, answer in answers.items()
        }
    return _distinct(
        {
            **answers,
            "is_available": lambda: True,
            "is_initialized": lambda: True,
            "init": _none,
            "_lazy_init": _none,
            "device_count": lambda: 1,
            "current_device": lambda: 0,
            "set_device": _none,
            "device": _Nothing,
            "device_of": _Nothing,
            "is_bf16_supported": lambda including_emulation=True: True,
            "is_tf32_supported": lambda: True,
            "synchronize": _none,
            "ipc_collect": _none,
            "Event": Event,
            "Stream": Stream,
            "ExternalStream": type("ExternalStream", (Stream,), {}),
            "current_stream": lambda device=None: current["stream"],
            "default_stream": lambda device=None: default_stream,
            "set_stream": set_stream,
            "stream": stream,
            "StreamContext": _Nothing,
            "is_current_stream_capturing": lambda: False,
            "CUDAGraph": CUDAGraph,
            "graph": _Nothing,
            "manual_seed": _seed,
            "manual_seed_all": _seed,
            "seed": lambda: torch.seed(),
            "seed_all": lambda: torch.seed(),
            "initial_seed": lambda: torch.initial_seed(),
            "get_rng_state": lambda device="cuda": torch.get_rng_state(),
            "set_rng_state": lambda new_state, device="cuda": torch.set_rng_state(new_state),
            "get_rng_state_all": lambda: [torch.get_rng_state()],
            "set_rng_state_all": lambda states: torch.set_rng_state(states[0]),
            "empty_cache": _none,
            "memory_allocated": _zero,
            "max_memory_allocated": _zero,
            "memory_reserved": _zero,
            "max_memory_reserved": _zero,
            "memory_cached": _zero,
            "max_memory_cached": _zero,
            "reset_peak_memory_stats": _none,
            "reset_max_memory_allocated": _none,
            "reset_accumulated_memory_stats": _none,
            "memory_stats": lambda device=None: {},
            "memory_summary": lambda device=None, abbreviated=False: (
                "virtual GPU: no memory statistics (no GPU here)"
            ),
            "mem_get_info": lambda device=None: (props.total_memory, props.total_memory),
            "set_per_process_memory_fraction": _none,
        }
    )


def _recorded(answer, name: str, asked: set[str]):
    def ask(*args, **kwargs):
        asked.add(name)
        return answer(*args, **kwargs)

    return ask


def accelerator_namespace(cuda: dict[str, Any]) -> dict[str, Any]:
    """`torch.accelerator` (torch 2.6 on) for the same device."""
    return _distinct(
        {
            "is_available": lambda: True,
            "current_accelerator": lambda check_available=False: torch.device("cuda"),
            "device_count": lambda: 1,
            "current_device_index": lambda: 0,
            "current_device_idx": lambda: 0,
            "set_device_index": _none,
            "set_device_idx": _none,
            "device_index": _Nothing,
            "synchronize": _none,
            "current_stream": cuda["current_stream"],
            "set_stream": cuda["set_stream"],
            "empty_cache": _none,
            "memory_allocated": _zero,
            "max_memory_allocated": _zero,
            "memory_reserved": _zero,
            "max_memory_reserved": _zero,
            "reset_peak_memory_stats": _none,
        }
    )
