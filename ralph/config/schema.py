"""The one schema of ralph.toml: the typed kinds, what a table declares (Key,
Table), and the one validator.

Every table is declared in ralph.config.tables, as pre-commit's clientlib
declares its hooks: every key with its default, its kind, the limits of its
value and a line of help, in one place. The validator checks a table against
those keys and says what is wrong and how to write it:
`<file>:<line>: [table] key: must be a whole number, got 'ten'`.

Kinds (a trailing "?" also allows None): "int", "number" (int or float),
"bool", "str" and "path" (non-empty strings), "text" (any string), "command"
(a string for /bin/sh or a list of strings), "choice:a|b", "strings" (a list
of non-empty strings), "paths" (the same, stripped), "words" (single words),
"regexes" (regular expressions), "hosts" (host names as the client's sandbox
takes them), "table" (a TOML table), "env" (a table of NAME = value) and
"tables" (an array of tables, checked by its own declaration). A table may
name kinds of its own (Table.kinds), whose checks its owner passes to
check_table.

Import-light: a hook validates one table on every tool call. The kinds that
need `re` (regexes, hosts) and the `file:line` locator (needed only when a
message is written) live in modules imported by name (ralph.plugins.load).
"""

from ralph.plugins import load

from ralph.config.value import ValueProblem, bad, bounds, strings


class ConfigError(ValueError):
    """A config that cannot be used; the message names the file and line."""


class Key:
    """One key of a table: its default, its kind, the limits of its value (a
    number: its minimum; a tuple: minimum and maximum; for a list, of its
    length) and one line of help for people."""

    __slots__ = ("default", "kind", "limits", "help")

    def __init__(self, default: object, kind: str, limits: "float | tuple[float, float] | None" = None, help: str = "") -> None:
        self.default = default
        self.kind = kind
        self.limits = limits
        self.help = help

    def __repr__(self) -> str:
        return f"Key({self.default!r}, {self.kind!r}, {self.limits!r})"


class Table:
    """One table of ralph.toml as ralph.config.tables declares it.

    name: as written in the file ("loop", "loop.stages", "hooks.<point>");
    array: written as [[name]]; variant: what tells this declaration from
    another of the same name (an action type: 'type = "webhook"'); kinds:
    the names of the table's own kinds, which its owner checks (it hands
    their checks to check_table: the event pattern of [[hooks.event]]);
    parts: the tables declared inside this one. What only the owner can
    tell (the loop's stages, the hook tables inside [hooks]) the owner
    checks itself: this package holds no owner's code."""

    __slots__ = ("name", "keys", "help", "array", "variant", "kinds", "parts")

    def __init__(self, name: str, keys: dict[str, Key], help: str, *, array: bool = False, variant: str = "",
                 kinds: tuple[str, ...] = (), parts: "tuple[Table, ...]" = ()) -> None:
        self.name = name
        self.keys = keys
        self.help = help
        self.array = array
        self.variant = variant
        self.kinds = kinds
        self.parts = parts

    def defaults(self) -> dict:
        return {key: declared.default for key, declared in self.keys.items()}

    def __repr__(self) -> str:
        shown = f"[[{self.name}]]" if self.array else f"[{self.name}]"
        return f"Table({shown}{' ' + self.variant if self.variant else ''})"


# ---- the kinds ----------------------------------------------------------


def _int(value: object, limits: object, key: str) -> object:
    if not isinstance(value, int) or isinstance(value, bool):
        raise bad("must be a whole number", value)
    return _within(value, limits)


def _number(value: object, limits: object, key: str) -> object:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise bad("must be a number", value)
    return _within(value, limits)


def _within(value: float, limits: object) -> float:
    low, high = bounds(limits, None)
    if low is not None and value < low or high is not None and value > high:
        raise bad(f"must be from {low:g} to {high:g}" if high is not None else f"must be >= {low:g}", value)
    return value


def _plain(right: object, what: str) -> object:
    """The check of a kind that is one test of the value: `right(value)`, else `what` is wrong."""
    def check(value: object, limits: object, key: str) -> object:
        if not right(value):  # type: ignore[operator]
            raise bad(what, value)
        return value
    return check


_non_empty = _plain(lambda value: isinstance(value, str) and value, "must be a non-empty string")


def _command(value: object, limits: object, key: str) -> object:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    raise bad("must be a non-empty string (run by /bin/sh) or a list of strings (run as is)", value)


def _paths(value: object, limits: object, key: str) -> tuple:
    return tuple(item.strip() for item in strings(value, limits, key))


def _words(value: object, limits: object, key: str) -> tuple:
    items = strings(value, limits, key)
    for item in items:
        if len(item.split()) != 1:
            raise ValueProblem(f'takes single words like "lfs", got {item!r}')
    return items


