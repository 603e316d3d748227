"""A command as /bin/sh reads it back and as people read it: shlex.quote
without shlex, which imports `re`: `ralph-loop --dry-run`
renders prompts and checks hook commands, and would pay for it."""
from __future__ import annotations

# shlex.quote's safe characters (`[\w@%+=:,./-]`, ASCII)
SHELL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-")


def shell_quote(word: str) -> str:
    """shlex.quote(word): the word as /bin/sh reads it back, quoted only when it must be."""
    if not word:
        return "''"
    if all(char in SHELL_SAFE for char in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def format_command(command: list[str] | str | None) -> str:
    if command is None:
        return "(none configured)"
    if isinstance(command, str):
        return command
    return " ".join(shell_quote(word) for word in command)
