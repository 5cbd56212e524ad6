"""What the capture is doing on this thread: recording launches or not, running them or not, inside which
autotune config, inside a benchmark's sweep. capture.py sets it; compiled.py reads it too (a kernel called by
hand runs unrecorded), which is why it lives apart from both."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from irscope.engine.triton_compat.capture import RawLaunch
    from irscope.engine.triton_compat.own_tuners import OwnTuning


class _CaptureState(threading.local):
    autotune: tuple[int, int] | None = None  # (config index, number of configs)
    first: bool = False  # the config being recorded is the first the autotuner would try
    configs: list[Any] | None = None
    execute: bool = True
    record: bool = True
    # an autotuned launch's per-config records, for a failure to land on
    recorded: list[RawLaunch] | None = None
    # the numbers of the configs the autotuner would try for this launch
    tried: tuple[int, ...] = ()
    # False: a launch is recorded, not run (a benchmark sweep's later points)
    run_launches: bool = True
    # True: a launch is made by irscope's exploration of a sweep (capture.launches_explored)
    explored: bool = False
    # what differs from the tuning key's first launch in the constexprs the key leaves out (RawLaunch.reused_choice)
    reused_choice: tuple = ()
    # inside an autotuner's own run (own_tuners.py): the configs it benchmarked, the launches recorded for it
    tuning: OwnTuning | None = None


capture_state = _CaptureState()
