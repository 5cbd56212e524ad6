"""Progress a long command says while it works (`report --measure`: minutes of runs under Nsight Compute).

The command runs in a worker whose stderr is buffered and returned with its answer; a step said here goes
to the front end at once instead (the worker points `sink` at its result pipe), and the front end writes it
to its stderr as it comes. Without a worker (a test calling the CLI in-process) it goes to stderr."""

from __future__ import annotations

import sys
from typing import Callable

sink: Callable[[str], None] | None = None


def tell(text: str) -> None:
    if sink is not None:
        sink(text)
    else:
        print(text, file=sys.stderr, flush=True)
