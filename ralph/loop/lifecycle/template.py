"""Template variables in hook commands: `{{iteration}}`, `{{task_id}}`, ... and
`${ITERATION}`-style names for the same values.

User text (story titles, errors, file names) never reaches the shell as code:
a placeholder is rewritten into a *quoted reference* to the environment
variable that already carries the value ("${RALPH_STORY_TITLE}"), chosen for
the quoting context it sits in. The shell expands a variable's value without
parsing it again, so `$(rm -rf ~)` in a title stays text. For people (`ralph
hooks test`, traces) the same command is shown with the values shell-quoted.

`{{name}}` belongs to ralph: an unknown name is a config error. `${NAME}` is
substituted when NAME is a context variable; any other `${HOME}` is left for
the shell to expand from the environment, as users expect of a shell
command. `${RALPH_...}` with an unknown name is a config error (a typo).
"""
from __future__ import annotations

from ralph.loop.identifiers import name_end
from ralph.loop.lifecycle.context import TEMPLATE_ALIASES, VARIABLES, key_for
from ralph.quoting import shell_quote

# A placeholder, as this regular expression defines it; matched by hand
# (placeholder_at(); tests/test_lifecycle_hand_parsers.py holds it to the
# expression) because `ralph-loop --dry-run` checks every hook's templates
# and importing `re` would cost it more than the checking.
PLACEHOLDER = r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|\$\{([A-Za-z_][A-Za-z0-9_]*)\}"


def placeholder_at(text: str, index: int) -> tuple[int, str, bool] | None:
    """(end, name, braces_form) of the PLACEHOLDER matching at index, None when none does."""
    if text.startswith("{{", index):
        start = index + 2
        while start < len(text) and text[start].isspace():  # `\s` is str.isspace()
            start += 1
        end = name_end(text, start)
        if end == start:
            return None
        close = end
        while close < len(text) and text[close].isspace():
            close += 1
        return (close + 2, text[start:end], True) if text.startswith("}}", close) else None
    if text.startswith("${", index):
        end = name_end(text, index + 2)
        if end > index + 2 and end < len(text) and text[end] == "}":
            return end + 1, text[index + 2:end], False
    return None


def env_name(key: str) -> str:
    spec = VARIABLES.get(key)
    return spec[0] if spec else "RALPH_" + key.upper()


def scan(command: str) -> list[tuple[int, int, str, bool, str]]:
    """(start, end, name, braces_form, quote_state) of each placeholder, where
    quote_state is "" (unquoted), "'" or '"' as /bin/sh would see it there."""
    found = []
    state = ""
    i = 0
    n = len(command)
    while i < n:
        m = placeholder_at(command, i)
        if m is not None:
            end, name, mustache = m
            found.append((i, end, name, mustache, state))
            i = end
            continue
        char = command[i]
        if state == "'":
            if char == "'":
                state = ""
        elif char == "\\":
            i += 1  # the escaped character is literal (outside quotes and inside "...")
        elif state == '"':
            if char == '"':
                state = ""
        elif char in "'\"":
            state = char
        i += 1
    return found


def check(command: str, exports: dict[str, str] | None = None) -> list[str]:
    """Problems with the command's placeholders (empty when it is fine)."""
    problems = []
    for _, _, name, mustache, _ in scan(command):
        key = key_for(name, exports)
        if key is None and (mustache or name.upper().startswith("RALPH_")):
            shown = "{{" + name + "}}" if mustache else "${" + name + "}"
            problems.append(f"unknown template variable {shown}; known: {', '.join(known_names())}")
    return problems


def known_names() -> list[str]:
    return ["{{" + k + "}}" for k in [*VARIABLES, *TEMPLATE_ALIASES]]


def substitute(command: str, render: object, exports: dict[str, str] | None = None) -> str:
    """Replace every known placeholder by render(key, quote_state)."""
    out = []
    last = 0
    for start, end, name, mustache, state in scan(command):
        key = key_for(name, exports)
        if key is None:
            continue  # ${HOME}: the shell's
        out.append(command[last:start])
        out.append(render(key, state))  # type: ignore[operator]
        last = end
    out.append(command[last:])
    return "".join(out)


def for_shell(command: str, exports: dict[str, str] | None = None) -> str:
    """The command /bin/sh runs: placeholders become quoted variable references."""
    def render(key: str, state: str) -> str:
        ref = "${" + env_name(key) + "}"
        if state == '"':
            return ref
        if state == "'":
            return "'\"" + ref + "\"'"
        return '"' + ref + '"'

    return substitute(command, render, exports)


def for_people(command: str, values: dict[str, str], exports: dict[str, str] | None = None) -> str:
    """The command with each value shell-quoted in place (what it means)."""
    def render(key: str, state: str) -> str:
        quoted = shell_quote(values.get(key, ""))
        return state + quoted + state if state else quoted

    return substitute(command, render, exports)


def json_value(text: str, values: dict[str, str], exports: dict[str, str] | None = None) -> str:
    """Plain substitution of the values (for actions that escape by format,
    e.g. a webhook body encoded as JSON afterwards). Never for shell text."""
    return substitute(text, lambda key, state: values.get(key, ""), exports)
