"""Stage and target names as plain data, importable without Triton or torch (the CLI and the TUI
start fast by importing only this until they need the engine)."""

IR_STAGES = ("ttir", "ttgir", "llir")
NVIDIA_STAGES = ("source", "ttir", "ttgir", "llir", "ptx", "sass")
AMD_STAGES = ("source", "ttir", "ttgir", "llir", "amdgcn")
ALL_STAGES = ("source", "ttir", "ttgir", "llir", "ptx", "sass", "amdgcn")
TARGETS = ("sm_80", "sm_89", "sm_90", "sm_100", "sm_120", "gfx942", "gfx950")
DEFAULT_TARGET = "sm_90"
