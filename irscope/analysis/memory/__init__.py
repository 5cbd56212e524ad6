"""Every load, store and atomic of a compiled kernel, stage by stage, and how wide each one is."""
