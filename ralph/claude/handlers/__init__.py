"""One module per hook event; each exposes `handle(call) -> Outcome`."""
