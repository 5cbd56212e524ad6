"""The nouns every process shares, importable with the standard library alone: kernels, launches,
targets, errors, paths, stage names."""
