"""The guard's bash parser: its lexer (tokens and words) and its grammar (the syntax tree)."""
