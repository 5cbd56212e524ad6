"""The worker's side: the only layer that imports torch and Triton. It runs the user's file, captures
its launches and compiles them (see docs/architecture.md)."""
