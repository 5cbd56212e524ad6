"""Coalescing: how many 32-byte sectors each warp-level load or store pulls, from real addresses,
and why, in words."""
