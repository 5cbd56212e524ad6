"""A file that launched nothing on the default virtual GPU may be written for another GPU.

Files written for one GPU generation ask the device what it is and quietly do nothing elsewhere: Triton's
block-scaled matmul tutorial checks `torch.cuda.get_device_capability()[0] == 10` and, on the default
virtual H100 (sm_90), prints that it needs block scaling and launches nothing. A user with no GPU who did
not pick a target should not be stuck there. So when the run on the default target launched nothing and
the file asked the virtual GPU about itself (its capability, properties, name or architectures: the
virtual GPU records the questions), the file is run again, once per other NVIDIA target irscope has a
virtual GPU for, newest generation first (its data-center chip before its consumer one: sm_100, sm_120, sm_89,
sm_80), and the first run that launches is shown, with one note that says so.

Only on that path: a file that launched anything, that the user gave `--target`, that runs on a real
GPU, that runs with `--no-run`, or that the capture budget stopped is never run again; a run again that
is stopped before it launches (the limit inside a long setup) is the one shown, so that the error says
where it was stopped, and no later target is tried. A file that raised on the default target and launched
nothing anywhere is shown for the first target where it raised nothing (its kernels are launched by its
tests, or need arguments it does not give). A run again is the
same file executed again in the same process: the modules it imported stay imported, so a library that
chose its code path from the device when it was first imported keeps that choice.
"""

from __future__ import annotations

from typing import Callable

from irscope.base.names import TARGETS
from irscope.engine.capture.run import RunResult
from irscope.engine.triton_compat import Target

# a consumer chip -> the data-center chip of its generation, tried first: Blackwell files are written for the
# B200 (sm_100), whose tcgen05 and tensor memory the RTX 50 series (sm_120) does not have, and a file that
# checks `capability[0] >= 10` launched on sm_120 and failed to compile there (Gluon tutorial 12)
_DATA_CENTER_FIRST = {"sm_120": "sm_100"}


def other_targets(first: Target) -> list[Target]:
    """The NVIDIA targets with a virtual GPU other than `first`, newest generation first, its data-center
    chip before its consumer one."""
    names = [name for name in reversed(TARGETS) if name.startswith("sm_") and name != first.name]
    for consumer, data_center in _DATA_CENTER_FIRST.items():
        if consumer in names and data_center in names:
            names.remove(data_center)
            names.insert(names.index(consumer), data_center)
    return [Target(name) for name in names]


def worth_another_target(result: RunResult) -> bool:
    """The run launched nothing, ended by itself, and asked the device what it is."""
    return not result.launches and result.stopped is None and bool(result.asked)


def run_on_other_targets(
    shown: str, first: Target, result: RunResult, run: Callable[[Target], RunResult]
) -> tuple[Target, RunResult, str | None]:
    """(target, run, note): the first other target whose run launches, or `first` and its own run.

    `run(target)` runs the file on a virtual GPU of `target`. The note is one line for the report's notes:
    which target is shown and why, or which targets were tried in vain."""
    if not worth_another_target(result):
        return first, result, None
    asked = _asked(result)
    tried: list[str] = []
    # the first other target where it raised nothing
    ran_through: tuple[Target, RunResult] | None = None
    for target in other_targets(first):
        again = run(target)
        if again.error is None and ran_through is None:
            ran_through = (target, again)
        if again.launches:
            none_either = f" (nothing on {', '.join(tried)} either)" if tried else ""
            return (
                target,
                again,
                (
                    f"{shown} launched nothing on a virtual {first.name}, whose {asked} it asked; "
                    f"shown for a virtual {target.name}, where it launches{none_either}; "
                    f"--target to choose"
                ),
            )
        if again.stopped is not None:
            # stopped before it launched (the limit inside its setup, or on request): this is the run to
            # show, whose error says where it was stopped and how to give it longer; the targets after it
            # would be stopped too
            none_either = f" (nothing on {', '.join(tried)})" if tried else ""
            return (
                target,
                again,
                (
                    f"{shown} launched nothing on a virtual {first.name}, whose {asked} it asked; "
                    f"on a virtual {target.name} it was stopped ({again.stopped_cause}) before it "
                    f"launched anything{none_either}; --target to choose"
                ),
            )
        tried.append(target.name)
    if result.error is not None and ran_through is not None:
        # it raised on the default target only (a tutorial's "requires a Blackwell GPU"): the run that went
        # through is the truer one to show, launching nothing from its __main__ code there either
        target, again = ran_through
        return (
            target,
            again,
            (
                f"{shown} raised {type(result.error).__name__} on a virtual {first.name}, whose {asked} it "
                f"asked, and launched nothing on a virtual {', '.join(tried)}; on {target.name} it runs "
                f"through without an error, shown here; --target to choose"
            ),
        )
    return (
        first,
        result,
        (
            f"{shown} launched nothing on a virtual {first.name}, whose {asked} it asked, "
            f"nor on a virtual {', '.join(tried)}"
        ),
    )


def device_suffix(first: Target, chosen: Target) -> str:
    """What the device line adds when irscope chose the target."""
    return f"; irscope chose {chosen.name}: the file launched nothing on the default {first.name}"


def _asked(result: RunResult) -> str:
    return (
        "capability"
        if any("capability" in q or "arch_list" in q for q in result.asked)
        else "properties"
    )
