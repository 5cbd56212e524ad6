"""On a GPU: the device memory that captured launches hold, let go of before it crowds out the file.

Each kept launch keeps its tensors, so that it can later be stepped in the interpreter, measured and written
out as a reproducer with the values the file gave it. A file that benchmarks big inputs one after another then
runs the GPU out of memory under irscope though not without it: Gluon tutorial 02 makes a 16 GB pair of
tensors for each of its memcpy layouts and drops each pair before the next; holding them, irscope's run on an
H200 (140 GB) ended in CUDA out-of-memory at the ninth, and the rest of the file was never reached.

So at each capture on a GPU, when less than a quarter of the device's memory is left to the file, the
tensors of earlier launches are replaced, largest first, by stand-ins in host memory: the same dtype, shape,
strides, storage offset and alignment (so the JIT specializes them alike), reading as zeros, their pages taken
only where written. A tensor the file still holds frees nothing when let go of and is kept as it is.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Callable

import torch

# The share of the device's memory kept free for the file's own allocations.
_FREE_SHARE = 0.25


@dataclasses.dataclass
class Released:
    """What was let go of in a run: per kernel, its launches whose tensors are now stand-ins, and the bytes."""

    launches: dict[str, int] = dataclasses.field(default_factory=dict)
    bytes: int = 0

    def note(self) -> str | None:
        if not self.launches:
            return None
        kernels = ", ".join(
            f"{name} x{count}" if count > 1 else name for name, count in self.launches.items()
        )
        count = sum(self.launches.values())
        return (
            f"irscope let go of the GPU tensors of {count} captured launch{'es' if count > 1 else ''} "
            f"({self.bytes / 2**30:.1f} GiB, the file no longer holding them: {kernels}) to leave a quarter of "
            "the GPU's memory to the file; stepping or measuring them reads zeros of the same shapes"
        )


def stand_in(tensor: torch.Tensor) -> torch.Tensor:
    """A host tensor that the JIT specializes as it does `tensor`: its dtype, shape, strides, storage offset
    and the data pointer's alignment, over fresh memory that reads as zeros.

    A GPU allocation starts on a 512-byte boundary and a host one on 64 bytes, so the offset into the storage
    gives both the same remainder modulo 16, which is all the JIT looks at."""
    storage_elements = max(tensor.untyped_storage().nbytes() // tensor.element_size(), 1)
    storage = torch.empty(storage_elements, dtype=tensor.dtype, device="cpu")
    if storage.nbytes < 1 << 25:  # small: it may reuse freed memory, which is not zero
        storage.zero_()
    standing_in = storage.as_strided(tensor.shape, tensor.stride(), tensor.storage_offset())
    standing_in.released_from = str(
        tensor.device
    )  # where a relaunch puts it back (triton_compat/measure.py)
    return standing_in


def _tensors_in(value: Any) -> list[torch.Tensor]:
    """The tensors an argument holds: itself, or the fields of a descriptor-like dataclass."""
    if isinstance(value, torch.Tensor):
        return [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [
            field
            for field in (getattr(value, f.name, None) for f in dataclasses.fields(value))
            if isinstance(field, torch.Tensor)
        ]
    return []


def _swapped(value: Any, swaps: dict[int, torch.Tensor]) -> Any:
    """`value` with each tensor whose id is in `swaps` replaced (a dataclass copied with its fields replaced)."""
    if isinstance(value, torch.Tensor):
        return swaps.get(id(value), value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {
            f.name: swaps[id(getattr(value, f.name))]
            for f in dataclasses.fields(value)
            if isinstance(getattr(value, f.name, None), torch.Tensor)
            and id(getattr(value, f.name)) in swaps
        }
        if fields:
            try:
                return dataclasses.replace(value, **fields)
            except (TypeError, ValueError):  # a field not in __init__: leave it whole
                return value
    return value


def _on_device(tensor: torch.Tensor) -> bool:
    return tensor.device.type != "cpu"


class HeldMemory:
    """The captured launches of one run, as seen by the memory they hold on the device."""

    def __init__(self, left_to_file: Callable[[], bool] | None = None) -> None:
        # left_to_file(): whether enough of the device's memory is left to the file (`enough_left`)
        self.left_to_file = left_to_file or enough_left
        self.launches: list[Any] = []  # RawLaunch-like: .jit, .args, .kwargs
        self.released = Released()

    def captured(self, launch: Any) -> None:
        """A launch was kept: let go of earlier launches' tensors while the file is short of memory. The new
        launch is about to run with its tensors and keeps them."""
        if self.launches and not self.left_to_file():
            self._release_until_enough()
        self.launches.append(launch)

    def _release_until_enough(self) -> None:
        for size, watch in self._device_tensors():
            if self.left_to_file():
                return
            if self._release(watch):
                self.released.bytes += size

    def _device_tensors(self) -> list[tuple[int, weakref.ref]]:
        """The kept launches' device tensors, each once, largest storage first, watched: a reference held
        here would keep each alive."""
        sizes: dict[int, tuple[int, weakref.ref]] = {}
        for launch in self.launches:
            for value in (*launch.args, *launch.kwargs.values()):
                for tensor in _tensors_in(value):
                    if _on_device(tensor):
                        sizes[id(tensor)] = (tensor.untyped_storage().nbytes(), weakref.ref(tensor))
        return sorted(sizes.values(), key=lambda item: -item[0])

    def _release(self, watch: weakref.ref) -> bool:
        """Replace the watched tensor by its stand-in in every kept launch; True if that freed it. A tensor the
        file still holds frees nothing: it goes back in place, with its values."""
        tensor = watch()
        if tensor is None:
            return False
        replacement = stand_in(tensor)
        holders = self._swap({id(tensor): replacement})
        del tensor
        still_held = watch()
        if still_held is not None:
            self._swap({id(replacement): still_held})
            return False
        for launch in holders:
            if not getattr(launch, "inputs_released", False):
                launch.inputs_released = True
                name = getattr(launch.jit, "__name__", "kernel")
                self.released.launches[name] = self.released.launches.get(name, 0) + 1
        return True

    def _swap(self, swaps: dict[int, torch.Tensor]) -> list[Any]:
        """Put each swap's tensor in place of the tensor with its id, in every kept launch; the launches
        changed."""
        changed = []
        for launch in self.launches:
            args = tuple(_swapped(value, swaps) for value in launch.args)
            kwargs = {name: _swapped(value, swaps) for name, value in launch.kwargs.items()}
            if any(a is not b for a, b in zip(args, launch.args)) or any(
                kwargs[name] is not value for name, value in launch.kwargs.items()
            ):
                launch.args, launch.kwargs = args, kwargs
                changed.append(launch)
        return changed


def enough_left() -> bool:
    """Whether a quarter of the current device's memory is free for the file, counting what PyTorch's caching
    allocator holds unused (it hands that out first)."""
    try:
        free, total = torch.cuda.mem_get_info()
        unused_cache = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
    except Exception:  # noqa: BLE001 - no CUDA in this torch (a file on a GPU through another framework)
        return True
    return free + unused_cache >= _FREE_SHARE * total
