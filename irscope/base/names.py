"""Stage and target names as plain data, importable without Triton or torch (the CLI and the TUI
start fast by importing only this until they need the engine)."""

IR_STAGES = ("ttir", "ttgir", "llir")
NVIDIA_STAGES = ("source", "ttir", "ttgir", "llir", "ptx", "sass")
AMD_STAGES = ("source", "ttir", "ttgir", "llir", "amdgcn")
ALL_STAGES = ("source", "ttir", "ttgir", "llir", "ptx", "sass", "amdgcn")
TARGETS = ("sm_80", "sm_89", "sm_90", "sm_100", "sm_120", "gfx942", "gfx950")
DEFAULT_TARGET = "sm_90"


def target_name(name: str) -> str:
    """A `--target` as the user typed it (`SM90`, ` gfx942 `) in its canonical form (`sm_90`, `gfx942`),
    or ValueError naming the choices."""
    normal = name.strip().lower()
    if normal.startswith("sm") and not normal.startswith("sm_"):
        normal = "sm_" + normal[2:]
    if normal not in TARGETS:
        raise ValueError(f"unknown target '{name}'; choose one of: {', '.join(TARGETS)}")
    return normal
