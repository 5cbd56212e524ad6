"""What each command does, as the worker runs it: `dump`, `report` and `diff` (run), `step`, `passes`,
`export`; and the command line's grammar (arguments), which the front end parses with too."""
