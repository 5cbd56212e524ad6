"""What the command line says about a kernel's arguments (`-D NAME=VALUE`, `--arg NAME=TYPE`), and the
arguments made from it: stand-in values for a kernel the file did not launch, or a captured launch's
arguments with the overrides applied.

Apart from `session` (opening a file) and `workspace` (its launches), which both apply them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

import torch

from irscope.base.errors import IrscopeError
from irscope.base.model import Kernel
from irscope.engine.capture.discover import UserFile
from irscope.engine.triton_compat import RawLaunch, bind_arguments


@dataclass
class Overrides:
    """What the command line says about arguments: `-D NAME=VALUE` and `--arg NAME=TYPE`."""

    defines: dict[str, Any] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, defines: list[str] | None, args: list[str] | None) -> "Overrides":
        return cls(
            {k: literal_value(v) for k, v in map(_split_assignment("-D"), defines or [])},
            dict(map(_split_assignment("--arg"), args or [])),
        )

    def __bool__(self) -> bool:
        return bool(self.defines or self.args)

    def describe(self) -> str:
        """As typed on the command line: `-D BLOCK=64 --arg n=i32` ("" for none)."""
        return " ".join(
            [f"-D {k}={v}" for k, v in self.defines.items()]
            + [f"--arg {k}={v}" for k, v in self.args.items()]
        )


def _split_assignment(flag: str):
    def split(text: str) -> tuple[str, str]:
        name, sep, value = text.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise IrscopeError(
                f"{flag} {text!r} is not NAME=VALUE; write it like {flag} "
                f"{'BLOCK_SIZE=1024' if flag == '-D' else 'x_ptr=*fp16'}"
            )
        return name.strip(), value.strip()

    return split


def literal_value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


_TORCH_DTYPES = {
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp32": torch.float32,
    "fp64": torch.float64,
    "i8": torch.int8,
    "i16": torch.int16,
    "i32": torch.int32,
    "i64": torch.int64,
    "u8": torch.uint8,
    "i1": torch.bool,
    "u1": torch.bool,
    "fp8e4nv": torch.float8_e4m3fn,
    "fp8e5": torch.float8_e5m2,
}
# A scalar of each type whose value the JIT cannot specialize on (not 1, not a multiple of 16).
_SCALAR_STANDINS = {
    "i32": 3,
    "i64": 2**33 + 3,
    "u64": 2**63 + 3,
    "fp32": 1.5,
    "fp64": 1.5,
    "u1": False,
    "i1": False,
}


def value_for_type(name: str, kind: str) -> Any:
    """A stand-in argument the JIT specializes the way the type says: pointers are small CPU tensors
    (16-byte aligned, as every allocator gives), scalars are values with no special divisibility."""
    if kind.startswith("*"):
        dtype = _TORCH_DTYPES.get(kind[1:])
        if dtype is None:
            raise IrscopeError(
                f"--arg {name}={kind}: unknown pointer type; use one of "
                f"{', '.join('*' + t for t in _TORCH_DTYPES)}"
            )
        return torch.empty(64, dtype=dtype)
    if kind in _SCALAR_STANDINS:
        return _SCALAR_STANDINS[kind]
    value = literal_value(kind)
    if isinstance(value, (int, float, bool)):
        return value  # a concrete value: the JIT specializes on it exactly as on a real launch
    raise IrscopeError(
        f"--arg {name}={kind}: give a type (*fp32, *fp16, i32, i64, fp32) or a number"
    )


def annotated_type(annotation: Any) -> str | None:
    """A parameter's annotation as a type irscope can stand in for (`*fp16`, `i32`), if it is one."""
    text = str(annotation or "").replace("tl.", "").replace("triton.language.", "")
    if text.startswith("*") and text[1:] in _TORCH_DTYPES:
        return text
    names = {"int32": "i32", "int64": "i64", "float32": "fp32", "float64": "fp64", "uint64": "u64"}
    text = names.get(text, text)
    return text if text in _SCALAR_STANDINS else None


def check_arg_names(overrides: Overrides, kernels: list[Kernel], user_file: UserFile) -> None:
    """An --arg must name a kernel parameter (a typo would otherwise be ignored without a word)."""
    params = {p.name for k in kernels for p in k.jit.params}
    unknown = [name for name in overrides.args if name not in params]
    if unknown:
        raise IrscopeError(
            f"--arg {unknown[0]}: no kernel in {user_file.shown} has a parameter of that name; "
            f"its parameters: {', '.join(sorted(params))}"
        )


def launch_arguments(raw: RawLaunch, overrides: Overrides) -> tuple[tuple, dict]:
    """A captured launch's arguments, with the command line's -D/--arg applied. A launch that left out a
    parameter (its JIT rejects it, and the error says to give it with -D) is bound as far as it goes."""
    if not overrides:
        return raw.args, raw.kwargs
    bound = bind_arguments(raw.jit, raw.args, raw.kwargs, partial=True)
    for name, value in overrides.defines.items():
        bound[name] = value
    for name, kind in overrides.args.items():
        if name in bound:
            bound[name] = value_for_type(name, kind)
    return (), bound
