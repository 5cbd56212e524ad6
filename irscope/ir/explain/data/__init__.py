"""irscope's notes on each dialect, one module per dialect, written from the vendors' manuals.

Each module holds plain dicts; the explainer modules one level up turn them into sentences for a line.
"""
