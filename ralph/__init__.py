"""ralph-hooks: Claude Code hook handlers and the ralph-loop story runner."""
__version__ = "0.1.0"
