"""One parser per IR dialect. Each turns a stage's text into per-line kinds and raw location chains.

A parser returns a `Parsed`: for every line of `text.splitlines()`, its LineKind and its raw chain of
source frames (innermost first, library frames included), or None. `sourcemap.py` then keeps the frames
that lie in the user's file.
"""
