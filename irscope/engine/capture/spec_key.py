"""What makes a launch new to the capture budget (budget.py): a cheap stand-in for the JIT's specialization.

On a GPU a repeat of a specialization already captured is not kept (capture.py), so the key may split
launches the JIT would compile alike (both are kept), but must never merge two it would compile apart."""

from __future__ import annotations

from typing import Any


def specialization_key(jit: Any, args: tuple, kwargs: dict, autotune_index: int | None) -> tuple:
    """A cheap stand-in for the JIT's specialization, enough to tell a new launch from a repeat: per
    argument its dtype and 16-byte alignment (tensors), whether it is 1 or a multiple of 16 (ints), or its
    value (anything else; constexprs and launch options such as num_warps always by value). It may tell
    apart launches the JIT would not (a GPU capture then keeps both); it must never merge two it would.

    Objects (a TensorDescriptor, a tuple of tensors) are keyed by their fields, never by `repr`: the repr of
    a descriptor prints its tensor, which is slow for a big one and runs torch's own Python code. Their fields
    other than tensors by value: a descriptor's block shape and layout are part of its type, so of the
    specialization (keyed as plain ints, Gluon tutorial 05's six block shapes of one matmul were one launch to
    irscope on an H200, and five of its compilations were not captured)."""
    params = list(getattr(jit, "params", None) or [])
    constexpr = {p.name for p in params if getattr(p, "is_constexpr", False)}
    runtime = {p.name for p in params} - constexpr
    names = [p.name for p in params]
    positional = tuple(
        _part(a, i >= len(names) or names[i] in constexpr) for i, a in enumerate(args)
    )
    return (
        id(jit),
        autotune_index,
        positional,
        tuple(sorted((k, _part(v, k not in runtime)) for k, v in kwargs.items())),
    )


def _part(value: Any, exact: bool, depth: int = 0) -> Any:
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        try:
            return (str(value.dtype), value.data_ptr() % 16 == 0)
        except Exception:  # noqa: BLE001 - an odd tensor-like: its type is enough
            return type(value).__name__
    if isinstance(value, int) and not isinstance(value, bool) and not exact:
        return ("int", value == 1, value % 16 == 0, -(2**31) <= value < 2**31)
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        text = repr(value)
        return text if len(text) <= 64 else (text[:64], hash(text))
    if depth >= 3:
        return type(value).__qualname__
    if isinstance(value, (tuple, list)):
        return (
            type(value).__name__,
            tuple(_part(v, exact, depth + 1) for v in value[:64]),
            len(value),
        )
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict) and fields:
        return (
            type(value).__qualname__,
            tuple(
                sorted((str(k), _part(v, True, depth + 1)) for k, v in list(fields.items())[:32])
            ),
        )
    try:
        text = str(value)  # a dtype, an enum, a constexpr wrapper: short and exact
    except Exception:  # noqa: BLE001
        return type(value).__qualname__
    return (type(value).__qualname__, text if len(text) <= 64 else (text[:64], hash(text)))
