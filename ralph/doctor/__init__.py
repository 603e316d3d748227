"""Proving an install: which Claude Code client is installed and which hook
events it knows, and a real session of it against a stand-in Messages API
on loopback (`ralph doctor`, `ralph install`)."""
