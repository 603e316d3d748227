"""The message for a table nobody declares: its `file:line`, the known
tables, and "did you mean" for a near miss. Imported by name (ralph.plugins.load)
only when a file holds such a table: difflib brings `re`."""
import difflib

from ralph.config import registry
from ralph.config.locate import key_line


def unknown_table(name: str, path: str | None) -> str:
    """`file:line: [name]: unknown table; ...` naming the known tables."""
    known = sorted(registry.SECTIONS)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean [{close[0]}]? " if close else ""
    return f"{key_line(path, name, '')}: [{name}]: unknown table; {hint}known tables: {', '.join(known)}"


def unknown_tables(names: list[str], path: str | None) -> str:
    """One message for every unknown table of a file: for a hook's log."""
    return "; ".join(unknown_table(name, path) for name in names) + "; ignored"
