"""Adding a flag to the agent's command line, the one way every feature does
it: only when the command starts Claude Code, only when the flag is absent
(a person's own flags win), right after the `claude` word, each word quoted
for /bin/sh when the command is a string. No other surgery on the person's
command."""
from __future__ import annotations

import os
import re
import shlex

from ralph.loop.sandbox_layer import CLAUDE_WORD, runs_claude

__all__ = ["runs_claude", "flag_value", "has_flag", "with_flags"]


def _flag_pattern(flag: str) -> re.Pattern:
    return re.compile(r"(?:(?<=^)|(?<=\s))" + re.escape(flag) + r"(?:=|\s+|$)('[^']*'|\"[^\"]*\"|[^\s;&|]*)")


def flag_value(command: list[str] | str, flag: str) -> str | None:
    """The value the command gives `flag` ("" for a flag without one), or None when it is absent."""
    if isinstance(command, list):
        for number, word in enumerate(command):
            if word == flag:
                following = command[number + 1] if number + 1 < len(command) else ""
                return "" if following.startswith("-") else following
            if word.startswith(flag + "="):
                return word.split("=", 1)[1]
        return None
    m = _flag_pattern(flag).search(command)
    if m is None:
        return None
    value = m.group(1)
    if value.startswith("-"):
        return ""
    try:
        words = shlex.split(value)
    except ValueError:
        return value
    return words[0] if words else ""


def has_flag(command: list[str] | str, flag: str) -> bool:
    return flag_value(command, flag) is not None


def with_flags(command: list[str] | str, *words: str) -> list[str] | str:
    """`words` (a flag and its value) put right after the `claude` word of a
    command that runs Claude Code; the command as it is otherwise."""
    if not words or not runs_claude(command):
        return command
    if isinstance(command, list):
        at = next(i for i, word in enumerate(command) if os.path.basename(word) == "claude")
        return [*command[: at + 1], *words, *command[at + 1:]]
    m = CLAUDE_WORD.search(command)
    assert m is not None
    return command[: m.end()] + " " + " ".join(shlex.quote(word) for word in words) + command[m.end():]
