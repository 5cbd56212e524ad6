"""Stage and target names as plain data, importable without Triton or torch (the CLI and the TUI
start fast by importing only this until they need the engine)."""

IR_STAGES = ("ttir", "ttgir", "llir")
NVIDIA_STAGES = ("source", "ttir", "ttgir", "llir", "ptx", "sass")
AMD_STAGES = ("source", "ttir", "ttgir", "llir", "amdgcn")
ALL_STAGES = ("source", "ttir", "ttgir", "llir", "ptx", "sass", "amdgcn")
# Stages a kernel written in another front end never has, and why: Gluon builds TTGIR directly.
ABSENT_STAGES = {
    "gluon": {
        "ttir": "Gluon builds TTGIR directly, with the layouts its author wrote",
    },
}
# Why no program of a kernel written in another front end can be recorded in Triton's interpreter (what the
# coalescing from addresses, the stepper and `irscope step` need).
UNRECORDABLE = {
    "gluon": "not available for Gluon launches: Triton's interpreter does not run Gluon kernels, so no "
    "program of one can be recorded (no stepping; coalescing comes from the PTX, on NVIDIA targets)",
}
TARGETS = ("sm_80", "sm_89", "sm_90", "sm_100", "sm_120", "gfx942", "gfx950")
DEFAULT_TARGET = "sm_90"


def stages_of(nvidia: bool, language: str = "triton") -> tuple[str, ...]:
    """The stages a compilation has: its target family's (NVIDIA or AMD), less those its kernel's front end
    never makes (a Gluon kernel's TTIR: ABSENT_STAGES)."""
    family = NVIDIA_STAGES if nvidia else AMD_STAGES
    return tuple(s for s in family if absent_stage(s, language) is None)


def absent_stage(stage: str, language: str) -> str | None:
    """Why a kernel of `language` ("triton", "gluon") has no `stage`, or None where it has it (a clause:
    callers say "a Gluon kernel has no ttir: ..." around it)."""
    return ABSENT_STAGES.get(language, {}).get(stage)


def frontend_stage(stage_names: tuple[str, ...]) -> str:
    """Of a compilation's stages, the first IR, whose ops still read like the source: TTIR, or TTGIR for a
    Gluon kernel (which has no TTIR)."""
    return "ttir" if "ttir" in stage_names else "ttgir"


def unrecordable(language: str) -> str | None:
    """Why no program of a kernel of `language` can be recorded in the interpreter, or None where it can."""
    return UNRECORDABLE.get(language)


def target_name(name: str) -> str:
    """A `--target` as the user typed it (`SM90`, ` gfx942 `) in its canonical form (`sm_90`, `gfx942`),
    or ValueError naming the choices."""
    normal = name.strip().lower()
    if normal.startswith("sm") and not normal.startswith("sm_"):
        normal = "sm_" + normal[2:]
    if normal not in TARGETS:
        raise ValueError(f"unknown target '{name}'; choose one of: {', '.join(TARGETS)}")
    return normal