def _env(value: object, limits: object, key: str) -> object:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, (str, int, float, bool)) for k, v in value.items()):
        raise bad('must be a table of NAME = "value"', value)
    invalid = [k for k in value if not k or "=" in k or "\0" in k]
    if invalid:
        raise ValueProblem(f"has invalid variable names {invalid!r}")
    return value


# kind -> check(value, limits, key), which returns the value as the code
# uses it (lists as tuples) or raises ValueProblem; a "module:NAME" string is
# a check that needs `re`, imported (ralph.plugins.load) only for a table that sets it
KINDS: dict[str, object] = {
    "int": _int,
    "number": _number,
    "bool": _plain(lambda value: isinstance(value, bool), "must be true or false"),
    "str": _non_empty,
    "path": _non_empty,
    "text": _plain(lambda value: isinstance(value, str), "must be a string"),
    "command": _command,
    "strings": strings,
    "paths": _paths,
    "words": _words,
    "regexes": "ralph.config.patterns:regexes",
    "hosts": "ralph.config.patterns:hosts",
    "table": _plain(lambda value: isinstance(value, dict), "must be a table"),
    "env": _env,
}


def _choice(value: object, choices: list[str]) -> object:
    if value not in choices:
        raise bad("must be one of " + ", ".join(repr(c) for c in choices), value)
    return value


def checked_value(value: object, kind: str, limits: object, key: str, kinds: dict | None = None) -> object:
    """`value` as the code uses it (lists as tuples, paths and hosts
    stripped) if it is of `kind`, else ValueProblem saying what is wrong and
    how to write it. `kinds`: a table's own kinds, besides KINDS."""
    base = kind[:-1] if kind.endswith("?") else kind
    if value is None and base != kind:
        return None
    if base.startswith("choice:"):
        return _choice(value, base[len("choice:"):].split("|"))
    check = kinds.get(base) if kinds and base in kinds else KINDS[base]
    if isinstance(check, str):
        check = load(check)
    return check(value, limits, key)  # type: ignore[operator]


# ---- the validator --------------------------------------------------------


def check_keys(table: dict, keys: dict[str, Key], where: object, table_name: str) -> list[str]:
    """Every problem of the declared keys a table sets, each on its key's line
    (`where.key(name)`: ralph.config.locate.Where), as check_table words it."""
    errors: list[str] = []
    check_table(table, keys, where.key, f"[{table_name}]", errors)  # type: ignore[attr-defined]
    return errors


def check_table(table: dict, keys: dict[str, Key], where: object, heading: str, errors: list[str],
                kinds: dict | None = None, unknown: object = None) -> dict:
    """The checked values of the keys `table` sets, in its order. A value
    that is wrong is left out and its problem appended to `errors` as
    `{where(key)}: {heading} {key}: what is wrong`. A key `keys` does not
    declare is skipped, or reported as unknown(key) when given: each family
    of tables words that its own way. Keys of kind "tables" are left to their
    own declaration."""
    values: dict = {}
    for key, value in table.items():
        declared = keys.get(key)
        if declared is None:
            if unknown is not None:
                errors.append(unknown(key))  # type: ignore[operator]
            continue
        if declared.kind == "tables":
            continue
        try:
            values[key] = checked_value(value, declared.kind, declared.limits, key, kinds)
        except ValueProblem as e:
            errors.append(f"{where(key)}: {heading} {key}: {e}")  # type: ignore[operator]
    return values


def validate_table(table: dict, keys: dict[str, Key], path: str | None, table_name: str, occurrence: int = 0,
                   errors: list[str] | None = None) -> dict:
    """The checked values of `table` ([table_name] of the file at `path`, or
    its n-th [[table_name]]; only the keys it sets). Raises the first
    ConfigError, or, given `errors`, appends every one and skips the bad keys."""
    found: list[str] = []

    def unknown(key: str) -> str:
        known = ", ".join(sorted(keys))
        return f"{KeyLine(path, key, table_name, occurrence)}: [{table_name}] {key}: unknown key; known keys: {known}"

    values = check_table(table, keys, lambda key: KeyLine(path, key, table_name, occurrence), f"[{table_name}]", found,
                         unknown=unknown)
    if errors is not None:
        errors.extend(found)
    elif found:
        raise ConfigError(found[0])
    return values


# the locator (ralph.config.locate.key_line): it reads the file again, so only
# when a message is written
KEY_LINE = "ralph.config.locate:key_line"


class KeyLine:
    """`path:line` of a key in a table, looked up when it is formatted: a
    valid table costs no re-read of the file (the hooks validate [guard] on
    every call)."""

    __slots__ = ("args",)

    def __init__(self, path: str | None, key: str, table: str = "loop", occurrence: int = 0) -> None:
        self.args = (path, key, table, occurrence)

    def __str__(self) -> str:
        return load(KEY_LINE)(*self.args)  # type: ignore[operator]

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)
