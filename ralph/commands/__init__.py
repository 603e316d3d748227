"""One module per non-hook command; each exposes `main(argv) -> int`."""
