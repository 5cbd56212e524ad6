"""`e`: the values of the compilation shown that the user may change (constexprs, the ints the JIT
folded into the code, num_warps / num_stages), checked before anything compiles, and the way back to
the launch's own values.

A value of the wrong kind would otherwise reach the compiler and come back as an internal error far
from the field (`abc` for an int constexpr: "'str' object has no attribute 'dtype'"); here it is one
line naming the field and what it wants, and nothing compiles. (The dialog is `screens.EditScreen`;
the main screen opens it and applies its answer.)
"""

from __future__ import annotations

import ast
from typing import Any

RESET = "reset"  # what the dialog answers for "back to the launch's own values"
MAX_WARPS = 32  # 1024 threads, the most a block may have


def parse(text: str) -> Any:
    """What the user typed, as a Python literal when it is one, else as the text itself."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def check(name: str, text: str, old: Any, kind: str) -> tuple[Any, str]:
    """(the value, "") or (None, one line saying what is wrong with field `name`)."""
    text = text.strip()
    if not text:
        return None, f"{name}: empty — type a value (it was {old!r}), or Esc to cancel"
    value = parse(text)
    if kind == "launch option":
        if not _is_int(value):
            return None, f"{name}: {text!r} is not a whole number (it was {old!r})"
        if name == "num_warps" and not (1 <= value <= MAX_WARPS and value & (value - 1) == 0):
            return None, f"num_warps: {value} is not a power of two from 1 to {MAX_WARPS}"
        if name == "num_stages" and value < 0:
            return None, f"num_stages: {value} is negative"
        return value, ""
    if isinstance(old, bool):
        if not isinstance(value, bool):
            return None, f"{name}: {text!r} is not True or False (it was {old!r})"
    elif isinstance(old, int):
        if not _is_int(value):
            return None, f"{name}: {text!r} is not a whole number (it was {old!r})"
    elif isinstance(old, float):
        if not (_is_int(value) or isinstance(value, float)):
            return None, f"{name}: {text!r} is not a number (it was {old!r})"
        value = float(value)
    elif isinstance(old, str) and not isinstance(value, str):
        value = text  # a dtype or a name: the worker reads the text
    return value, ""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def fields(comp) -> tuple[dict[str, Any], dict[str, str]]:
    """The dialog's fields for compilation `comp`: each value the user may change, and what it is
    (shown after its name)."""
    folded = [name for name, kind in comp.specialization.items() if kind == "constant"]
    constexprs = comp.constexprs
    values: dict[str, Any] = {name: v for name, v in constexprs.items() if name not in folded}
    kinds = dict.fromkeys(values, "constexpr")
    for name in folded:  # ordinary arguments: the JIT folded their value (an int 1) into the code
        values[name] = constexprs[name]
        kinds[name] = f"argument; the JIT folded its value {constexprs[name]!r} into the code"
    values["num_warps"] = comp.num_warps
    values["num_stages"] = comp.num_stages
    kinds["num_warps"] = kinds["num_stages"] = "launch option"
    return values, kinds
