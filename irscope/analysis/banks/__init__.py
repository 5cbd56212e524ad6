"""Shared-memory bank conflicts, predicted from the PTX and the launch."""
