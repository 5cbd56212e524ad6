"""The terminal UI (Textual), a front end: it imports no torch, no Triton and no `irscope.engine` (the
contracts in pyproject.toml), and nothing below it imports this package."""
