"""Analyses of compiled kernels: memory ops, marks, vectorization, occupancy (headless)."""
