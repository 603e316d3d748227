"""The Claude Code side: the hook dispatcher (dispatch.py, the hot path), the protocol's types, one handler per event, and users' own commands on Claude Code events."""
