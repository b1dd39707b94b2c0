"""Links to a board: what --port names, the port lock, the raw REPL, the protocol line,
an emulated board's side channel."""
