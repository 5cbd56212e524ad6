"""irscope: see what the Triton compiler does to a kernel, and why its memory access is fast or slow."""

__version__ = "0.1.0"
