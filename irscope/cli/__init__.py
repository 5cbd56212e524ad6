"""The command line's front end: parse, check what needs neither torch nor Triton, and start a worker
(or the terminal UI); `check` starts a worker per file."""
