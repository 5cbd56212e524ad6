"""What Nsight Compute measured, read and put beside irscope's own lines (no GPU needed to read it)."""
