"""Where a table or key sits in a TOML file: `file:line` for messages
(tomllib reports no positions).

A table header and a key line are what these regular expressions define
(group 2 of HEADER is the table's name, group 1 of KEY the key), matched by
hand (header_name(), key_name(); tests/test_lifecycle_hand_parsers.py holds
them to the expressions): `re` would cost `ralph-loop --dry-run` more than
this.
"""
from ralph.state.locations import CONFIG_FILE

HEADER = r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$"
KEY = r"^\s*[\"']?([A-Za-z0-9_\-]+)[\"']?\s*="
KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def header_name(line: str) -> str | None:
    """HEADER's group 2 for a line without line breaks, None when it does not match."""
    start = len(line) - len(line.lstrip())  # `\s` is str.isspace(), as strip() uses
    if not line.startswith("[", start):
        return None
    # `\[\[?` takes `[[` when it can, and gives one back when the rest fails
    for opened in ((start + 2, start + 1) if line.startswith("[", start + 1) else (start + 1,)):
        close = line.find("]", opened)
        if close < 0:
            return None
        inside = line[opened:close]
        if not inside:
            continue
        after = close + 2 if line.startswith("]", close + 1) else close + 1
        rest = line[after:].lstrip()
        if rest and not rest.startswith("#"):
            continue
        # `\s*` greedy, then the lazy name, then `\s*`: the name is the inside
        # without its blanks, or the last blank of an inside made of blanks
        return inside.strip() or inside[-1]
    return None


def key_name(line: str) -> str | None:
    """KEY's group 1 for a line without line breaks, None when it does not match."""
    start = len(line) - len(line.lstrip())
    if line.startswith(('"', "'"), start):
        start += 1
    end = start
    while end < len(line) and line[end] in KEY_CHARS:
        end += 1
    if end == start:
        return None
    equals = end + 1 if line.startswith(('"', "'"), end) else end
    return line[start:end] if line[equals:].lstrip().startswith("=") else None


def dotted_key(line: str) -> str | None:
    """The key of a line `a.b = ...` (bare or quoted parts, blanks around the
    dots) as "a.b"; None when the line holds no dotted key."""
    parts = []
    rest = line.lstrip()
    while True:
        if rest[:1] in ('"', "'"):
            close = rest.find(rest[0], 1)
            if close < 0:
                return None
            parts.append(rest[1:close])
            rest = rest[close + 1:].lstrip()
        else:
            end = 0
            while end < len(rest) and rest[end] in KEY_CHARS:
                end += 1
            if end == 0:
                return None
            parts.append(rest[:end])
            rest = rest[end:].lstrip()
        if rest.startswith("."):
            rest = rest[1:].lstrip()
            continue
        return ".".join(parts) if len(parts) > 1 and rest.startswith("=") else None


def dotted_name(name: str) -> str:
    """re.sub(r"\\s*\\.\\s*", ".", name): blanks around each dot dropped."""
    parts = name.split(".")
    if len(parts) == 1:
        return name
    return ".".join([parts[0].rstrip(), *(part.strip() for part in parts[1:-1]), parts[-1].lstrip()])


class Where(str):
    """`file:line` of a table; .key(name) is the line of one of its keys."""

    keys: dict[str, int]
    path: str
    table: str

    def __new__(cls, path: str, line: int | None, keys: dict[str, int] | None = None, table: str = "hooks") -> "Where":
        self = super().__new__(cls, f"{path}:{line}" if line else path)
        self.path = path
        self.keys = keys or {}
        self.table = table  # "hooks.post_iteration": for messages
        return self

    def key(self, name: str) -> str:
        line = self.keys.get(name)
        return f"{self.path}:{line}" if line else str(self)


class Locator:
    """The lines of the tables in one TOML file and of their keys: .tables
    maps a table's name (dots without blanks, quotes dropped) to its
    (header line, {key: first line}) in file order; keys before any header
    are the table "". A dotted key (`loop.plan = ...`) is kept whole."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.tables: dict[str, list[tuple[int, dict[str, int]]]] = {}
        current: dict[str, int] = {}
        self.tables[""] = [(0, current)]
        for number, line in enumerate(text.splitlines(), 1):
            header = header_name(line)
            if header is not None:
                name = dotted_name(header).replace('"', "").replace("'", "")
                current = {}
                self.tables.setdefault(name, []).append((number, current))
                continue
            key = key_name(line)
            if key is None and "." in line:
                key = dotted_key(line)
            if key is not None and key not in current:
                current[key] = number

    def where(self, table: str, occurrence: int) -> Where:
        """The n-th [table] (or [[table]]) and its keys."""
        found = self.tables.get(table, [])
        if occurrence < len(found):
            line, keys = found[occurrence]
            return Where(self.path, line, keys, table)
        # inline arrays (post_iteration = [{...}]): point at the key in [hooks]
        for _, keys in self.tables.get("hooks", []):
            name = table.split(".", 1)[-1]
            if name in keys:
                return Where(self.path, keys[name], None, table)
        return Where(self.path, None, None, table)

    def settings_where(self) -> Where:
        found = self.tables.get("hooks", [])
        return Where(self.path, found[0][0], found[0][1]) if found else Where(self.path, None)

    def key_line(self, key: str, table: str = "loop", occurrence: int = 0) -> str:
        """`path:line` of `key` inside [table] (or the n-th [[table]]; table ""
        is the top level, where `key` is a table or a key); the table's header
        when the key is not in it, the file when neither is found."""
        if not table:
            found = self.tables.get(key)
            if found:
                return f"{self.path}:{found[0][0]}"
            line = self.tables[""][0][1].get(key)
            return f"{self.path}:{line}" if line else self.path
        found = self.tables.get(table, [])
        header = 0
        if occurrence < len(found):
            header, keys = found[occurrence]
            if key in keys:
                return f"{self.path}:{keys[key]}"
            if occurrence:  # a key missing from a [[loop.stages]] table: point at the table
                return f"{self.path}:{header}"
        dotted = self.tables[""][0][1].get(f"{table}.{key}")  # loop.max_iterations = 3, at the top level
        if dotted:
            return f"{self.path}:{dotted}"
        return f"{self.path}:{header}" if header else self.path


def key_line(path: str | None, key: str, table: str = "loop", occurrence: int = 0) -> str:
    """Locator.key_line() of the file at `path`, read now (for a message);
    the file itself when it cannot be read."""
    if not path:
        return CONFIG_FILE
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return path
    return Locator(path, text).key_line(key, table, occurrence)
