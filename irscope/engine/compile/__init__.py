"""Compiling a captured launch exactly as the JIT would, for a target; ahead of time, again, pass by pass."""
